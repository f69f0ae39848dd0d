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
// The transcription service decodes with ffmpeg and recognises with Debian's pocketsphinx.
// On a Debian machine where we are root (a fresh dev box, CI) they are installed here;
// elsewhere a warning says what to install (everything but transcription works without them).
const speech = [
  ['ffmpeg', () => has('ffmpeg')],
  ['pocketsphinx', () => has('pocketsphinx_continuous')],
  ['pocketsphinx-en-us', () => fs.existsSync('/usr/share/pocketsphinx/model/en-us')],
];
// `--test`: the speech test set too (recordings with their texts, and a speech synthesizer).
if (process.argv.includes('--test')) {
  speech.push(['pocketsphinx-testdata', () => fs.existsSync('/usr/share/pocketsphinx/test/data/librivox')]);
  speech.push(['espeak-ng', () => has('espeak-ng')]);
}
function has(cmd) {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const missing = speech.filter(([, ok]) => !ok()).map(([name]) => name);
if (missing.length > 0 && !process.argv.includes('--no-system')) {
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  if (root && has('apt-get')) {
    say(`Installing ${missing.join(', ')} (apt-get)…`);
    try {
      execFileSync('sh', ['-c', `apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${missing.join(' ')}`], { stdio: ['ignore', 'ignore', 'inherit'] });
    } catch {
      say(`Could not install ${missing.join(', ')}; transcription will be unavailable.`);
    }
  } else {
    say(`Transcription needs ${missing.join(', ')}: sudo apt-get install -y ${missing.join(' ')}`);
  }
}

if (!process.argv.includes('--no-build')) {
  say('Building (tsc -b)…');
  run(path.join(root, 'node_modules', '.bin', 'tsc'), ['-b']);
}
