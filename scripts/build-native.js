#!/usr/bin/env node
// Builds the transcription service's native helper, services/transcription/native/ps-live.c (live
// transcription on Debian's libpocketsphinx), into services/transcription/native/build/ps-live
// when the source is newer than the binary. Plain JavaScript, like ensure-ready.js (which calls
// it): it runs on the machine's own Node.js (20 or newer) before anything is installed. Without a
// C compiler or the pocketsphinx headers it says what to install in one line and exits 0: only
// live transcription needs the binary, and it names the missing build when asked for.
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const dir = path.resolve(__dirname, '..', 'services', 'transcription', 'native');
const source = path.join(dir, 'ps-live.c');
const binary = path.join(dir, 'build', 'ps-live');
const quiet = process.argv.includes('--quiet');
const say = (m) => { if (!quiet) process.stderr.write(`${m}\n`); };
/** The Debian packages the build needs (ensure-ready.js installs them with the others). */
const PACKAGES = 'gcc pkg-config libpocketsphinx-dev libsphinxbase-dev';

const mtime = (file) => { try { return fs.statSync(file).mtimeMs; } catch { return -1; } };
if (mtime(binary) >= mtime(source)) process.exit(0);

let flags;
try {
  execFileSync('cc', ['--version'], { stdio: 'ignore' });
  flags = execFileSync('pkg-config', ['--cflags', '--libs', 'pocketsphinx', 'sphinxbase'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim().split(/\s+/);
} catch {
  say(`Not building ${path.relative(process.cwd(), binary)} (live transcription): no C compiler or pocketsphinx headers; install them with: sudo apt-get install -y ${PACKAGES}`);
  process.exit(0);
}
say('Building the live recognizer (cc ps-live.c)…');
fs.mkdirSync(path.dirname(binary), { recursive: true });
// Built beside the binary and renamed over it, so a running stream never sees half a file.
const partial = `${binary}.${process.pid}.tmp`;
try {
  execFileSync('cc', ['-O2', '-Wall', '-o', partial, source, ...flags, '-lm'], { stdio: ['ignore', 'inherit', 'inherit'] });
  fs.renameSync(partial, binary);
} catch (err) {
  fs.rmSync(partial, { force: true });
  console.error(`Building ${binary} failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
