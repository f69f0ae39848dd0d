import { randomBytes } from 'node:crypto';
import { connectRedis, type Redis } from '@murmur/kit';
import { describeIfReal, ManualClock, realRedis, realRedisUnavailable, type RealServer } from '@murmur/kit/testing';
import { MemoryRateLimiter, RedisRateLimiter, type RateLimiter } from '../src/rate-limiter';

const START = '2026-01-15T12:00:00.000Z';

/** One step of a case: move the clock to `at` ms after START, then hit or peek as `user`. */
interface Step {
  at: number;
  op: 'hit' | 'peek';
  user?: string;
  limit?: number;
  expect: { allowed?: boolean; remaining: number; resetSeconds: number };
}

const tenHits = (from = 0, every = 1_000): Step[] =>
  Array.from({ length: 10 }, (_, i) => ({ at: from + i * every, op: 'hit' as const, expect: { allowed: true, remaining: 9 - i, resetSeconds: Math.ceil(60 - (i * every) / 1000) } }));

/** The same table drives both implementations: they must agree to the second. */
const CASES: Array<[string, Step[]]> = [
  [
    'allows 10 hits in a minute, then refuses the 11th with the seconds until the oldest leaves',
    [...tenHits(), { at: 10_000, op: 'hit', expect: { allowed: false, remaining: 0, resetSeconds: 50 } }],
  ],
  [
    'slides: the oldest slot frees exactly one window after its hit, not a millisecond before',
    [
      ...tenHits(),
      { at: 59_999, op: 'hit', expect: { allowed: false, remaining: 0, resetSeconds: 1 } },
      { at: 60_000, op: 'hit', expect: { allowed: true, remaining: 0, resetSeconds: 1 } },
      { at: 60_500, op: 'hit', expect: { allowed: false, remaining: 0, resetSeconds: 1 } },
      { at: 61_000, op: 'hit', expect: { allowed: true, remaining: 0, resetSeconds: 1 } },
    ],
  ],
  [
    'rounds a partial second up, so waiting reset_seconds always suffices',
    [...tenHits(0, 0), { at: 500, op: 'hit', expect: { allowed: false, remaining: 0, resetSeconds: 60 } }],
  ],
  [
    'a refused hit takes no slot',
    [
      ...tenHits(0, 0),
      { at: 30_000, op: 'hit', expect: { allowed: false, remaining: 0, resetSeconds: 30 } },
      { at: 59_000, op: 'hit', expect: { allowed: false, remaining: 0, resetSeconds: 1 } },
      { at: 60_000, op: 'hit', expect: { allowed: true, remaining: 9, resetSeconds: 60 } },
    ],
  ],
  [
    'peek reports the window without taking a slot',
    [
      { at: 0, op: 'peek', expect: { remaining: 10, resetSeconds: 0 } },
      { at: 0, op: 'peek', expect: { remaining: 10, resetSeconds: 0 } },
      { at: 1_000, op: 'hit', expect: { allowed: true, remaining: 9, resetSeconds: 60 } },
      { at: 2_000, op: 'peek', expect: { remaining: 9, resetSeconds: 59 } },
      { at: 61_000, op: 'peek', expect: { remaining: 10, resetSeconds: 0 } },
    ],
  ],
  [
    'says when capacity returns while slots are left: two hits in, the oldest leaves one window after it',
    [
      { at: 0, op: 'hit', expect: { allowed: true, remaining: 9, resetSeconds: 60 } },
      { at: 10_000, op: 'hit', expect: { allowed: true, remaining: 8, resetSeconds: 50 } },
      { at: 20_000, op: 'peek', expect: { remaining: 8, resetSeconds: 40 } },
      { at: 60_000, op: 'peek', expect: { remaining: 9, resetSeconds: 10 } },
      { at: 70_000, op: 'peek', expect: { remaining: 10, resetSeconds: 0 } },
    ],
  ],
  [
    'peek on a full window says how long to wait',
    [...tenHits(), { at: 20_000, op: 'peek', expect: { remaining: 0, resetSeconds: 40 } }],
  ],
  [
    'keeps one window per user',
    [
      ...tenHits(),
      { at: 10_000, op: 'hit', expect: { allowed: false, remaining: 0, resetSeconds: 50 } },
      { at: 10_000, op: 'hit', user: 'other', expect: { allowed: true, remaining: 9, resetSeconds: 60 } },
    ],
  ],
  [
    'after a lowered limit, waits until enough hits have left the window',
    [
      ...tenHits(),
      { at: 20_000, op: 'peek', limit: 5, expect: { remaining: 0, resetSeconds: 45 } },
      { at: 20_000, op: 'hit', limit: 5, expect: { allowed: false, remaining: 0, resetSeconds: 45 } },
      { at: 65_000, op: 'hit', limit: 5, expect: { allowed: true, remaining: 0, resetSeconds: 1 } },
    ],
  ],
];

