/**
 * Test support: what a group of tests does when something it needs is missing here — a real
 * Postgres or Redis, a tool such as openssl. A test never passes without what it claims to
 * test, and never vanishes either:
 *  - in CI (`CI` set, as .ci/run sets it) nothing is optional: the group is registered as one
 *    failing test that names what is missing and how to get it;
 *  - on a developer's machine the group is registered as skipped, after one line on stderr
 *    saying what to install; the run's summary (scripts/jest-summary-reporter.js) lists every
 *    skipped test, and CI fails on any that scripts/test/allowed-skips.json does not name.
 * Prefer making the prerequisite available over either (realRedis() starts a redis-server of
 * the test's own when REDIS_URL is unset; realPostgres() a cluster of its own).
 */

/** Whether a missing prerequisite fails the run instead of skipping: in CI (CI=true), nothing is optional. */
export function prerequisitesRequired(env: NodeJS.ProcessEnv = process.env): boolean {
  const ci = (env.CI ?? '').trim().toLowerCase();
  return ci !== '' && ci !== 'false' && ci !== '0';
}

type Body = () => void | Promise<void>;
interface Registrars {
  describe: ((name: string, fn: () => void) => void) & { skip(name: string, fn: () => void): void };
  it: ((name: string, fn: Body, timeout?: number) => void) & { skip(name: string, fn: Body, timeout?: number): void };
}
const registrars = () => globalThis as unknown as Registrars;

/** The error of a group that cannot run in CI. */
function missing(name: string, why: string): Error {
  return new Error(`"${name}" cannot run here: ${why}. In CI (CI=true) every test that needs a server or a tool runs: provide it.`);
}

/** The line a developer sees for a group skipped on their machine. */
function note(name: string, why: string): void {
  process.stderr.write(`skipped: "${name}" — ${why}\n`);
}

/**
 * `describe(name, fn)` when `why` is undefined. Otherwise (`why` says what is missing and how to
 * get it): in CI one failing test in its place; elsewhere `describe.skip`, announced on stderr.
 */
export function describeIfReal(why: string | undefined, name: string, fn: () => void): void {
  const g = registrars();
  if (why === undefined) return g.describe(name, fn);
  if (prerequisitesRequired()) {
    return g.describe(name, () =>
      g.it('has what it needs to run', () => {
        throw missing(name, why);
      }),
    );
  }
  note(name, why);
  g.describe.skip(name, fn);
}

/** `it` with the same rule as {@link describeIfReal}: run, fail in CI, or skip with the reason printed. */
export function itIfReal(why: string | undefined, name: string, fn: Body, timeout?: number): void {
  const g = registrars();
  if (why === undefined) return g.it(name, fn, timeout);
  if (prerequisitesRequired()) {
    return g.it(name, () => {
      throw missing(name, why);
    });
  }
  note(name, why);
  g.it.skip(name, fn, timeout);
}
