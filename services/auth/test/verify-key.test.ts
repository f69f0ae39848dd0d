import type { Database, KeyValueCache } from '@murmur/kit';
import { describeIfReal, ManualClock, openTestDatabase } from '@murmur/kit/testing';
import { auth } from '@murmur/proto';
import { AUTH_MIGRATIONS_DIR } from '@murmur/auth';
import { failure, noCache, redisCacheUnavailable, startHarness, testRedisCache, uniqueEmail, type AuthClient, type Harness } from './support';

const SECOND = 1000;
const DAY = 86_400 * SECOND;
const T0 = '2026-01-15T12:00:00.000Z';

let db: Database;
beforeAll(async () => {
  db = await openTestDatabase('auth', AUTH_MIGRATIONS_DIR);
});
afterAll(async () => {
  await db.close();
});

async function newUser(client: AuthClient): Promise<string> {
  const { user } = await client.createUser({ email: uniqueEmail(), name: 'Ada' });
  return user!.id;
}

async function newKey(client: AuthClient, userId: string, expiry = auth.KeyExpiry.KEY_EXPIRY_90_DAYS) {
  const res = await client.createApiKey({ userId, name: 'test key', expiry, scopes: [] });
  return { key: res.key, id: res.apiKey!.id, expiresAt: res.apiKey!.expiresAt };
}

const verify = (client: AuthClient, authorization: string, resource = '') => client.verifyKey({ authorization, resource });

describe('VerifyKey over gRPC: the authentication matrix', () => {
  let h: Harness;
  let userId: string;
  let valid: { key: string; id: string };
  let revoked: { key: string; id: string };
  const hex = () => valid.key.slice(4);

  beforeAll(async () => {
    h = await startHarness(db);
    userId = await newUser(h.client);
    valid = await newKey(h.client, userId);
    revoked = await newKey(h.client, userId);
    await h.client.revokeApiKey({ keyId: revoked.id, userId: '' });
  });
  afterAll(async () => {
    await h.stop();
  });

  // [behaviour, header, expected code]; these never reach the cache or the database.
  const malformed: Array<[string, () => string, string]> = [
    ['empty', () => '', 'missing_api_key'],
    ['whitespace only', () => '  \t ', 'missing_api_key'],
    ['the Basic scheme', () => `Basic ${valid.key}`, 'invalid_api_key'],
    ['the Token scheme', () => `Token ${valid.key}`, 'invalid_api_key'],
    ['no scheme', () => valid.key, 'invalid_api_key'],
    ['a malformed key', () => 'Bearer not-a-key', 'invalid_api_key'],
    ['63 hex characters', () => `Bearer svc_${hex().slice(1)}`, 'invalid_api_key'],
    ['65 hex characters', () => `Bearer svc_${hex()}0`, 'invalid_api_key'],
    ['a non-hex character', () => `Bearer svc_${hex().slice(1)}z`, 'invalid_api_key'],
    ['uppercase hex', () => `Bearer svc_${hex().toUpperCase()}`, 'invalid_api_key'],
    ['extra parts', () => `Bearer ${valid.key} ${valid.key}`, 'invalid_api_key'],
  ];

  it('answers missing_api_key when no header was sent', async () => {
    await expect(h.client.verifyKey(auth.VerifyKeyRequest.fromPartial({}))).rejects.toMatchObject({ code: 'missing_api_key' });
  });

  it.each(malformed)('rejects %s without touching the database', async (_name, header, code) => {
    h.probe.statements.length = 0;
    const err = await failure(verify(h.client, header()));
    expect(err.code).toBe(code);
    expect(h.probe.statements).toEqual([]);
  });

  it.each([
    ['the canonical scheme', 'Bearer'],
    ['a lowercase scheme', 'bearer'],
    ['an uppercase scheme', 'BEARER'],
  ])('accepts %s and returns the principal', async (_name, scheme) => {
    const res = await verify(h.client, `${scheme} ${valid.key}`);
    expect(res.principal).toEqual({ userId, keyId: valid.id, keyExpiresAt: new Date(Date.parse(T0) + 90 * DAY), scopes: ['read', 'ai'], clientId: '' });
  });

  it.each([
    ['the MCP resource', 'https://api.murmur.test/mcp'],
    ['a resource that does not parse', 'not a url'],
  ])('accepts an API key whatever the resource says (%s)', async (_name, resource) => {
    const res = await verify(h.client, `Bearer ${valid.key}`, resource);
    expect(res.principal).toMatchObject({ userId, keyId: valid.id, scopes: ['read', 'ai'], clientId: '' });
  });

  it('rejects an unknown well-formed key as invalid', async () => {
    expect((await failure(verify(h.client, `Bearer svc_${'0'.repeat(64)}`))).code).toBe('invalid_api_key');
  });

  it('rejects a revoked key as invalid', async () => {
    expect((await failure(verify(h.client, `Bearer ${revoked.key}`))).code).toBe('invalid_api_key');
  });

  it('travels as UNAUTHENTICATED with the reason in ErrorInfo and a message saying what to do', async () => {
    const err = await failure(verify(h.client, 'Token abc'));
    expect(err.httpStatus).toBe(401);
    expect(err.message).toMatch(/Settings → Developer/);
  });

  it('never writes a raw key to the logs', async () => {
    const logged = JSON.stringify(h.logs.calls);
    expect(logged).toContain(valid.id);
    for (const key of [valid.key, revoked.key]) {
      expect(logged).not.toContain(key.slice(4));
    }
  });
});