function describeLimiter(name: string, make: (clock: ManualClock) => RateLimiter): void {
  describe(name, () => {
    it.each(CASES)('%s', async (_name, steps) => {
      const clock = new ManualClock(START);
      const limiter = make(clock);
      const base = `usr_${randomBytes(8).toString('hex')}`;
      for (const [i, step] of steps.entries()) {
        clock.set(new Date(Date.parse(START) + step.at));
        const user = step.user ? `${base}_${step.user}` : base;
        const limit = step.limit ?? 10;
        const got = step.op === 'hit' ? await limiter.hit(user, limit, 60) : await limiter.peek(user, limit, 60);
        const expected = { limit, windowSeconds: 60, ...step.expect };
        expect({ step: i, ...got }).toEqual({ step: i, ...expected });
      }
    });

    it('admits exactly 10 of 30 concurrent hits', async () => {
      const limiter = make(new ManualClock(START));
      const user = `usr_${randomBytes(8).toString('hex')}`;
      const results = await Promise.all(Array.from({ length: 30 }, () => limiter.hit(user, 10, 60)));
      expect(results.filter((r) => r.allowed)).toHaveLength(10);
      expect(results.filter((r) => !r.allowed).every((r) => r.remaining === 0 && r.resetSeconds === 60)).toBe(true);
      expect(await limiter.peek(user, 10, 60)).toEqual({ limit: 10, remaining: 0, windowSeconds: 60, resetSeconds: 60 });
    });

    it('rejects a limit or window that is not a positive integer', async () => {
      const limiter = make(new ManualClock(START));
      await expect(limiter.hit('usr_x', 0, 60)).rejects.toThrow('positive integer');
      await expect(limiter.peek('usr_x', 10, 0)).rejects.toThrow('positive integer');
    });
  });
}

describeLimiter('in-process rate limiter', (clock) => new MemoryRateLimiter(clock));

describe('in-process rate limiter memory', () => {
  it('forgets users whose hits have all left the window', async () => {
    const clock = new ManualClock(START);
    const limiter = new MemoryRateLimiter(clock, 5);
    for (let i = 0; i < 4; i++) await limiter.hit(`usr_idle${i}`, 10, 60);
    clock.advance(60_000);
    await limiter.hit('usr_active', 10, 60); // the 5th hit sweeps
    expect((limiter as unknown as { logs: Map<string, number[]> }).logs.size).toBe(1);
  });
});

/** REDIS_URL in CI, a redis-server of this file's own elsewhere; skipped, with the reason printed, only where neither exists. */
const redisUnavailable = realRedisUnavailable();
const prefix = `murmur-test:billing:${randomBytes(6).toString('hex')}:`;
let server: RealServer | undefined;
let redis: Redis | undefined;

if (!redisUnavailable) {
  beforeAll(async () => {
    server = await realRedis();
    redis = await connectRedis(server.url);
  });
  afterAll(async () => {
    if (redis) {
      for await (const keys of redis.scanIterator({ MATCH: `${prefix}*`, COUNT: 100 })) if (keys.length) await redis.del(keys);
      await redis.close();
    }
    await server?.release();
  });
}

describeIfReal(redisUnavailable, 'Redis rate limiter (REDIS_URL or a redis-server of our own)', () =>
  describeLimiter('agrees with the table', (clock) => new RedisRateLimiter(redis!, { clock, keyPrefix: prefix })),
);

describeIfReal(redisUnavailable, 'Redis rate limiter keys', () => {
  it('expires a window one minute after its last admitted hit, so idle users cost nothing', async () => {
    const limiter = new RedisRateLimiter(redis!, { clock: new ManualClock(START), keyPrefix: prefix });
    await limiter.hit('usr_ttl', 10, 60);
    const ttl = await redis!.pTTL(`${prefix}usr_ttl`);
    expect(ttl).toBeGreaterThan(55_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('is exact across replicas: two limiters on one Redis share the window', async () => {
    const clock = new ManualClock(START);
    const a = new RedisRateLimiter(redis!, { clock, keyPrefix: prefix });
    const b = new RedisRateLimiter(redis!, { clock, keyPrefix: prefix });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).hit('usr_shared', 10, 60)));
    expect(results.filter((r) => r.allowed)).toHaveLength(10);
  });
});
