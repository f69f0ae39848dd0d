/**
 * Fault-test support: the whole system on a Postgres and a Redis of the test's own (which the
 * test kills and restarts), a logger whose lines the test reads, and a caller that records how
 * each request was answered (a hang guard aborts one that takes far too long).
 */
import { startTestPostgres, startTestRedis, testPostgresUnavailable, testRedisUnavailable, type TestPostgres, type TestRedis } from '@murmur/kit/testing';
import { recordedLog, type LogLine } from './log-lines';
import { startSystem, type SystemOptions, type TestSystem } from './system';

export type { LogLine } from './log-lines';

/** Why the fault tests cannot run here, or undefined. */
export function faultTestsUnavailable(): string | undefined {
  return testPostgresUnavailable() ?? testRedisUnavailable();
}

export interface FaultSystem {
  sys: TestSystem;
  pg: TestPostgres;
  redis: TestRedis;
  /** Every log line of every component, parsed. */
  lines: LogLine[];
  stop(): Promise<void>;
}

export async function startFaultSystem(opts: Omit<SystemOptions, 'databaseUrl' | 'redisUrl' | 'log'> = {}): Promise<FaultSystem> {
  const { log, lines } = recordedLog('fault-test');
  const [pg, redis] = await Promise.all([startTestPostgres(), startTestRedis()]);
  const sys = await startSystem({ ...opts, databaseUrl: pg.url, redisUrl: redis.url, log });
  return {
    sys,
    pg,
    redis,
    lines,
    async stop() {
      await sys.stop();
      await Promise.all([pg.drop(), redis.stop()]);
    },
  };
}

/** Lines that report a bug (an error nobody classified), which an outage must never produce. */
export function bugReports(lines: LogLine[]): LogLine[] {
  return lines.filter((l) => /unhandled/i.test(l.msg ?? '') || l.level === 'fatal');
}

export interface Answer {
  path: string;
  status: number;
  /** `error.code` of an error body. */
  code?: string;
  body: Record<string, any>;
  /** How long the answer took, in milliseconds. */
  ms: number;
}

/** Far above any budget of the system (retries 3 s, gRPC deadline 10 s): only a hang trips it. */
export const HANG_GUARD_MS = 20_000;

/**
 * One request; a hang (no answer within `hangGuardMs`, default HANG_GUARD_MS) is status 0. A paid
 * call whose commit may have landed waits for billing up to half its hold's lease by design
 * (services/conversion/src/service.ts, commit()), so its guard is the lease.
 */
export async function call(baseUrl: string, key: string, method: 'GET' | 'POST', path: string, body?: unknown, headers: Record<string, string> = {}, hangGuardMs = HANG_GUARD_MS): Promise<Answer> {
  const started = Date.now();
  try {
    const res = await fetch(`${baseUrl}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body !== undefined ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(hangGuardMs),
    });
    const text = await res.text();
    let json: Record<string, any> = {};
    try {
      json = JSON.parse(text) as Record<string, any>;
    } catch {
      json = { raw: text };
    }
    return { path, status: res.status, code: json.error?.code, body: json, ms: Date.now() - started };
  } catch (err) {
    return { path, status: 0, body: { hang: String(err) }, ms: Date.now() - started };
  }
}

/** An answer the contract allows during an outage: a success, or 503 service_unavailable with its body. */
export function answeredWell(a: Answer): boolean {
  if (a.status >= 200 && a.status < 300) return true;
  return a.status === 503 && a.code === 'service_unavailable' && typeof a.body.error?.request_id === 'string';
}

/** Retries `probe` until it is true (the system recovers by itself), failing after `timeoutMs`. */
export async function eventually(what: string, probe: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
