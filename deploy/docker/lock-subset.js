#!/usr/bin/env node
/**
 * `node lock-subset.js <committed-lock> <lock>`: fails unless every package of <lock> is in
 * <committed-lock> at the same version and integrity. The Dockerfile's production installs drop
 * the workspaces' devDependencies first (npm installs a workspace's devDependencies even with
 * --omit=dev), which rewrites the lock; this proves they still installed nothing but what the
 * committed lock pins.
 */
'use strict';
const fs = require('node:fs');

const [committedFile, lockFile] = process.argv.slice(2);
if (!committedFile || !lockFile) {
  process.stderr.write('usage: lock-subset.js <committed-lock> <lock>\n');
  process.exit(2);
}
const committed = JSON.parse(fs.readFileSync(committedFile, 'utf8')).packages || {};
const lock = JSON.parse(fs.readFileSync(lockFile, 'utf8')).packages || {};
const drift = Object.entries(lock)
  .filter(([key, pkg]) => key !== '' && !pkg.link && !(key in committed && committed[key].version === pkg.version && committed[key].integrity === pkg.integrity))
  .map(([key, pkg]) => `${key}@${pkg.version}`);
if (drift.length > 0) {
  process.stderr.write(`installed packages the committed lock does not pin:\n  ${drift.join('\n  ')}\n`);
  process.exit(1);
}
