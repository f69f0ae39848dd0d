#!/usr/bin/env node
// Generates proto/src/gen with buf + ts-proto (both from npm, no network).
// `--check` generates into a temporary folder and fails when the committed code is stale.
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const protoDir = path.resolve(__dirname, '..', 'proto');
const buf = path.resolve(__dirname, '..', 'node_modules', '.bin', 'buf');
const check = process.argv.includes('--check');

function generate(outDir) {
  fs.rmSync(outDir, { recursive: true, force: true });
  const template = fs.readFileSync(path.join(protoDir, 'buf.gen.yaml'), 'utf8').replace('out: src/gen', `out: ${outDir}`);
  execFileSync(buf, ['generate', '--template', template], { cwd: protoDir, stdio: 'inherit' });
}

function listFiles(dir, base = dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? listFiles(p, base) : [path.relative(base, p)];
  }).sort();
}

const committed = path.join(protoDir, 'src', 'gen');
if (!check) {
  generate(committed);
  process.exit(0);
}
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'murmur-proto-'));
generate(path.join(tmp, 'gen'));
const fresh = listFiles(path.join(tmp, 'gen'));
const have = fs.existsSync(committed) ? listFiles(committed) : [];
const stale = [...new Set([...fresh, ...have])].filter((f) => {
  const a = path.join(tmp, 'gen', f);
  const b = path.join(committed, f);
  return !fs.existsSync(a) || !fs.existsSync(b) || !fs.readFileSync(a).equals(fs.readFileSync(b));
});
fs.rmSync(tmp, { recursive: true, force: true });
if (stale.length > 0) {
  console.error(`Generated code is stale; run \`npm run proto:gen\` and commit:\n  ${stale.join('\n  ')}`);
  process.exit(1);
}
console.log(`proto: ${fresh.length} generated files are up to date`);
