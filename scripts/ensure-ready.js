#!/usr/bin/env node
// Runs before `npm start`, `npm test` and `npm run admin`: installs dependencies when
// node_modules is missing or older than package-lock.json (or always, with --install), and the
// system packages beside it, then builds what changed unless --no-build: with swc (no type check,
// seconds: scripts/transpile.js), or with `tsc -b` given --tsc. Plain JavaScript on purpose: it must run before
// anything is installed, on the machine's own Node.js (20 or newer); everything after it runs on
// the Node.js 24 that the install brings (the `node` devDependency, first on npm scripts' PATH).
'use strict';
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const quiet = process.argv.includes('--quiet');
const say = (m) => { if (!quiet) process.stderr.write(`${m}\n`); };
const run = (cmd, args, options = {}) => execFileSync(cmd, args, { cwd: root, stdio: ['ignore', quiet ? 'ignore' : 'inherit', 'inherit'], ...options });

const [major] = process.versions.node.split('.').map(Number);
if (major < 20) {
  console.error(`Murmur needs Node.js 20 or newer to install itself (it then runs on the Node.js 24 it installs); this is ${process.version}.`);
  process.exit(1);
}
const lock = path.join(root, 'package-lock.json');
const installed = path.join(root, 'node_modules', '.package-lock.json');
const bootstrapDir = path.join(root, 'node_modules', '.cache', 'murmur-node');
/**
 * PATH with the locked Node.js first. On a machine whose own Node.js is older, npm would warn
 * about every package that needs the newer one (EBADENGINE): so before the first install, that
 * Node.js alone (no engines of its own) goes into node_modules/.cache/murmur-node, and npm (a
 * `#!/usr/bin/env node` script) then runs on it (the install removes it again).
 */
