#!/usr/bin/env node
// Runs before `npm start`, `npm test` and `npm run admin`: installs dependencies when
// node_modules is missing or older than package-lock.json, then builds (tsc -b, incremental)
// unless --no-build. Plain JavaScript on purpose: it must run before anything is installed.
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const quiet = process.argv.includes('--quiet');
const say = (m) => { if (!quiet) process.stderr.write(`${m}\n`); };
const run = (cmd, args) => execFileSync(cmd, args, { cwd: root, stdio: ['ignore', quiet ? 'ignore' : 'inherit', 'inherit'] });

const [major] = process.versions.node.split('.').map(Number);
if (major < 20) {
  console.error(`Murmur needs Node.js 20 or newer; this is ${process.version}.`);
  process.exit(1);
}

const lock = path.join(root, 'package-lock.json');
const installed = path.join(root, 'node_modules', '.package-lock.json');
if (!fs.existsSync(installed) || fs.statSync(installed).mtimeMs < fs.statSync(lock).mtimeMs) {
  // `npm install` with the committed lock (not `npm ci`: npm/cli#4828 makes it refuse lock files
  // written on one platform).
  say('Installing dependencies (npm install)…');
  run('npm', ['install', '--no-audit', '--no-fund']);
}
if (!process.argv.includes('--no-build')) {
  say('Building (tsc -b)…');
  run(path.join(root, 'node_modules', '.bin', 'tsc'), ['-b']);
}
