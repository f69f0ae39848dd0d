/**
 * The closing line CI adds up ("jest: N passed, N failed, N skipped", .ci/run) must not say
 * "0 failed" when a test file failed outside its tests (afterAll, import), and a CI run must fail
 * on a skipped test that the list of allowed skips does not name: each run here is a real jest
 * over fixture files, with the summary reporter alone and the fixtures' own list.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const REPO = path.resolve(__dirname, '..', '..');
const FIXTURES = path.join(__dirname, 'fixtures');
const REPORTER = path.join(REPO, 'scripts/jest-summary-reporter.js');

interface RunOptions {
  /** Run as CI does (CI=true); default false. */
  ci?: boolean;
  /** The list of allowed skips, in the fixtures' folder; default allowed-skips.json. */
  list?: string;
  /** Extra jest arguments (such as -t). */
  args?: string[];
}

/** Runs jest over the named fixtures and returns its closing summary line, its output and its exit code. */
function runJest(fixtures: string[], opts: RunOptions = {}): { summary: string | undefined; output: string; status: number | null } {
  const config = { reporters: [[REPORTER, { allowedSkips: opts.list ?? 'allowed-skips.json' }]] };
  const env: NodeJS.ProcessEnv = { ...process.env, FORCE_COLOR: '0' };
  delete env.CI;
  if (opts.ci) env.CI = 'true';
  const result = spawnSync(
    process.execPath,
    [
      path.join(REPO, 'node_modules/jest/bin/jest.js'),
      '--config',
      JSON.stringify(config),
      '--rootDir',
      FIXTURES,
      '--testMatch',
      ...fixtures.map((f) => `**/${f}.fixture.js`),
      '--watchman=false',
      ...(opts.args ?? []),
    ],
    { cwd: REPO, encoding: 'utf8', env },
  );
  const output = `${result.stdout}${result.stderr}`;
  const summary = output.split('\n').filter((l) => /^jest: \d+ passed, \d+ failed, \d+ skipped$/.test(l)).pop();
  return { summary, output, status: result.status };
}

describe('jest summary reporter', () => {
  it('counts a file that fails in afterAll, with every test passed, as failed', () => {
    const run = runJest(['fails-in-after-all']);
    expect(run.status).not.toBe(0);
    expect(run.summary).toBe('jest: 1 passed, 1 failed, 0 skipped');
    expect(run.output).toMatch(/failed outside any test: .*fails-in-after-all\.fixture\.js/);
  });

  it('counts a failing test once, and adds the file that failed outside its tests', () => {
    expect(runJest(['fails-a-test', 'fails-in-after-all', 'passes']).summary).toBe('jest: 2 passed, 2 failed, 1 skipped');
  });

  it('says 0 failed when nothing failed', () => {
    const run = runJest(['passes']);
    expect(run.status).toBe(0);
    expect(run.summary).toBe('jest: 1 passed, 0 failed, 1 skipped');
  });
});

describe('skipped tests in CI', () => {
  it('fails the run on a skipped test the list does not name, naming its file and test', () => {
    const run = runJest(['skips-one-of-two', 'passes'], { ci: true });
    expect(run.status).not.toBe(0);
    expect(run.summary).toBe('jest: 2 passed, 0 failed, 2 skipped');
    expect(run.output).toContain('jest: 1 test(s) skipped that allowed-skips.json does not allow');
    expect(run.output).toContain('skips-one-of-two.fixture.js: 1 skipped ("needs a server answers")');
    expect(run.output).not.toMatch(/passes\.fixture\.js: \d+ skipped/);
    expect(run.output).toContain('CI fails on these');
  });

  it('passes a run whose only skipped test is on the list', () => {
    const run = runJest(['passes'], { ci: true });
    expect(run.status).toBe(0);
    expect(run.output).not.toContain('does not allow');
  });

  it('fails the run when the list is malformed (an entry without its reason)', () => {
    const run = runJest(['passes'], { ci: true, list: 'allowed-skips-malformed.json' });
    expect(run.status).not.toBe(0);
    expect(run.output).toMatch(/allowed skips cannot be read: .*needs "file" and a "reason"/);
  });

  it('does not judge a run filtered by name (-t): it skips the rest on purpose', () => {
    const run = runJest(['skips-one-of-two'], { ci: true, args: ['-t', 'runs'] });
    expect(run.status).toBe(0);
    expect(run.output).not.toContain('does not allow');
  });
});

describe('skipped tests on a developer machine', () => {
  it('lists the unlisted skip and keeps the run green', () => {
    const run = runJest(['skips-one-of-two'], { ci: false });
    expect(run.status).toBe(0);
    expect(run.output).toContain('skips-one-of-two.fixture.js: 1 skipped ("needs a server answers")');
    expect(run.output).toContain('CI would fail on these (CI=true)');
  });
});

describe("the repository's list of allowed skips", () => {
  it('is short, and every entry names a test file of the repository and gives its reason', () => {
    const { loadAllowed } = require('../jest-summary-reporter.js') as { loadAllowed(file: string): Array<{ file: string; test?: string; reason: string }> };
    const list = loadAllowed(path.join(__dirname, 'allowed-skips.json'));
    expect(list.length).toBeLessThanOrEqual(3);
    for (const entry of list) {
      expect(fs.existsSync(path.join(REPO, entry.file))).toBe(true);
      expect(entry.file).toMatch(/\/test\/.*\.test\.ts$/);
      expect(entry.reason.length).toBeGreaterThan(40);
    }
  });
});