function runtimePath() {
  const bin = path.join(root, 'node_modules', '.bin');
  const PATH = `${bin}${path.delimiter}${process.env.PATH ?? ''}`;
  const wanted = JSON.parse(fs.readFileSync(lock, 'utf8')).packages?.['node_modules/node']?.version;
  if (!wanted || major >= Number(wanted.split('.')[0]) || nodeVersion(path.join(bin, 'node')) === wanted) return PATH;
  const cached = path.join(bootstrapDir, 'node_modules', '.bin', 'node');
  if (nodeVersion(cached) !== wanted) {
    say(`Fetching Node.js ${wanted} (npm install node@${wanted})…`);
    fs.rmSync(bootstrapDir, { recursive: true, force: true });
    fs.mkdirSync(bootstrapDir, { recursive: true });
    // The `node` package fetches its platform's binary in a preinstall script: allowed by name.
    const manifest = { private: true, dependencies: { node: wanted }, allowScripts: { node: true } };
    fs.writeFileSync(path.join(bootstrapDir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    run('npm', ['install', '--no-audit', '--no-fund', '--no-package-lock', '--silent'], { cwd: bootstrapDir, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  return `${path.dirname(cached)}${path.delimiter}${PATH}`;
}

/** The version of the node binary at `file`, or undefined when there is none that runs. */
function nodeVersion(file) {
  try {
    return execFileSync(file, ['-p', 'process.versions.node'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}
// The transcription service decodes with ffmpeg and recognises with Debian's pocketsphinx.
// `--test` adds what the tests need beyond that, so that `npm test` on a fresh machine runs
// every test rather than failing or skipping some (CI fails on a skipped test:
// scripts/test/allowed-skips.json). On a Debian machine where we are root (a fresh dev box, CI)
// they are installed here; elsewhere one line says what to install.
/** [Debian package, whether it is here, what needs it]. */
const system = [
  ['ffmpeg', () => has('ffmpeg'), 'transcription'],
  ['pocketsphinx', () => has('pocketsphinx_continuous'), 'transcription'],
  ['pocketsphinx-en-us', () => fs.existsSync('/usr/share/pocketsphinx/model/en-us'), 'transcription'],
  // Live transcription's recognizer is a small C program on libpocketsphinx (build-native.js).
  ['gcc', () => has('cc'), 'transcription'],
  ['pkg-config', () => has('pkg-config'), 'transcription'],
  ['libpocketsphinx-dev', () => fs.existsSync('/usr/include/pocketsphinx/pocketsphinx.h'), 'transcription'],
  ['libsphinxbase-dev', () => sphinxbaseHeaders(), 'transcription'],
];
if (process.argv.includes('--test')) {
  system.push(
    // The speech test set: recordings with their texts, and a speech synthesizer.
    ['pocketsphinx-testdata', () => fs.existsSync('/usr/share/pocketsphinx/test/data/librivox'), 'the speech tests'],
    ['espeak-ng', () => has('espeak-ng'), 'the speech tests'],
    // tar -cjf makes the release archive the diarization model tests serve.
    ['bzip2', () => has('bzip2'), 'the diarization model tests'],
    // The app's page tests run in Debian's Chromium (playwright-core drives it; nothing downloaded).
    ['chromium', () => has('chromium'), 'the page tests'],
    // A redis-server of a test's own where REDIS_URL is unset (caches, revocation, rate limits, fault tests).
    ['redis-server', () => has('redis-server'), 'the Redis tests'],
    // A Postgres cluster of a test's own (pg_createcluster; fault tests, races, job replicas).
    ['postgresql', () => has('pg_createcluster') && fs.existsSync('/usr/lib/postgresql'), 'the Postgres tests'],
    ['openssl', () => has('openssl'), 'the workload-key tests'],
    // The Helm chart check builds its renderer from Debian's Go packages (deploy/helm/lib/renderer.js).
    ...require('../deploy/helm/lib/renderer').APT_PACKAGES.map((name) => [name, () => helmPackageHere(name), 'the Helm chart test']),
  );
}
function has(cmd) {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
/** sphinxbase's headers sit under the architecture's include folder (/usr/include/x86_64-linux-gnu/sphinxbase). */
function sphinxbaseHeaders() {
  try {
    return ['', ...fs.readdirSync('/usr/include')].some((d) => fs.existsSync(path.join('/usr/include', d, 'sphinxbase', 'fe.h')));
  } catch {
    return false;
  }
}
function helmPackageHere(name) {
  if (name === 'golang-go') return has('go');
  const source = { 'golang-github-masterminds-sprig-dev': 'github.com/Masterminds/sprig', 'golang-gopkg-yaml.v3-dev': 'gopkg.in/yaml.v3' }[name];
  return source ? fs.existsSync(`/usr/share/gocode/src/${source}`) : true;
}
const missing = system.filter(([, here]) => !here());
/** The system packages' install, running beside npm's (apt and npm fetch and unpack in parallel). */
let systemInstall = Promise.resolve();
if (missing.length > 0 && !process.argv.includes('--no-system')) {
  const names = missing.map(([name]) => name).join(' ');
  const needers = [...new Set(missing.map(([, , what]) => what))].join(', ');
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  if (root && has('apt-get')) {
    say(`Installing ${names} (apt-get), for ${needers}…`);
    const apt = spawn('sh', ['-c', `apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${names}`], { stdio: ['ignore', 'ignore', 'inherit'] });
    systemInstall = new Promise((resolve) => {
      const failed = () => { say(`Could not install ${names}; ${needers} will fail or be skipped until they are.`); resolve(); };
      apt.on('error', failed);
      apt.on('exit', (code) => (code === 0 ? resolve() : failed()));
    });
  } else {
    say(`Missing for ${needers}: ${names}. Install with: sudo apt-get install -y ${names}`);
  }
}

if (process.argv.includes('--install') || !fs.existsSync(installed) || fs.statSync(installed).mtimeMs < fs.statSync(lock).mtimeMs) {
  // `npm install` with the committed lock (not `npm ci`: npm/cli#4828 makes it refuse lock files
  // written on one platform), run by the Node.js the lock pins, so npm checks the packages'
  // `engines` against the runtime that will run them.
  say('Installing dependencies (npm install)…');
  run('npm', ['install', '--no-audit', '--no-fund'], { env: { ...process.env, PATH: runtimePath() } });
  // The install brought node_modules/.bin/node: the bootstrap copy is not needed again.
  fs.rmSync(bootstrapDir, { recursive: true, force: true });
}

systemInstall.then(async () => {
  // The live recognizer (C): built when its source changed, also with --no-build (the tests run
  // it); without a compiler or headers build-native.js says so in one line and the rest goes on.
  try {
    execFileSync(process.execPath, [path.join(__dirname, 'build-native.js'), ...(quiet ? ['--quiet'] : [])], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  } catch {
    say('Live transcription will be unavailable until services/transcription/native/ps-live.c builds.');
  }
  if (process.argv.includes('--no-build')) return;
  if (process.argv.includes('--tsc')) {
    say('Building (tsc -b)…');
    run(path.join(root, 'node_modules', '.bin', 'tsc'), ['-b']);
    return;
  }
  const started = Date.now();
  const count = await require('./transpile').transpile();
  if (count > 0) say(`Built ${count} files with swc in ${((Date.now() - started) / 1000).toFixed(1)} s (types are checked by npm test and npm run build).`);
}).catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
