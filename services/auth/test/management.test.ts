import { MAX_ACTIVE_API_KEYS } from '@murmur/contract';
import { type Database } from '@murmur/kit';
import { openTestDatabase } from '@murmur/kit/testing';
import { auth } from '@murmur/proto';
import { API_KEY_PATTERN, AUTH_MIGRATIONS_DIR, hashKey } from '@murmur/auth';
import { failure, startHarness, uniqueEmail, type Harness } from './support';

const SECOND = 1000;
const DAY = 86_400 * SECOND;
const T0 = '2026-01-15T12:00:00.000Z';

let db: Database;
let h: Harness;
beforeAll(async () => {
  db = await openTestDatabase('auth', AUTH_MIGRATIONS_DIR);
  h = await startHarness(db);
});
afterAll(async () => {
  await h.stop();
  await db.close();
});
beforeEach(() => h.clock.set(T0));

const expectInvalid = async (call: Promise<unknown>, param: string) => {
  const err = await failure(call);
  expect({ code: err.code, param: err.param }).toEqual({ code: 'invalid_request', param });
};
const expectNotFound = async (call: Promise<unknown>) => {
  expect((await failure(call)).code).toBe('not_found');
};

describe('users', () => {
  it('creates a user with a usr_ id, the email lowercased and the creation time of the clock', async () => {
    const email = uniqueEmail('Ada.Lovelace');
    const { user } = await h.client.createUser({ email: `  ${email.toUpperCase()} `, name: ' Ada Lovelace ' });
    expect(user).toEqual({ id: expect.stringMatching(/^usr_[0-9a-v]+$/), email: email.toLowerCase(), name: 'Ada Lovelace', createdAt: new Date(T0) });
  });

  it('rejects a second user with the same email in another case', async () => {
    const email = uniqueEmail();
    await h.client.createUser({ email, name: '' });
    await expectInvalid(h.client.createUser({ email: email.toUpperCase(), name: 'Twin' }), 'email');
  });

  it.each(['', 'ada', 'ada@example', 'ada @example.com', 'ada@@example.com'])('rejects the email %j', async (email) => {
    await expectInvalid(h.client.createUser({ email, name: 'Ada' }), 'email');
  });

  it('rejects a name over 200 characters', async () => {
    await expectInvalid(h.client.createUser({ email: uniqueEmail(), name: 'n'.repeat(201) }), 'name');
  });

  it('finds a user by id and by email in any case', async () => {
    const email = uniqueEmail();
    const { user } = await h.client.createUser({ email, name: 'Grace' });
    expect((await h.client.getUser({ lookup: { $case: 'userId', value: user!.id } })).user).toEqual(user);
    expect((await h.client.getUser({ lookup: { $case: 'email', value: ` ${email.toUpperCase()}` } })).user).toEqual(user);
  });

  it('answers not_found for an unknown id or email', async () => {
    await expectNotFound(h.client.getUser({ lookup: { $case: 'userId', value: 'usr_0000000000000000000000aa' } }));
    await expectNotFound(h.client.getUser({ lookup: { $case: 'email', value: uniqueEmail('nobody') } }));
  });

  it('rejects a malformed user id, a malformed email and a missing lookup', async () => {
    await expectInvalid(h.client.getUser({ lookup: { $case: 'userId', value: 'key_0000000000000000000000aa' } }), 'user_id');
    await expectInvalid(h.client.getUser({ lookup: { $case: 'userId', value: '' } }), 'user_id');
    await expectInvalid(h.client.getUser({ lookup: { $case: 'email', value: 'not-an-email' } }), 'email');
    await expectInvalid(h.client.getUser({ lookup: undefined }), 'user_id');
  });
});

