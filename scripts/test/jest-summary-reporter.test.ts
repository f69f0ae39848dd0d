/**
 * The closing line CI adds up ("jest: N passed, N failed, N skipped", .ci/run) must not say
 * "0 failed" when a test file failed outside its tests (afterAll, import): each run here is a
 * real jest over fixture files, with the summary reporter alone.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

const REPO = path.resolve(__dirname, '..', '..');
const FIXTURES = path.join(__dirname, 'fixtures');

/** Runs jest over the named fixtures and returns its closing summary line and exit code. */
function runJest(...fixtures: string[]): { summary: string | undefined; output: string; status: number | null } {
  const result = spawnSync(
    process.execPath,
    [
      path.join(REPO, 'node_modules/jest/bin/jest.js'),
      '--config',
      '{}',
      '--rootDir',
      FIXTURES,
      '--testMatch',
      ...fixtures.map((f) => `**/${f}.fixture.js`),
      '--reporters',
      path.join(REPO, 'scripts/jest-summary-reporter.js'),
      '--watchman=false',
      '--ci',
    ],
    { cwd: REPO, encoding: 'utf8', env: { ...process.env, FORCE_COLOR: '0' } },
  );
  const output = `${result.stdout}${result.stderr}`;
  const summary = output.split('\n').filter((l) => /^jest: \d+ passed, \d+ failed, \d+ skipped$/.test(l)).pop();
  return { summary, output, status: result.status };
}

describe('jest summary reporter', () => {
  it('counts a file that fails in afterAll, with every test passed, as failed', () => {
    const run = runJest('fails-in-after-all');
    expect(run.status).not.toBe(0);
    expect(run.summary).toBe('jest: 1 passed, 1 failed, 0 skipped');
    expect(run.output).toMatch(/failed outside any test: .*fails-in-after-all\.fixture\.js/);
  });

  it('counts a failing test once, and adds the file that failed outside its tests', () => {
    expect(runJest('fails-a-test', 'fails-in-after-all', 'passes').summary).toBe('jest: 2 passed, 2 failed, 1 skipped');
  });

  it('says 0 failed when nothing failed', () => {
    const run = runJest('passes');
    expect(run.status).toBe(0);
    expect(run.summary).toBe('jest: 1 passed, 0 failed, 1 skipped');
  });
});
