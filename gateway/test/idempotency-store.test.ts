import { connectRedis, type Redis } from '@murmur/kit';
import { describeIfReal, realRedis, realRedisUnavailable } from '@murmur/kit/testing';
import { MemoryIdempotencyStore, RedisIdempotencyStore, type IdempotencyStore } from '../src/idempotency/store';

const response = { status: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' };

type StoreMaker = () => Promise<{ store: IdempotencyStore; close(): Promise<void> }>;

/** In-process always; Redis always too: REDIS_URL, else a redis-server of the test's own (describeIfReal says what to do without one). */
const stores: Array<[string, string | undefined, StoreMaker]> = [
  ['in-process', undefined, async () => ({ store: new MemoryIdempotencyStore(), close: async () => undefined })],
  [
    'redis',
    realRedisUnavailable(),
    async () => {
      const server = await realRedis();
      const redis: Redis = await connectRedis(server.url);
      const prefix = `murmur:test:idem:${Date.now()}:${Math.random().toString(36).slice(2)}:`;
      return {
        store: new RedisIdempotencyStore(redis, prefix),
        close: async () => {
          for await (const keys of redis.scanIterator({ MATCH: `${prefix}*` })) if (keys.length) await redis.del(keys);
          await redis.close();
          await server.release();
        },
      };
    },
  ],
];

for (const [name, why, make] of stores) describeIfReal(why, `idempotency store (${name})`, () => {
  let store: IdempotencyStore;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ store, close } = await make());
  });
  afterAll(async () => close());

  it('lets exactly one of many concurrent claims of a key win', async () => {
    const results = await Promise.all(Array.from({ length: 20 }, () => store.claim('usr_a', 'k-race', null)));
    expect(results.filter((r) => r.claimed)).toHaveLength(1);
    expect(results.filter((r) => !r.claimed && r.record.state === 'running')).toHaveLength(19);
  });

  it('keeps a completed response for replay', async () => {
    expect((await store.claim('usr_a', 'k-done', null)).claimed).toBe(true);
    await store.complete('usr_a', 'k-done', 'fp1', response);
    const again = await store.claim('usr_a', 'k-done', null);
    expect(again).toEqual({ claimed: false, record: { state: 'done', fingerprint: 'fp1', response } });
  });

  it('frees a released key for a new request', async () => {
    expect((await store.claim('usr_a', 'k-free', null)).claimed).toBe(true);
    await store.release('usr_a', 'k-free');
    expect((await store.claim('usr_a', 'k-free', null)).claimed).toBe(true);
  });

  it('scopes keys to their owner', async () => {
    expect((await store.claim('usr_a', 'shared-key', null)).claimed).toBe(true);
    expect((await store.claim('usr_b', 'shared-key', null)).claimed).toBe(true);
  });
});

describe('in-process idempotency expiry', () => {
  it('forgets a completed response after 24 hours', async () => {
    let now = 0;
    const store = new MemoryIdempotencyStore(() => now);
    await store.claim('usr_a', 'k', null);
    await store.complete('usr_a', 'k', 'fp', response);
    now += 24 * 3600 * 1000 - 1;
    expect((await store.claim('usr_a', 'k', null)).claimed).toBe(false);
    now += 2;
    expect((await store.claim('usr_a', 'k', null)).claimed).toBe(true);
  });
});
