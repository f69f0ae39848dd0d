/** Test harness of the auth service: a real gRPC server on a free port and the generated client. */
import { randomBytes } from 'node:crypto';
import type { QueryResultRow } from 'pg';
import { auth } from '@murmur/proto';
import { MurmurError } from '@murmur/contract';
import { connectRedis, createClient, RedisCache, type Database, type KeyValueCache, type Logger, type PromiseClient, type Redis } from '@murmur/kit';
import { createPolicyClient, ManualClock, realRedis, realRedisUnavailable, testIdentity } from '@murmur/kit/testing';
import { startAuthService, type RunningAuthService } from '@murmur/auth';

export type AuthClient = PromiseClient<auth.AuthServiceClient>;

/** Every SQL statement a service ran, and a switch to make some of them fail. */
export interface DbProbe {
  db: Database;
  statements: string[];
  failWhen: RegExp | null;
}

/** Wraps `db` so a test can see which statements ran (e.g. none for a malformed key). */
export function probeDatabase(db: Database): DbProbe {
  const probe: DbProbe = { db: db, statements: [], failWhen: null };
  probe.db = {
    ...db,
    query: async <R extends QueryResultRow>(sql: string, params?: unknown[]): Promise<R[]> => {
      probe.statements.push(sql);
      if (probe.failWhen?.test(sql)) throw new Error('injected database failure');
      return db.query<R>(sql, params);
    },
  };
  return probe;
}

/** A logger that keeps every call, so tests can assert what was (and was not) logged. */
export interface RecordedLog {
  log: Logger;
  calls: Array<{ level: string; args: unknown[] }>;
}

export function recordingLogger(): RecordedLog {
  const calls: RecordedLog['calls'] = [];
  const log: Record<string, unknown> = { level: 'trace' };
  for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace']) {
    log[level] = (...args: unknown[]) => calls.push({ level, args });
  }
  log.child = () => log;
  return { log: log as unknown as Logger, calls };
}

/** A cache that never holds anything: every verification goes to the database. */
export const noCache: KeyValueCache = {
  get: async () => null,
  set: async () => undefined,
  delete: async () => undefined,
};

export interface Harness {
  client: AuthClient;
  clock: ManualClock;
  probe: DbProbe;
  logs: RecordedLog;
  running: RunningAuthService;
  stop(): Promise<void>;
}

export async function startHarness(
  db: Database,
  opts: { clock?: ManualClock; cache?: KeyValueCache; announceRevocation?: (keyId: string) => Promise<void> } = {},
): Promise<Harness> {
  const clock = opts.clock ?? new ManualClock('2026-01-15T12:00:00Z');
  const probe = probeDatabase(db);
  const logs = recordingLogger();
  const running = await startAuthService({
    identity: testIdentity('auth'),
    db: probe.db,
    log: logs.log,
    address: '127.0.0.1:0',
    clock,
    cache: opts.cache,
    announceRevocation: opts.announceRevocation,
    cursorSecret: 'auth-test-cursor-secret-0123456789',
  });
  const client = createPolicyClient(auth.AuthServiceClient, `127.0.0.1:${running.port}`, { deadlineMs: 5_000 });
  return {
    client,
    clock,
    probe,
    logs,
    running,
    async stop() {
      client.close();
      await running.stop();
    },
  };
}

/** The MurmurError a call failed with (fails the test if it succeeded). */
export async function failure(call: Promise<unknown>): Promise<MurmurError> {
  const outcome = await call.then(
    (value) => ({ ok: true as const, value }),
    (err: unknown) => ({ ok: false as const, err }),
  );
  if (outcome.ok) throw new Error(`expected the call to fail, it returned ${JSON.stringify(outcome.value)}`);
  if (!(outcome.err instanceof MurmurError)) throw outcome.err;
  return outcome.err;
}

let counter = 0;
/** A unique email per call, so tests sharing one database never collide. */
export function uniqueEmail(tag = 'user'): string {
  counter += 1;
  return `${tag}.${counter}.${randomBytes(3).toString('hex')}@example.com`;
}

/**
 * Why the RedisCache cases cannot run here (no REDIS_URL and no redis-server), or undefined: they
 * are registered all the same, and fail in CI or skip with this reason (describeIfReal).
 */
export const redisCacheUnavailable = realRedisUnavailable();

/** A RedisCache on its own key prefix: REDIS_URL, else a redis-server of the test's own (and how to clean it up). */
export async function testRedisCache(): Promise<{ cache: RedisCache; close(): Promise<void> }> {
  const server = await realRedis();
  const redis: Redis = await connectRedis(server.url);
  const prefix = `murmur:auth:test:${randomBytes(4).toString('hex')}:`;
  return {
    cache: new RedisCache(redis, prefix),
    async close() {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(keys);
      await redis.close();
      await server.release();
    },
  };
}
