/**
 * The per-user caps' one primitive, a set of expiring leases per key, in both forms — in-process
 * and Redis (REDIS_URL, else a redis-server of the test's own) — driven by the same clock and
 * held to the same answers; and the caps built on it (watchers, webhook retries) answering
 * rate_limit_exceeded with a Retry-After.
 */
import { MAX_WATCHERS_PER_USER, MurmurError, WEBHOOK_RETRY_LIMIT } from '@murmur/contract';
import { connectRedis, type Redis } from '@murmur/kit';
import { describeIfReal, realRedis, realRedisUnavailable, type RealServer } from '@murmur/kit/testing';
import { CallerLimits, MemoryLeaseSet, RedisLeaseSet, WATCH_LEASE_MS, type LeaseSet } from '../src/caller-limits';

const why = realRedisUnavailable();
let server: RealServer | undefined;
let redis: Redis | undefined;

beforeAll(async () => {
  if (why) return;
  server = await realRedis();
  redis = await connectRedis(server.url);
});
afterAll(async () => {
  await redis?.close();
  await server?.release();
});

/** Both forms, always registered: the Redis one fails in CI or skips with the reason where no Redis can be had (describeIfReal). */
const kinds: Array<[string, string | undefined, (now: () => number) => LeaseSet]> = [
  ['in-process', undefined, (now) => new MemoryLeaseSet(now)],
  ['redis', why, (now) => new RedisLeaseSet(redis!, `murmur:test:leases:${Date.now()}:${Math.random()}:`, now)],
];

for (const [kind, unavailable, make] of kinds) describeIfReal(unavailable, `leases (${kind})`, () => {
  // Redis keeps its own time for key expiry: the test's clock starts at the real now and only moves on.
  let t = Date.now();
  const now = () => t;

  it('admits up to the limit, then answers when the soonest lease ends; a released or expired lease frees its place', async () => {
    const leases = make(now);
    const a = await leases.acquire('u1', 2, 10_000);
    t += 1_000;
    const b = await leases.acquire('u1', 2, 10_000);
    expect('lease' in a && 'lease' in b).toBe(true);
    expect(await leases.acquire('u1', 2, 10_000)).toEqual({ retryAfterMs: 9_000 });
    // Another key has its own.
    expect('lease' in (await leases.acquire('u2', 2, 10_000))).toBe(true);
    await leases.release('u1', (b as { lease: string }).lease);
    const c = await leases.acquire('u1', 2, 10_000);
    expect('lease' in c).toBe(true);
    // a renewed outlives its first end; c lapses.
    t += 5_000;
    await leases.renew('u1', (a as { lease: string }).lease, 10_000);
    t += 6_000;
    expect('lease' in (await leases.acquire('u1', 2, 10_000))).toBe(true);
    expect(await leases.acquire('u1', 2, 10_000)).toEqual({ retryAfterMs: 4_000 });
    // A lease that has lapsed is not brought back by a renewal.
    t += 20_000;
    await leases.renew('u1', (a as { lease: string }).lease, 10_000);
    expect('lease' in (await leases.acquire('u1', 1, 10_000))).toBe(true);
  });

  it(`caps watchers at ${MAX_WATCHERS_PER_USER} per user and webhook retries at ${WEBHOOK_RETRY_LIMIT.limit} a window, with Retry-After`, async () => {
    const limits = new CallerLimits(make(now), now);
    const slots = [];
    for (let i = 0; i < MAX_WATCHERS_PER_USER; i++) slots.push(await limits.watcher('usr_w'));
    const refused = await limits.watcher('usr_w').catch((e: unknown) => e as MurmurError);
    expect(refused).toMatchObject({ code: 'rate_limit_exceeded', meta: { retry_after: expect.stringMatching(/^\d+$/) } });
    await slots[0]!.release();
    await slots[0]!.release(); // twice is once
    slots[0] = await limits.watcher('usr_w');
    // Kept slots outlive their first lease; unkept ones lapse.
    for (let i = 0; i < 4; i++) {
      t += WATCH_LEASE_MS / 2;
      await slots[0]!.keep();
    }
    for (let i = 1; i < MAX_WATCHERS_PER_USER; i++) await limits.watcher('usr_w');
    await expect(limits.watcher('usr_w')).rejects.toMatchObject({ code: 'rate_limit_exceeded' });

    for (let i = 0; i < WEBHOOK_RETRY_LIMIT.limit; i++) await limits.webhookRetry('usr_r');
    const over = await limits.webhookRetry('usr_r').catch((e: unknown) => e as MurmurError);
    expect(over).toMatchObject({ code: 'rate_limit_exceeded', meta: { retry_after: String(WEBHOOK_RETRY_LIMIT.windowSeconds) } });
    t += WEBHOOK_RETRY_LIMIT.windowSeconds * 1000;
    await expect(limits.webhookRetry('usr_r')).resolves.toBeUndefined();
  });
});
