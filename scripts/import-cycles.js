#!/usr/bin/env node
// Import cycles among the TypeScript files of a source folder: `node scripts/import-cycles.js [DIR...]`
// (default: the src/ of every workspace package in package.json — proto, services/*, gateway, app,
// launcher, bench). Two files that import each other — type-only imports and
// `export … from` included, because a circle of types is still a circle a reader must untangle —
// are one cycle. Relative imports are followed; package imports (`@murmur/kit`, `pg`) are not:
// a package is a node of its own, and tsc's project references already refuse cycles between them.
//
// Exit 0 when there is none, 1 with one line per cycle ("a.ts → b.ts → a.ts") otherwise.
// As a module: findImportCycles(dir) → string[][] (each cycle as paths relative to `dir`),
// used by scripts/test/import-cycles.test.ts.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript');
const { sourceFiles } = require('./source-files');

const REPO = path.resolve(__dirname, '..');

/** The file a relative specifier names, as tsc resolves it (x.ts, or x/index.ts); undefined for a package. */
function resolveRelative(from, specifier, known) {
  if (!specifier.startsWith('.')) return undefined;
  const base = path.resolve(path.dirname(from), specifier.replace(/\.js$/, ''));
  for (const candidate of [`${base}.ts`, path.join(base, 'index.ts'), base]) {
    if (known.has(candidate)) return candidate;
  }
  return undefined;
}

/** file → the files of the same folder tree it imports (static, dynamic, type-only and re-exports). */
function importGraph(dir) {
  const files = sourceFiles(dir);
  const known = new Set(files);
  const graph = new Map();
  for (const file of files) {
    const info = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
    const targets = new Set();
    for (const ref of info.importedFiles) {
      const target = resolveRelative(file, ref.fileName, known);
      if (target) targets.add(target);
    }
    graph.set(file, [...targets].sort());
  }
  return graph;
}

/**
 * The strongly connected components with more than one file (or a file importing itself), by
 * Tarjan's algorithm: every file of such a component reaches every other through imports.
 */
function cyclicComponents(graph) {
  let counter = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const components = [];
  const visit = (node) => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node), low.get(next)));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node), index.get(next)));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) components.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return components;
}

/** One concrete circle through a component, starting at its first file: a → … → a. */
function circleThrough(component, graph) {
  const members = new Set(component);
  const start = component[0];
  const previous = new Map([[start, undefined]]);
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift();
    for (const next of graph.get(node) ?? []) {
      if (!members.has(next)) continue;
      if (next === start) {
        const circle = [start];
        for (let at = node; at !== undefined && at !== start; at = previous.get(at)) circle.splice(1, 0, at);
        return [...circle, start];
      }
      if (!previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  return [...component, start];
}

/** Each import cycle under `dir`, as a circle of paths relative to `dir` (first file repeated last). */
function findImportCycles(dir) {
  const graph = importGraph(dir);
  return cyclicComponents(graph).map((component) => circleThrough(component, graph).map((file) => path.relative(dir, file)));
}

/** <package>/src of every workspace package of the root package.json that has one. */
function packageSourceDirs() {
  const { workspaces } = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8'));
  return workspaces
    .map((workspace) => path.join(REPO, workspace, 'src'))
    .filter((dir) => fs.existsSync(dir) && fs.statSync(dir).isDirectory())
    .sort();
}

module.exports = { findImportCycles, packageSourceDirs };

if (require.main === module) {
  const dirs = process.argv.length > 2 ? process.argv.slice(2).map((d) => path.resolve(d)) : packageSourceDirs();
  let found = 0;
  for (const dir of dirs) {
    for (const cycle of findImportCycles(dir)) {
      found += 1;
      console.log(`${path.relative(REPO, dir)}: ${cycle.join(' → ')}`);
    }
  }
  process.exit(found > 0 ? 1 : 0);
}