describe('VerifyKey over gRPC: expiry against the clock', () => {
  let h: Harness;
  let userId: string;
  beforeAll(async () => {
    h = await startHarness(db);
    userId = await newUser(h.client);
  });
  afterAll(async () => {
    await h.stop();
  });
  beforeEach(() => h.clock.set(T0));

  it('accepts a 30-day key one second before it expires and rejects it exactly at expiry, also from the cache', async () => {
    const k = await newKey(h.client, userId, auth.KeyExpiry.KEY_EXPIRY_30_DAYS);
    expect(k.expiresAt).toEqual(new Date(Date.parse(T0) + 30 * DAY));
    h.clock.set(new Date(k.expiresAt!.getTime() - SECOND));
    expect((await verify(h.client, `Bearer ${k.key}`)).principal?.keyId).toBe(k.id);
    // The key is now cached for 60 s; expiry must still be checked on the hit.
    h.probe.statements.length = 0;
    h.clock.set(k.expiresAt!);
    expect((await failure(verify(h.client, `Bearer ${k.key}`))).code).toBe('expired_api_key');
    expect(h.probe.statements).toEqual([]);
  });

  it('rejects a key one second past expiry when it was never cached', async () => {
    const k = await newKey(h.client, userId, auth.KeyExpiry.KEY_EXPIRY_30_DAYS);
    h.clock.set(new Date(k.expiresAt!.getTime() + SECOND));
    expect((await failure(verify(h.client, `Bearer ${k.key}`))).code).toBe('expired_api_key');
  });

  it('rejects a key exactly at expiry when it was never cached', async () => {
    const k = await newKey(h.client, userId, auth.KeyExpiry.KEY_EXPIRY_365_DAYS);
    h.clock.set(k.expiresAt!);
    expect((await failure(verify(h.client, `Bearer ${k.key}`))).code).toBe('expired_api_key');
  });

  it('still accepts a never-expiring key after 10 years, without an expiry in the principal', async () => {
    const k = await newKey(h.client, userId, auth.KeyExpiry.KEY_EXPIRY_NEVER);
    expect(k.expiresAt).toBeUndefined();
    h.clock.advance(3653 * DAY);
    expect((await verify(h.client, `Bearer ${k.key}`)).principal).toEqual({ userId, keyId: k.id, keyExpiresAt: undefined, scopes: ['read', 'ai'], clientId: '' });
  });

  it('reports a revoked key as invalid even after it expired', async () => {
    const k = await newKey(h.client, userId, auth.KeyExpiry.KEY_EXPIRY_30_DAYS);
    await h.client.revokeApiKey({ keyId: k.id, userId: '' });
    h.clock.advance(31 * DAY);
    expect((await failure(verify(h.client, `Bearer ${k.key}`))).code).toBe('invalid_api_key');
  });
});

type CacheMaker = () => Promise<{ cache?: KeyValueCache; close(): Promise<void> }>;
/** MemoryCache and RedisCache (REDIS_URL, else a redis-server of the test's own), both always registered (describeIfReal). */
const cacheKinds: Array<[string, string | undefined, CacheMaker]> = [
  ['in-process MemoryCache', undefined, async () => ({ cache: undefined, close: async () => undefined })],
  ['RedisCache', redisCacheUnavailable, testRedisCache],
];

