/**
 * Test support: the real Postgres or Redis a test needs to mean what it claims — races that only
 * bite where transactions run side by side (PGlite runs one at a time), caches and channels that
 * exist only with Redis. CI sets DATABASE_URL / REDIS_URL; on a developer machine without them a
 * server of the test's own is started (test-servers.ts), and only where that cannot run either
 * does the group fail (CI) or skip with the reason printed (describeIfReal in
 * test-prerequisites.ts) — never green by construction.
 */
import { startTestPostgres, startTestRedis, testPostgresUnavailable, testRedisUnavailable } from './test-servers';

/** A real server for a test: its URL, and how to give back what was started for it. */
export interface RealServer {
  url: string;
  /** Stops and deletes a server started for the test; nothing for DATABASE_URL / REDIS_URL. */
  release(): Promise<void>;
}

/** Why no real Postgres can be had here (no DATABASE_URL and no own cluster), or undefined. */
export function realPostgresUnavailable(): string | undefined {
  const why = process.env.DATABASE_URL ? undefined : testPostgresUnavailable();
  return why && `${why}; or set DATABASE_URL to a Postgres server`;
}

/** Why no real Redis can be had here (no REDIS_URL and no redis-server), or undefined. */
export function realRedisUnavailable(): string | undefined {
  const why = process.env.REDIS_URL ? undefined : testRedisUnavailable();
  return why && `${why}; or set REDIS_URL to a Redis server`;
}

/** DATABASE_URL when set, else a fresh cluster of the test's own (dropped by `release`). */
export async function realPostgres(): Promise<RealServer> {
  const url = process.env.DATABASE_URL;
  if (url) return { url, release: async () => undefined };
  const own = await startTestPostgres();
  return { url: own.url, release: () => own.drop() };
}

/** REDIS_URL when set, else a redis-server of the test's own (stopped by `release`). */
export async function realRedis(): Promise<RealServer> {
  const url = process.env.REDIS_URL;
  if (url) return { url, release: async () => undefined };
  const own = await startTestRedis();
  return { url: own.url, release: () => own.stop() };
}
