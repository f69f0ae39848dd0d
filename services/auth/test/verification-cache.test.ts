import { MemoryCache, type KeyValueCache } from '@murmur/kit';
import { describeIfReal } from '@murmur/kit/testing';
import { decodeEntry, encodeEntry, entryKey, VerificationCache, type CachedPrincipal } from '../src/verification-cache';
import { recordingLogger, redisCacheUnavailable, testRedisCache } from './support';

const hash = 'f'.repeat(64);
const principal: CachedPrincipal = {
  userId: 'usr_0123456789abcdefghijklmn',
  keyId: 'key_0123456789abcdefghijklmn',
  expiresAt: new Date('2026-04-15T12:00:00.000Z'),
  scopes: ['read', 'ai'],
};

describe('verification cache entries', () => {
  it.each<[string, CachedPrincipal]>([
    ['an expiring key', principal],
    ['a never-expiring key', { ...principal, expiresAt: null }],
    ['a read-only key', { ...principal, scopes: ['read'] }],
  ])('round-trips %s', (_name, p) => {
    expect(decodeEntry(encodeEntry(p))).toEqual(p);
  });

  it.each([
    '',
    'not json',
    'null',
    '42',
    '{"u":"usr_x"}',
    '{"u":"usr_x","k":"key_x","e":"soon"}',
    '{"u":1,"k":"key_x","e":null}',
    // Written before key scopes: what the key may do is the database's to say.
    '{"u":"usr_x","k":"key_x","e":null}',
    '{"u":"usr_x","k":"key_x","e":null,"s":"read"}',
  ])(
    'treats the unreadable entry %j as a miss',
    (raw) => {
      expect(decodeEntry(raw)).toBeNull();
    },
  );
});

type CacheFactory = () => Promise<{ cache: KeyValueCache; close(): Promise<void> }>;
/** MemoryCache and RedisCache (REDIS_URL, else a redis-server of the test's own), both always registered (describeIfReal). */
const kinds: Array<[string, string | undefined, CacheFactory]> = [
  ['MemoryCache', undefined, async () => ({ cache: new MemoryCache(), close: async () => undefined })],
  ['RedisCache', redisCacheUnavailable, testRedisCache],
];

for (const [kind, why, factory] of kinds) describeIfReal(why, `VerificationCache over ${kind}`, () => {
  let backing: Awaited<ReturnType<CacheFactory>>;
  beforeAll(async () => {
    backing = await factory();
  });
  afterAll(async () => {
    await backing.close();
  });

  it('serves what it remembered until the key is forgotten', async () => {
    const vc = new VerificationCache(backing.cache, recordingLogger().log);
    await vc.remember(hash, principal);
    expect(await vc.lookup(hash)).toEqual(principal);
    await vc.forget(hash, principal.keyId);
    expect(await vc.lookup(hash)).toBeNull();
  });

  it('does not keep an entry written by a verification that raced a revocation', async () => {
    const vc = new VerificationCache(backing.cache, recordingLogger().log);
    const raced = 'e'.repeat(64);
    // The revocation lands between the verification's database read and its cache write.
    await vc.forget(raced, principal.keyId);
    await vc.remember(raced, principal);
    expect(await vc.lookup(raced)).toBeNull();
  });

  it('never serves an entry that reappears after a revocation, even before the writer re-checks', async () => {
    const vc = new VerificationCache(backing.cache, recordingLogger().log);
    const late = 'd'.repeat(64);
    await vc.forget(late, principal.keyId);
    // A verification in flight writes its entry after the revocation returned.
    await backing.cache.set(entryKey(late), encodeEntry(principal), 60);
    expect(await vc.lookup(late)).toBeNull();
  });
});

describe('VerificationCache when the cache fails', () => {
  const broken: KeyValueCache = {
    get: async () => {
      throw new Error('ECONNREFUSED');
    },
    set: async () => {
      throw new Error('ECONNREFUSED');
    },
    delete: async () => {
      throw new Error('ECONNREFUSED');
    },
  };

  it('turns a failing read into a miss and logs a warning', async () => {
    const logs = recordingLogger();
    const vc = new VerificationCache(broken, logs.log);
    expect(await vc.lookup(hash)).toBeNull();
    expect(logs.calls.map((c) => c.level)).toContain('warn');
  });

  it('lets a failing write pass: the verification already succeeded', async () => {
    await expect(new VerificationCache(broken, recordingLogger().log).remember(hash, principal)).resolves.toBeUndefined();
  });

  it('fails a revocation it cannot propagate with service_unavailable, so the caller retries', async () => {
    await expect(new VerificationCache(broken, recordingLogger().log).forget(hash, principal.keyId)).rejects.toMatchObject({ code: 'service_unavailable' });
  });

  it('gives up on a cache that does not answer within the timeout', async () => {
    jest.useFakeTimers();
    try {
      const hung: KeyValueCache = { get: () => new Promise(() => undefined), set: async () => undefined, delete: async () => undefined };
      const lookup = new VerificationCache(hung, recordingLogger().log, { timeoutMs: 500 }).lookup(hash);
      await jest.advanceTimersByTimeAsync(500);
      await expect(lookup).resolves.toBeNull();
    } finally {
      jest.useRealTimers();
    }
  });
});
