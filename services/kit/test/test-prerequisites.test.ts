/**
 * describeIfReal / itIfReal: a group whose server or tool is missing is never green by
 * construction — in CI it is one failing test naming what is missing, elsewhere it is skipped
 * (counted, and listed by the run's summary) with the reason on stderr. The registrations are
 * recorded by stand-ins for jest's `describe` and `it`, swapped in for the call.
 */
import { describeIfReal, itIfReal, prerequisitesRequired } from '../src/test-prerequisites';

type Registered = { kind: string; name: string; fn?: () => unknown };

/** Calls `register` with recording stand-ins for `describe`/`it` and CI set as `ci` says; returns what it registered. */
function registrations(ci: string | undefined, register: () => void): { calls: Registered[]; stderr: string } {
  const g = globalThis as unknown as Record<string, unknown>;
  const saved = { describe: g.describe, it: g.it, ci: process.env.CI, write: process.stderr.write };
  const calls: Registered[] = [];
  const recorder = (kind: string) =>
    Object.assign((name: string, fn?: () => unknown) => void calls.push({ kind, name, fn }), { skip: (name: string, fn?: () => unknown) => void calls.push({ kind: `${kind}.skip`, name, fn }) });
  let stderr = '';
  g.describe = recorder('describe');
  g.it = recorder('it');
  if (ci === undefined) delete process.env.CI;
  else process.env.CI = ci;
  process.stderr.write = ((chunk: string) => ((stderr += chunk), true)) as typeof process.stderr.write;
  try {
    register();
  } finally {
    g.describe = saved.describe;
    g.it = saved.it;
    process.stderr.write = saved.write;
    if (saved.ci === undefined) delete process.env.CI;
    else process.env.CI = saved.ci;
  }
  return { calls, stderr };
}

describe('missing prerequisites', () => {
  const body = () => undefined;

  it('runs a group that has what it needs, in CI or not', () => {
    for (const ci of ['true', undefined]) {
      expect(registrations(ci, () => describeIfReal(undefined, 'Redis cases', body)).calls).toEqual([{ kind: 'describe', name: 'Redis cases', fn: body }]);
      expect(registrations(ci, () => itIfReal(undefined, 'a replica case', body)).calls).toEqual([{ kind: 'it', name: 'a replica case', fn: body }]);
    }
  });

  it('fails a group in CI, naming what is missing, instead of skipping it', async () => {
    const { calls, stderr } = registrations('true', () => describeIfReal('redis-server is not installed (apt-get install redis-server)', 'Redis cases', body));
    expect(calls.map((c) => `${c.kind} ${c.name}`)).toEqual(['describe Redis cases']);
    // The group's body is one test that throws.
    const inner = registrations('true', () => calls[0]!.fn!());
    expect(inner.calls.map((c) => `${c.kind} ${c.name}`)).toEqual(['it has what it needs to run']);
    expect(() => inner.calls[0]!.fn!()).toThrow(/"Redis cases" cannot run here: redis-server is not installed \(apt-get install redis-server\)\. In CI \(CI=true\) every test that needs a server or a tool runs/);
    expect(stderr).toBe('');
    const single = registrations('1', () => itIfReal('no Postgres', 'a replica case', body)).calls;
    expect(single.map((c) => `${c.kind} ${c.name}`)).toEqual(['it a replica case']);
    expect(() => single[0]!.fn!()).toThrow(/"a replica case" cannot run here: no Postgres/);
  });

  it('skips a group on a developer machine, saying on stderr why', () => {
    const group = registrations(undefined, () => describeIfReal('redis-server is not installed', 'Redis cases', body));
    expect(group.calls).toEqual([{ kind: 'describe.skip', name: 'Redis cases', fn: body }]);
    expect(group.stderr).toBe('skipped: "Redis cases" — redis-server is not installed\n');
    const single = registrations('false', () => itIfReal('no Postgres', 'a replica case', body));
    expect(single.calls).toEqual([{ kind: 'it.skip', name: 'a replica case', fn: body }]);
    expect(single.stderr).toContain('no Postgres');
  });

  it('reads CI as CI services set it', () => {
    for (const on of ['true', '1', 'TRUE', 'yes']) expect(prerequisitesRequired({ CI: on })).toBe(true);
    for (const off of [undefined, '', 'false', '0']) expect(prerequisitesRequired({ CI: off })).toBe(false);
  });
});
