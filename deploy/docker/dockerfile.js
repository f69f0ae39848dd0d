/**
 * A small reader of the repository's Dockerfile — enough for the checks that the Helm chart's
 * images and the build agree with the repository (deploy/helm/check.js and
 * deploy/helm/test/dockerfile.test.ts): stages with their base and instructions, line
 * continuations joined, comments and the parser directive skipped. Not a general Dockerfile
 * parser: heredocs and escape-character directives are refused.
 */
'use strict';

/**
 * @typedef {{ keyword: string, args: string, flags: Record<string, string>, line: number }} Instruction
 * @typedef {{ name: string, from: string, line: number, instructions: Instruction[] }} Stage
 */

/** @param {string} text @returns {{ args: Record<string, string>, stages: Stage[] }} */
function parseDockerfile(text) {
  const lines = text.split('\n');
  /** @type {Stage[]} */
  const stages = [];
  /** @type {Record<string, string>} */
  const globalArgs = {};
  let i = 0;
  while (i < lines.length) {
    const start = i + 1;
    let line = lines[i] ?? '';
    i++;
    if (/^\s*#/.test(line) || line.trim() === '') {
      if (/^#\s*escape\s*=/.test(line)) throw new Error(`Dockerfile:${start}: escape directives are not supported`);
      continue;
    }
    while (/\\\s*$/.test(line) && i < lines.length) {
      const next = lines[i] ?? '';
      i++;
      if (/^\s*#/.test(next)) continue;
      line = line.replace(/\s*\\\s*$/, ' ') + next.trim();
    }
    const m = /^\s*([A-Za-z]+)\s*(.*)$/.exec(line);
    if (!m) throw new Error(`Dockerfile:${start}: cannot read "${line}"`);
    const keyword = (m[1] ?? '').toUpperCase();
    let rest = (m[2] ?? '').trim();
    if (rest.includes('<<')) throw new Error(`Dockerfile:${start}: heredocs are not supported`);
    /** @type {Record<string, string>} */
    const flags = {};
    let f;
    while ((f = /^--([a-z-]+)(?:=(\S+))?\s*/.exec(rest))) {
      flags[f[1] ?? ''] = f[2] ?? 'true';
      rest = rest.slice(f[0].length);
    }
    if (keyword === 'FROM') {
      const from = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest);
      if (!from) throw new Error(`Dockerfile:${start}: bad FROM "${rest}"`);
      stages.push({ name: (from[2] ?? `stage${stages.length}`).toLowerCase(), from: from[1] ?? '', line: start, instructions: [] });
      continue;
    }
    const stage = stages[stages.length - 1];
    if (!stage) {
      if (keyword !== 'ARG') throw new Error(`Dockerfile:${start}: ${keyword} before the first FROM`);
      const a = /^([A-Za-z_][A-Za-z0-9_]*)(?:=(.*))?$/.exec(rest);
      if (!a) throw new Error(`Dockerfile:${start}: bad ARG "${rest}"`);
      globalArgs[a[1] ?? ''] = a[2] ?? '';
      continue;
    }
    stage.instructions.push({ keyword, args: rest, flags, line: start });
  }
  return { args: globalArgs, stages };
}

/** The exec-form JSON array of a CMD/ENTRYPOINT, or null for the shell form. */
function execForm(args) {
  if (!args.startsWith('[')) return null;
  const parsed = JSON.parse(args);
  if (!Array.isArray(parsed) || !parsed.every((a) => typeof a === 'string')) throw new Error(`not an exec-form array: ${args}`);
  return parsed;
}

module.exports = { parseDockerfile, execForm };
