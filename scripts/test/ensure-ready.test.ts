/**
 * `npm test`'s pre-step (scripts/ensure-ready.js --test) knows every system package the tests
 * need — the Helm chart test's Go packages, redis-server, postgresql, openssl, the speech test
 * set, Chromium — and installs them where it can (root with apt-get) or names them in one line.
 * Run here in a sandbox copy (node_modules up to date, so nothing is installed) with a PATH that
 * holds only `sh`: every command-checked package is missing and there is no apt-get.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const REPO = path.resolve(__dirname, '..', '..');
const { APT_PACKAGES } = require('../../deploy/helm/lib/renderer.js') as { APT_PACKAGES: string[] };

describe('ensure-ready --test', () => {
  let sandbox: string;
  let bin: string;

  beforeAll(() => {
    sandbox = fs.mkdtempSync(path.join(os.tmpdir(), 'murmur-ensure-ready-'));
    for (const file of ['scripts/ensure-ready.js', 'scripts/build-native.js', 'deploy/helm/lib/renderer.js', 'package-lock.json']) {
      fs.mkdirSync(path.dirname(path.join(sandbox, file)), { recursive: true });
      fs.copyFileSync(path.join(REPO, file), path.join(sandbox, file));
    }
    // Installed after the lock was written: ensure-ready installs nothing.
    fs.mkdirSync(path.join(sandbox, 'node_modules'));
    fs.writeFileSync(path.join(sandbox, 'node_modules', '.package-lock.json'), '{}');
    bin = path.join(sandbox, 'bin');
    fs.mkdirSync(bin);
    fs.symlinkSync(fs.realpathSync('/bin/sh'), path.join(bin, 'sh'));
  });
  afterAll(() => fs.rmSync(sandbox, { recursive: true, force: true }));

  const run = (...args: string[]) =>
    spawnSync(process.execPath, [path.join(sandbox, 'scripts/ensure-ready.js'), '--no-build', ...args], { encoding: 'utf8', env: { PATH: bin } });

  it('names what the tests need, with the apt-get line, where it cannot install it', () => {
    const { status, stderr } = run('--test');
    expect(status).toBe(0);
    const line = stderr.split('\n').find((l) => l.startsWith('Missing for '));
    expect(line).toBeDefined();
    const packages = line!.split('sudo apt-get install -y ')[1]!.split(' ');
    for (const needed of ['golang-go', 'redis-server', 'postgresql', 'openssl', 'ffmpeg', 'espeak-ng', 'chromium']) expect(packages).toContain(needed);
    expect(line).toMatch(/the Helm chart test/);
    // The chart's Go packages are the renderer's own list, not a copy of it.
    expect(APT_PACKAGES).toContain('golang-go');
  });

  it('asks for the transcription packages only before `npm start`, and for nothing with --no-system', () => {
    const start = run();
    expect(start.stderr).toMatch(/^Missing for transcription: ffmpeg pocketsphinx\b/m);
    // The live recognizer's build tools (the -dev packages are checked by file, so present here).
    expect(start.stderr).toMatch(/^Missing for transcription: .*\bgcc pkg-config\b/m);
    expect(start.stderr).not.toMatch(/golang-go|redis-server/);
    expect(run('--test', '--no-system').stderr).toBe('');
  });
});