for (const [kind, why, makeCache] of cacheKinds) describeIfReal(why, `VerifyKey with a warm ${kind}`, () => {
  let h: Harness;
  let closeCache: () => Promise<void>;
  beforeAll(async () => {
    const made = await makeCache();
    closeCache = made.close;
    h = await startHarness(db, { cache: made.cache });
  });
  afterAll(async () => {
    await h.stop();
    await closeCache();
  });

  it('serves a verified key from the cache without the database', async () => {
    const k = await newKey(h.client, await newUser(h.client));
    await verify(h.client, `Bearer ${k.key}`);
    h.probe.statements.length = 0;
    expect((await verify(h.client, `Bearer ${k.key}`)).principal?.keyId).toBe(k.id);
    expect(h.probe.statements).toEqual([]);
  });

  it('fails a revoked key on the very next request', async () => {
    const k = await newKey(h.client, await newUser(h.client));
    await verify(h.client, `Bearer ${k.key}`);
    await verify(h.client, `Bearer ${k.key}`); // warm: served from the cache
    await h.client.revokeApiKey({ keyId: k.id, userId: '' });
    expect((await failure(verify(h.client, `Bearer ${k.key}`))).code).toBe('invalid_api_key');
  });
});

describe('VerifyKey: last_used_at', () => {
  let h: Harness;
  beforeAll(async () => {
    // No cache, so every verification reaches the database and the SQL guard alone throttles.
    h = await startHarness(db, { cache: noCache, clock: new ManualClock(T0) });
  });
  afterAll(async () => {
    await h.stop();
  });

  const lastUsed = async (userId: string) => (await h.client.listApiKeys({ userId })).apiKeys[0]?.lastUsedAt;

  it('is written at most once a minute per key', async () => {
    h.clock.set(T0);
    const userId = await newUser(h.client);
    const k = await newKey(h.client, userId);
    expect(await lastUsed(userId)).toBeUndefined();

    const step = async (advanceMs: number) => {
      h.clock.advance(advanceMs);
      await verify(h.client, `Bearer ${k.key}`);
      await h.running.idle();
      return lastUsed(userId);
    };
    const t0 = Date.parse(T0);
    expect(await step(0)).toEqual(new Date(t0));
    expect(await step(30 * SECOND)).toEqual(new Date(t0));
    expect(await step(30 * SECOND)).toEqual(new Date(t0)); // exactly 60 s later: still throttled
    expect(await step(1 * SECOND)).toEqual(new Date(t0 + 61 * SECOND));
  });

  it('never delays or fails a verification when the write fails, and logs it without the key', async () => {
    h.clock.set(T0);
    const userId = await newUser(h.client);
    const k = await newKey(h.client, userId);
    h.probe.failWhen = /SET last_used_at/;
    try {
      expect((await verify(h.client, `Bearer ${k.key}`)).principal?.keyId).toBe(k.id);
      await h.running.idle();
    } finally {
      h.probe.failWhen = null;
    }
    const errors = h.logs.calls.filter((c) => c.level === 'error');
    expect(JSON.stringify(errors)).toContain(k.id);
    expect(JSON.stringify(h.logs.calls)).not.toContain(k.key.slice(4));
    expect(await lastUsed(userId)).toBeUndefined();
  });
});

describe('VerifyKey with the default in-process cache', () => {
  it('keeps a verified key for 60 seconds of the injected clock, then asks the database again', async () => {
    const h = await startHarness(db, { clock: new ManualClock(T0) });
    try {
      const k = await newKey(h.client, await newUser(h.client));
      const lookups = () => h.probe.statements.filter((s) => /FROM api_keys WHERE key_hash/.test(s)).length;
      await verify(h.client, `Bearer ${k.key}`);
      expect(lookups()).toBe(1);
      h.clock.advance(59 * SECOND);
      await verify(h.client, `Bearer ${k.key}`);
      expect(lookups()).toBe(1);
      h.clock.advance(2 * SECOND);
      await verify(h.client, `Bearer ${k.key}`);
      expect(lookups()).toBe(2);
    } finally {
      await h.stop();
    }
  });
});
