#!/usr/bin/env node
// Where a process's CPU went, by package: reads V8 .cpuprofile files (node --cpu-prof) and prints
// each one's self time grouped by npm package, Node.js internals, or this repository's package
// (gateway/dist, services/…), largest first. Used to profile a benchmark's processes:
//
//   NODE_OPTIONS="--cpu-prof --cpu-prof-dir=/tmp/prof" npm run bench -- mcp
//   node scripts/cpu-profile-summary.js /tmp/prof [--top 20] [--match gateway/dist/main.js]
//
// `--match` keeps only profiles whose scripts include that path (e.g. the gateway's).
// `--window 6-18,45-58` counts only samples taken in those seconds from the profile's start, so
// one target of a benchmark that loads its targets in turn is summed alone; `--timeline mcp/`
// finds those seconds: busy ms per second, and how many samples ran under a script whose path
// holds that text. Divide a window's busy ms by the requests served in it for CPU per request.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const top = Number(option('--top', '20'));
const match = option('--match', '');
const windows = option('--window', '')
  .split(',')
  .filter(Boolean)
  .map((w) => w.split('-').map(Number));
const timeline = option('--timeline', '');
const target = args.find((a, i) => !a.startsWith('--') && !['--top', '--match', '--window', '--timeline'].includes(args[i - 1]));
if (!target) {
  console.error('usage: node scripts/cpu-profile-summary.js <dir or .cpuprofile> [--top N] [--match path] [--window A-B,C-D] [--timeline text]');
  process.exit(2);
}
const files = fs.statSync(target).isDirectory() ? fs.readdirSync(target).filter((f) => f.endsWith('.cpuprofile')).map((f) => path.join(target, f)) : [target];

/** The package a frame's script belongs to. */
function category(frame) {
  const url = frame.url;
  if (!url) return frame.functionName || '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const own = /\/((?:services|gateway|app|proto|launcher|bench)(?:\/[^/]+)?)\/dist\//.exec(url);
  return own ? `${own[1]}/dist` : url;
}

for (const file of files) {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
  if (match && !profile.nodes.some((n) => n.callFrame.url.includes(match))) continue;
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  /** Whether a frame of the sample's stack runs a script whose path holds `text`. */
  const under = (id, text) => {
    for (let at = id; at !== undefined; at = parent.get(at)) if (nodes.get(at).callFrame.url.includes(text)) return true;
    return false;
  };
  const perSecond = [];
  let total = 0;
  let t = 0;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    t += us;
    const second = Math.floor(t / 1e6);
    if (windows.length && !windows.some(([from, to]) => second >= from && second <= to)) return;
    total += us;
    const name = category(nodes.get(id).callFrame);
    self.set(name, (self.get(name) ?? 0) + us);
    if (timeline && name !== '(idle)') {
      const row = (perSecond[second] ??= { busy: 0, marked: 0 });
      row.busy += us;
      if (under(id, timeline)) row.marked += us;
    }
  });
  const busy = total - (self.get('(idle)') ?? 0);
  console.log(`${path.basename(file)}: ${(total / 1e3).toFixed(0)} ms sampled, ${(busy / 1e3).toFixed(0)} ms busy${windows.length ? ` in seconds ${option('--window', '')}` : ''}`);
  if (timeline) {
    console.log(`  second: busy ms / ms under "${timeline}"`);
    console.log(`  ${perSecond.map((row, second) => `${second}: ${(row.busy / 1e3).toFixed(0)}/${(row.marked / 1e3).toFixed(0)}`).filter(Boolean).join('  ')}`);
  }
  for (const [name, us] of [...self].filter(([n]) => n !== '(idle)').sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`  ${((100 * us) / busy).toFixed(1).padStart(5)}% of busy  ${(us / 1e3).toFixed(0).padStart(6)} ms  ${name}`);
  }
}
