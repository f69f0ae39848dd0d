/**
 * The gateway's verified-key cache and the revocation channel that keeps it honest, on their own:
 * the cache serves only while the channel is live, forgets on a revocation every way a key was
 * presented, refuses to re-cache a revoked key for a while (tombstones), and after the channel
 * breaks serves nothing it held before — a revocation published while it was down cannot be
 * missed. The channel runs on a redis-server of this file's own, killed and restarted at will.
 */
import { connectRedis, publishRevocation, RevocationListener, type Redis } from '@murmur/kit';
import { describeIfReal, ManualClock, startTestRedis, testRedisUnavailable, type TestRedis } from '@murmur/kit/testing';
import { auth } from '@murmur/proto';
import { KEY_CACHE_TTL_MS, RESET_SETTLE_MS, VerifiedKeyCache } from '@murmur/gateway';

const NOW = new Date('2026-01-15T12:00:00Z');
const KEY_A = `Bearer svc_${'a'.repeat(64)}`;
const principal = (keyId: string, keyExpiresAt?: Date) => auth.Principal.fromPartial({ userId: 'usr_1', keyId, keyExpiresAt });

/** Resolves once `cond` holds (polled); gives up only after a bound far beyond any healthy wait, to fail a hang rather than leak the loop. */
async function until(cond: () => boolean | Promise<boolean>, hangMs = 20_000): Promise<void> {
  const deadline = Date.now() + hangMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`condition still false after ${hangMs} ms: a hang`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('verified-key cache', () => {
  let live = true;
  const clock = new ManualClock(NOW);
  const cache = () => new VerifiedKeyCache(clock, () => live);
  beforeEach(() => {
    live = true;
    clock.set(NOW);
  });

  it(`serves a verified key for ${KEY_CACHE_TTL_MS} ms, and not at that instant`, () => {
    const c = cache();
    c.set(KEY_A, principal('key_1'));
    clock.advance(KEY_CACHE_TTL_MS - 1);
    expect(c.get(KEY_A)?.keyId).toBe('key_1');
    clock.advance(1);
    expect(c.get(KEY_A)).toBeUndefined();
  });

  it('stops serving a key at its own expiry, within the cache time', () => {
    const c = cache();
    c.set(KEY_A, principal('key_1', new Date(NOW.getTime() + 1_000)));
    clock.advance(999);
    expect(c.get(KEY_A)?.keyId).toBe('key_1');
    clock.advance(1);
    expect(c.get(KEY_A)).toBeUndefined();
  });

  it('neither serves nor stores while the revocation channel is down', () => {
    const c = cache();
    c.set(KEY_A, principal('key_1'));
    live = false;
    expect(c.get(KEY_A)).toBeUndefined();
    c.set(`${KEY_A} `, principal('key_2'));
    live = true;
    expect(c.get(`${KEY_A} `)).toBeUndefined();
  });

  it('forgets on a revocation every header the key was presented with', () => {
    const c = cache();
    const forms = [KEY_A, KEY_A.replace('Bearer', 'bearer'), KEY_A.replace('Bearer', 'BEARER')];
    for (const f of forms) c.set(f, principal('key_1'));
    c.set('Bearer other', principal('key_2'));
    c.revoke('key_1');
    expect(forms.map((f) => c.get(f))).toEqual([undefined, undefined, undefined]);
    expect(c.get('Bearer other')?.keyId).toBe('key_2');
  });

  it('refuses to cache a revoked key for two minutes (a verification that raced the revocation), then caches it again', () => {
    const c = cache();
    c.revoke('key_1');
    c.set(KEY_A, principal('key_1'));
    expect(c.get(KEY_A)).toBeUndefined();
    clock.advance(120_000 - 1);
    c.set(KEY_A, principal('key_1'));
    expect(c.get(KEY_A)).toBeUndefined();
    clock.advance(1);
    c.set(KEY_A, principal('key_1'));
    expect(c.get(KEY_A)?.keyId).toBe('key_1');
  });
});

const redisMissing = testRedisUnavailable();
describeIfReal(redisMissing, 'revocation channel (a redis-server of our own, killed and restarted)', () => {
  const clock = new ManualClock(NOW);
  let server: TestRedis;
  let publisher: Redis;
  /** One gateway replica's cache and listener, wired as main.ts wires them. */
  const replicas: Array<{ cache: VerifiedKeyCache; listener: RevocationListener; resets: number }> = [];

  const replica = async (redis: Redis) => {
    const r = { cache: undefined as unknown as VerifiedKeyCache, listener: undefined as unknown as RevocationListener, resets: 0 };
    r.cache = new VerifiedKeyCache(clock, () => r.listener.live);
    r.listener = new RevocationListener(redis, {
      onRevoked: (id) => r.cache.revoke(id),
      onReset: () => {
        r.resets += 1;
        r.cache.clear();
      },
    });
    await r.listener.start();
    replicas.push(r);
    return r;
  };

  /**
   * Right after a reset the cache stores nothing (a verification answered before a revocation it
   * never heard must not be cached): shown, then the settle time passes.
   */
  const settle = (r: { cache: VerifiedKeyCache }) => {
    r.cache.set(KEY_A, principal('key_too_early'));
    expect(r.cache.get(KEY_A)).toBeUndefined();
    clock.advance(RESET_SETTLE_MS);
  };

  beforeAll(async () => {
    server = await startTestRedis();
    publisher = await connectRedis(server.url);
  });
  afterAll(async () => {
    for (const r of replicas) await r.listener.stop();
    await publisher?.close().catch(() => undefined);
    await server?.stop();
  });

  it('drops a revoked key from every replica before the revocation returns', async () => {
    const [a, b] = [await replica(publisher), await replica(publisher)];
    for (const r of [a, b]) r.cache.set(KEY_A, principal('key_r'));
    expect(await publishRevocation(publisher, 'key_r')).toEqual({ notified: 2, acked: 2 });
    expect([a.cache.get(KEY_A), b.cache.get(KEY_A)]).toEqual([undefined, undefined]);
  });

  it('serves nothing while the channel is down, and nothing from before once it is back: a revocation sent meanwhile is not missed', async () => {
    const r = await replica(publisher);
    r.cache.set(KEY_A, principal('key_down'));
    expect(r.cache.get(KEY_A)?.keyId).toBe('key_down');
    const resets = r.resets;

    // The replica's subscription is cut while Redis itself stays up for everyone else…
    // (It may be back within milliseconds, so what is awaited is the reset, not the dark state.)
    await publisher.sendCommand(['CLIENT', 'KILL', 'TYPE', 'pubsub']);
    await until(() => r.resets > resets);
    expect(r.cache.get(KEY_A)).toBeUndefined();
    // …and the key is revoked now: this replica cannot hear it.
    await publishRevocation(publisher, 'key_down', 200);

    // node-redis reconnects and resubscribes; the cache serves again, but not the revoked key.
    await until(() => r.listener.live);
    expect(r.cache.get(KEY_A)).toBeUndefined();
    settle(r);
    r.cache.set(KEY_A, principal('key_next'));
    expect(r.cache.get(KEY_A)?.keyId).toBe('key_next');
    expect((await publishRevocation(publisher, 'key_next')).acked).toBeGreaterThanOrEqual(1);
    expect(r.cache.get(KEY_A)).toBeUndefined();
  });

  it('goes dark when Redis dies and hears revocations again once it restarts', async () => {
    const r = await replica(publisher);
    r.cache.set(KEY_A, principal('key_crash'));
    const resets = r.resets;
    await server.kill();
    await until(() => r.resets > resets);
    expect(r.listener.live).toBe(false);
    expect(r.cache.get(KEY_A)).toBeUndefined();
    await server.start();
    await until(() => replicas.every((x) => x.listener.live) && publisher.isReady);
    expect(r.cache.get(KEY_A)).toBeUndefined();
    settle(r);
    r.cache.set(KEY_A, principal('key_crash'));
    expect(r.cache.get(KEY_A)?.keyId).toBe('key_crash');
    expect((await publishRevocation(publisher, 'key_crash')).acked).toBe(replicas.filter((x) => x.listener.live).length);
    expect(r.cache.get(KEY_A)).toBeUndefined();
  });
});