describe('ListUsers', () => {
  const listAll = async (pageSize: number) => {
    const seen: auth.User[] = [];
    let pageToken = '';
    let pages = 0;
    do {
      const page = await h.client.listUsers({ pageSize, pageToken });
      expect(page.users.length).toBeLessThanOrEqual(pageSize);
      seen.push(...page.users);
      pageToken = page.nextPageToken;
      pages += 1;
    } while (pageToken !== '' && pages < 1000);
    return seen;
  };

  it('pages through every user exactly once, oldest first, ties broken by id', async () => {
    // Several users share a creation time, so the keyset must also order by id.
    for (let i = 0; i < 7; i += 1) {
      if (i % 3 === 0) h.clock.advance(SECOND);
      await h.client.createUser({ email: uniqueEmail('page'), name: `Page ${i}` });
    }
    const [count] = await db.query<{ n: string }>('SELECT count(*) AS n FROM users');
    const all = await listAll(2);
    expect(all).toHaveLength(Number(count?.n));
    expect(new Set(all.map((u) => u.id)).size).toBe(all.length);
    const sorted = [...all].sort((a, b) => a.createdAt!.getTime() - b.createdAt!.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    expect(all.map((u) => u.id)).toEqual(sorted.map((u) => u.id));
  });

  it('returns 20 users by default and an empty token on the last page', async () => {
    for (let i = 0; i < 21; i += 1) await h.client.createUser({ email: uniqueEmail('bulk'), name: '' });
    const first = await h.client.listUsers({ pageSize: 0, pageToken: '' });
    expect(first.users).toHaveLength(20);
    expect(first.nextPageToken).not.toBe('');
    const second = await h.client.listUsers({ pageSize: 0, pageToken: first.nextPageToken });
    expect(second.users[0]?.id).not.toBe(first.users[19]?.id);
  });

  it.each([-1, 101])('rejects page_size %i', async (pageSize) => {
    await expectInvalid(h.client.listUsers({ pageSize, pageToken: '' }), 'page_size');
  });

  it('rejects a forged or tampered page token', async () => {
    await expectInvalid(h.client.listUsers({ pageSize: 1, pageToken: 'garbage' }), 'page_token');
    const { nextPageToken } = await h.client.listUsers({ pageSize: 1, pageToken: '' });
    const [body, sig] = nextPageToken.split('.');
    const forged = Buffer.from(JSON.stringify({ k: 'users', t: 0, i: 'usr_00000000' })).toString('base64url');
    await expectInvalid(h.client.listUsers({ pageSize: 1, pageToken: `${forged}.${sig}` }), 'page_token');
    await expectInvalid(h.client.listUsers({ pageSize: 1, pageToken: `${body}.${sig}x` }), 'page_token');
  });
});

describe('API keys', () => {
  const newUser = async () => (await h.client.createUser({ email: uniqueEmail('keys'), name: 'Keys' })).user!.id;

  it('returns the full key once, with a hint, the creation time and a 90-day default expiry', async () => {
    const userId = await newUser();
    const { apiKey, key } = await h.client.createApiKey({ userId, name: ' CI pipeline ', expiry: auth.KeyExpiry.KEY_EXPIRY_UNSPECIFIED, scopes: [] });
    expect(key).toMatch(API_KEY_PATTERN);
    expect(apiKey).toEqual({
      id: expect.stringMatching(/^key_[0-9a-v]+$/),
      userId,
      name: 'CI pipeline',
      hint: `svc_${key.slice(4, 8)}…${key.slice(-4)}`,
      createdAt: new Date(T0),
      expiresAt: new Date(Date.parse(T0) + 90 * DAY),
      lastUsedAt: undefined,
      revokedAt: undefined,
      scopes: ['read', 'ai'],
    });
  });

  it('makes a read-only key: listed and verified with the read scope alone, cached with it too', async () => {
    const userId = await newUser();
    const { apiKey, key } = await h.client.createApiKey({ userId, name: 'dashboard', expiry: 0, scopes: ['read'] });
    expect(apiKey?.scopes).toEqual(['read']);
    expect((await h.client.listApiKeys({ userId })).apiKeys.map((k) => k.scopes)).toEqual([['read']]);
    // The first verification reads the database, the second the verification cache: both say read-only.
    for (let i = 0; i < 2; i++) expect((await h.client.verifyKey({ authorization: `Bearer ${key}`, resource: '' })).principal?.scopes).toEqual(['read']);
    // Asked in another order or twice, full access is the canonical pair.
    expect((await h.client.createApiKey({ userId, name: 'full', expiry: 0, scopes: ['ai', 'read', 'ai'] })).apiKey?.scopes).toEqual(['read', 'ai']);
  });

  it.each([[['ai']], [['write']], [['read', 'admin']], [['']]])('refuses the key scopes %j as invalid_request naming scopes', async (scopes) => {
    const userId = await newUser();
    await expectInvalid(h.client.createApiKey({ userId, name: 'k', expiry: 0, scopes }), 'scopes');
    expect((await h.client.listApiKeys({ userId })).apiKeys).toEqual([]);
  });

  it('gives keys made before key scopes full access (the migration default)', async () => {
    const userId = await newUser();
    const { apiKey, key } = await h.client.createApiKey({ userId, name: 'old', expiry: 0, scopes: ['read'] });
    // A row as an older auth inserted it: no scopes column named, so the default.
    await db.query(`UPDATE api_keys SET scopes = DEFAULT WHERE id = $1`, [apiKey!.id]);
    expect((await h.client.listApiKeys({ userId })).apiKeys[0]?.scopes).toEqual(['read', 'ai']);
    h.clock.advance(61 * SECOND); // past auth's verification cache
    expect((await h.client.verifyKey({ authorization: `Bearer ${key}`, resource: '' })).principal?.scopes).toEqual(['read', 'ai']);
  });

  it.each<[string, auth.KeyExpiry, number | null]>([
    ['30 days', auth.KeyExpiry.KEY_EXPIRY_30_DAYS, 30],
    ['90 days', auth.KeyExpiry.KEY_EXPIRY_90_DAYS, 90],
    ['365 days', auth.KeyExpiry.KEY_EXPIRY_365_DAYS, 365],
    ['never', auth.KeyExpiry.KEY_EXPIRY_NEVER, null],
  ])('sets the expiry %s from the clock', async (_name, expiry, days) => {
    const { apiKey } = await h.client.createApiKey({ userId: await newUser(), name: 'k', expiry, scopes: [] });
    expect(apiKey?.expiresAt).toEqual(days === null ? undefined : new Date(Date.parse(T0) + days * DAY));
  });

  it('stores only the hash and the hint, never the raw key', async () => {
    const { apiKey, key } = await h.client.createApiKey({ userId: await newUser(), name: 'scan me', expiry: auth.KeyExpiry.KEY_EXPIRY_NEVER, scopes: [] });
    const rows = await db.query<{ row: Record<string, unknown> }>('SELECT row_to_json(k) AS row FROM api_keys k WHERE id = $1', [apiKey!.id]);
    expect(rows).toHaveLength(1);
    const row = rows[0]!.row;
    expect(row.key_hash).toBe(hashKey(key));
    const stored = JSON.stringify(row);
    expect(stored).not.toContain(key);
    expect(stored).not.toContain(key.slice(4));
    expect(stored).not.toContain(key.slice(8, 60)); // nothing beyond the hint's 4 + 4 characters
  });

  it('rejects a malformed user id, an unknown user, an empty name and an unknown expiry', async () => {
    const userId = await newUser();
    await expectInvalid(h.client.createApiKey({ userId: 'nope', name: 'k', expiry: 0, scopes: [] }), 'user_id');
    await expectNotFound(h.client.createApiKey({ userId: 'usr_0000000000000000000000aa', name: 'k', expiry: 0, scopes: [] }));
    await expectInvalid(h.client.createApiKey({ userId, name: '  ', expiry: 0, scopes: [] }), 'name');
    await expectInvalid(h.client.createApiKey({ userId, name: 'k', expiry: 99 as auth.KeyExpiry, scopes: [] }), 'expiry');
    expect((await h.client.listApiKeys({ userId })).apiKeys).toEqual([]);
  });

  it("lists a user's keys newest first, revoked ones included, and nobody else's", async () => {
    const userId = await newUser();
    const other = await newUser();
    await h.client.createApiKey({ userId: other, name: 'not mine', expiry: 0, scopes: [] });
    const created: string[] = [];
    for (const name of ['first', 'second', 'third']) {
      h.clock.advance(SECOND);
      created.push((await h.client.createApiKey({ userId, name, expiry: 0, scopes: [] })).apiKey!.id);
    }
    await h.client.revokeApiKey({ keyId: created[0]!, userId: '' });
    const { apiKeys } = await h.client.listApiKeys({ userId });
    expect(apiKeys.map((k) => k.name)).toEqual(['third', 'second', 'first']);
    expect(apiKeys.map((k) => k.revokedAt !== undefined)).toEqual([false, false, true]);
  });

  describe(`the cap of ${MAX_ACTIVE_API_KEYS} active keys a user`, () => {
    const create = (userId: string, expiry = auth.KeyExpiry.KEY_EXPIRY_90_DAYS) => h.client.createApiKey({ userId, name: 'k', expiry, scopes: [] });
    const fill = async (userId: string, n: number, expiry?: auth.KeyExpiry) => {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) ids.push((await create(userId, expiry)).apiKey!.id);
      return ids;
    };

    it('refuses one more with api_key_limit_reached, saying to revoke one; a revoked key frees its place', async () => {
      const userId = await newUser();
      const ids = await fill(userId, MAX_ACTIVE_API_KEYS);
      const err = await failure(create(userId));
      expect([err.code, err.httpStatus]).toEqual(['api_key_limit_reached', 409]);
      expect(err.message).toMatch(/50 active API keys.*Revoke a key/);
      expect((await h.client.listApiKeys({ userId })).apiKeys).toHaveLength(MAX_ACTIVE_API_KEYS);
      // Another user is not affected.
      expect((await create(await newUser())).apiKey).toBeDefined();
      await h.client.revokeApiKey({ keyId: ids[0]!, userId });
      expect((await create(userId)).apiKey?.revokedAt).toBeUndefined();
      expect((await failure(create(userId))).code).toBe('api_key_limit_reached');
    });

    it('does not count expired keys', async () => {
      const userId = await newUser();
      await fill(userId, MAX_ACTIVE_API_KEYS, auth.KeyExpiry.KEY_EXPIRY_30_DAYS);
      expect((await failure(create(userId))).code).toBe('api_key_limit_reached');
      h.clock.set(new Date(Date.parse(T0) + 30 * DAY));
      expect((await create(userId)).apiKey).toBeDefined();
    });

    it('lets exactly as many concurrent creations through as there are places left', async () => {
      const userId = await newUser();
      await fill(userId, MAX_ACTIVE_API_KEYS - 2);
      const outcomes = await Promise.allSettled(Array.from({ length: 6 }, () => create(userId)));
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(2);
      for (const o of outcomes) if (o.status === 'rejected') expect((o.reason as { code: string }).code).toBe('api_key_limit_reached');
      expect((await h.client.listApiKeys({ userId })).apiKeys).toHaveLength(MAX_ACTIVE_API_KEYS);
    });
  });

  it('answers not_found when listing the keys of an unknown user, invalid_request for a malformed id', async () => {
    await expectNotFound(h.client.listApiKeys({ userId: 'usr_0000000000000000000000aa' }));
    await expectInvalid(h.client.listApiKeys({ userId: '' }), 'user_id');
  });

  it('revokes a key once: revoking again is a no-op that returns the key with the first revocation time', async () => {
    const { apiKey, key } = await h.client.createApiKey({ userId: await newUser(), name: 'k', expiry: 0, scopes: [] });
    h.clock.advance(5 * SECOND);
    const first = await h.client.revokeApiKey({ keyId: apiKey!.id, userId: '' });
    expect(first.apiKey?.revokedAt).toEqual(new Date(Date.parse(T0) + 5 * SECOND));
    h.clock.advance(5 * SECOND);
    const second = await h.client.revokeApiKey({ keyId: apiKey!.id, userId: '' });
    expect(second.apiKey).toEqual(first.apiKey);
    expect((await failure(h.client.verifyKey({ authorization: `Bearer ${key}`, resource: '' }))).code).toBe('invalid_api_key');
  });

  it('revokes only a key of the given user when user_id is set; another user’s key is not_found', async () => {
    const owner = await newUser();
    const stranger = await newUser();
    const { apiKey, key } = await h.client.createApiKey({ userId: owner, name: 'k', expiry: 0, scopes: [] });
    await expectNotFound(h.client.revokeApiKey({ keyId: apiKey!.id, userId: stranger }));
    expect((await h.client.verifyKey({ authorization: `Bearer ${key}`, resource: '' })).principal?.keyId).toBe(apiKey!.id);
    const revoked = await h.client.revokeApiKey({ keyId: apiKey!.id, userId: owner });
    expect(revoked.apiKey?.revokedAt).toBeDefined();
    await expectInvalid(h.client.revokeApiKey({ keyId: apiKey!.id, userId: 'nope' }), 'user_id');
  });

  it('answers not_found for an unknown key id, invalid_request for a malformed one', async () => {
    await expectNotFound(h.client.revokeApiKey({ keyId: 'key_0000000000000000000000aa', userId: '' }));
    await expectInvalid(h.client.revokeApiKey({ keyId: 'usr_0000000000000000000000aa', userId: '' }), 'key_id');
    await expectInvalid(h.client.revokeApiKey({ keyId: '', userId: '' }), 'key_id');
  });
});
