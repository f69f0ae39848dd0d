#!/usr/bin/env node
// `npm start`'s build: every project tsconfig.json references, src/**/*.ts → dist/**/*.js with a
// source map, through swc with the transform the tests run (scripts/swc-options.js). Only files
// whose source is newer than their output are written. It checks no types: tsc does (`npm test`,
// `npm run build`, the images), and its build replaces these files. On two cores `tsc -b` of the
// whole workspace takes over a minute, this a few seconds (docs/running-locally.md).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { swcOptions } = require('./swc-options');
const { sourceFiles } = require('./source-files');

const repo = path.resolve(__dirname, '..');

/** The projects tsc -b builds from `root`'s tsconfig.json, in its order: directory, rootDir, outDir, module type. */
function projects(root = repo) {
  const { references } = JSON.parse(fs.readFileSync(path.join(root, 'tsconfig.json'), 'utf8'));
  return references.map(({ path: dir }) => {
    const config = JSON.parse(fs.readFileSync(path.join(root, dir, 'tsconfig.json'), 'utf8'));
    const options = config.compilerOptions ?? {};
    const pkg = JSON.parse(fs.readFileSync(path.join(root, dir, 'package.json'), 'utf8'));
    return {
      dir,
      src: path.join(root, dir, options.rootDir ?? 'src'),
      out: path.join(root, dir, options.outDir ?? 'dist'),
      module: pkg.type === 'module' ? 'es6' : 'commonjs',
    };
  });
}

const mtime = (file) => { try { return fs.statSync(file).mtimeMs; } catch { return -1; } };

/** Transpiles what changed under `root` (this repository); resolves with how many files were written. */
async function transpile({ root = repo } = {}) {
  const swc = require('@swc/core');
  const jobs = [];
  for (const project of projects(root)) {
    for (const source of sourceFiles(project.src)) {
      const output = path.join(project.out, path.relative(project.src, source)).replace(/\.ts$/, '.js');
      if (mtime(output) >= mtime(source)) continue;
      jobs.push(async () => {
        const { code, map } = await swc.transformFile(source, {
          ...swcOptions(project.module),
          sourceMaps: true,
          // The map names the source as tsc's does: relative to the output's folder.
          sourceFileName: path.relative(path.dirname(output), source),
          inlineSourcesContent: false,
          swcrc: false,
          configFile: false,
        });
        fs.mkdirSync(path.dirname(output), { recursive: true });
        fs.writeFileSync(`${output}.map`, map);
        fs.writeFileSync(output, `${code}\n//# sourceMappingURL=${path.basename(output)}.map\n`);
      });
    }
  }
  // swc transforms on its own threads; a bounded number in flight keeps memory flat.
  let next = 0;
  const worker = async () => { while (next < jobs.length) await jobs[next++](); };
  await Promise.all(Array.from({ length: 16 }, worker));
  return jobs.length;
}

module.exports = { transpile, projects };

if (require.main === module) {
  const started = Date.now();
  transpile().then(
    (count) => process.stderr.write(`transpiled ${count} files in ${((Date.now() - started) / 1000).toFixed(1)} s\n`),
    (error) => { process.stderr.write(`${error.stack ?? error}\n`); process.exit(1); },
  );
}
