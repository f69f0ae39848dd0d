#!/usr/bin/env node
// Where a process's CPU went, by package: reads V8 .cpuprofile files (node --cpu-prof) and prints
// each one's self time grouped by npm package, Node.js internals, or this repository's package
// (gateway/dist, services/…), largest first. Used to profile a benchmark's processes:
//
//   NODE_OPTIONS="--cpu-prof --cpu-prof-dir=/tmp/prof" npm run bench -- mcp
//   node scripts/cpu-profile-summary.js /tmp/prof [--top 20] [--match gateway/dist/main.js]
//
// `--match` keeps only profiles whose scripts include that path (e.g. the gateway's).
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const top = Number(option('--top', '20'));
const match = option('--match', '');
const target = args.find((a, i) => !a.startsWith('--') && !['--top', '--match'].includes(args[i - 1]));
if (!target) {
  console.error('usage: node scripts/cpu-profile-summary.js <dir or .cpuprofile> [--top N] [--match path]');
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
  let total = 0;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    total += us;
    const name = category(nodes.get(id).callFrame);
    self.set(name, (self.get(name) ?? 0) + us);
  });
  const busy = total - (self.get('(idle)') ?? 0);
  console.log(`${path.basename(file)}: ${(total / 1e3).toFixed(0)} ms sampled, ${(busy / 1e3).toFixed(0)} ms busy`);
  for (const [name, us] of [...self].filter(([n]) => n !== '(idle)').sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`  ${((100 * us) / busy).toFixed(1).padStart(5)}% of busy  ${name}`);
  }
}
