/** Listen tokens (issue 33, docs/live.md "Connecting"): CreateListenToken and RedeemListenToken over gRPC. */
import { createHash } from 'node:crypto';
import { createClient, newRequestId, runWithContext, type Database } from '@murmur/kit';
import { openTestDatabase, testMinter } from '@murmur/kit/testing';
import { auth } from '@murmur/proto';
import { AUTH_MIGRATIONS_DIR } from '@murmur/auth';
import { generateListenToken } from '../src/listen-tokens';
import { failure, startHarness, uniqueEmail, type AuthClient, type Harness } from './support';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const T0 = '2026-01-15T12:00:00.000Z';
const at = (ms: number) => new Date(new Date(T0).getTime() + ms);
const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

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

interface Owner {
  userId: string;
  keyId: string;
  keyExpiresAt: Date | undefined;
}

async function newOwner(opts: { expiry?: auth.KeyExpiry; scopes?: string[] } = {}): Promise<Owner> {
  const { user } = await h.client.createUser({ email: uniqueEmail('listen'), name: 'Ada' });
  const { apiKey } = await h.client.createApiKey({ userId: user!.id, name: 'web app', expiry: opts.expiry ?? auth.KeyExpiry.KEY_EXPIRY_90_DAYS, scopes: opts.scopes ?? [] });
  return { userId: user!.id, keyId: apiKey!.id, keyExpiresAt: apiKey!.expiresAt };
}

const create = (o: Owner, scopes: string[] = []) => h.client.createListenToken({ userId: o.userId, keyId: o.keyId, scopes });
const redeem = (token: string) => h.client.redeemListenToken({ token });
const rowsOf = (userId: string) =>
  db.query<Record<string, unknown>>('SELECT * FROM listen_tokens WHERE user_id = $1 ORDER BY created_at', [userId]);

/** The refusal of an unknown, used, expired or malformed token: one code, one actionable message. */
async function expectTokenRefused(call: Promise<unknown>): Promise<void> {
  const err = await failure(call);
  expect({ code: err.code, param: err.param }).toEqual({ code: 'invalid_api_key', param: 'token' });
  expect(err.message).toMatch(/unknown, expired or already used.*60 seconds.*POST \/api\/v1\/listen\/tokens/);
}

describe('token material', () => {
  it('mints distinct lst_ tokens of 32 random bytes in unpadded base64url', () => {
    const tokens = new Set(Array.from({ length: 50 }, () => generateListenToken()));
    expect(tokens.size).toBe(50);
    for (const token of tokens) {
      expect(token).toMatch(/^lst_[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(token.slice(4), 'base64url')).toHaveLength(32);
    }
  });
});

describe('CreateListenToken', () => {
  it('answers an lst_ token expiring 60 s after the clock, and stores only its SHA-256', async () => {
    const o = await newOwner();
    const res = await create(o);
    expect(res.token).toMatch(/^lst_[A-Za-z0-9_-]{43}$/);
    expect(res.expiresAt).toEqual(at(60 * SECOND));
    const rows = await rowsOf(o.userId);
    expect(rows).toEqual([
      { token_hash: sha256(res.token), user_id: o.userId, key_id: o.keyId, session_id: null, scopes: ['read', 'ai'], created_at: at(0), expires_at: at(60 * SECOND), used_at: null },
    ]);
    // Neither the token nor its random part is in any column.
    expect(JSON.stringify(rows)).not.toContain(res.token.slice(4));
    // Nor in any log line.
    expect(JSON.stringify(h.logs.calls)).not.toContain(res.token.slice(4));
  });

  it('gives the token the scopes asked for when the key holds them', async () => {
    const o = await newOwner();
    const { token } = await create(o, ['read']);
    expect((await redeem(token)).principal?.scopes).toEqual(['read']);
  });

  it.each([
    ['a scope the key lacks', { scopes: ['read'] }, ['read', 'ai']],
    ['an unknown scope', {}, ['write']],
  ])('refuses %s as invalid_request naming scopes', async (_name, keyOpts, scopes) => {
    const o = await newOwner(keyOpts);
    const err = await failure(create(o, scopes));
    expect({ code: err.code, param: err.param }).toEqual({ code: 'invalid_request', param: 'scopes' });
    expect(await rowsOf(o.userId)).toEqual([]);
  });

  it("answers not_found for another user's key, like a missing one, and stores nothing", async () => {
    const a = await newOwner();
    const b = await newOwner();
    for (const keyId of [b.keyId, 'key_0000000000000000000000aa']) {
      const err = await failure(h.client.createListenToken({ userId: a.userId, keyId, scopes: [] }));
      expect({ code: err.code, param: err.param }).toEqual({ code: 'not_found', param: 'key_id' });
    }
    expect(await rowsOf(a.userId)).toEqual([]);
  });

  it('refuses a revoked key (invalid_api_key) and an expired one (expired_api_key)', async () => {
    const revoked = await newOwner();
    await h.client.revokeApiKey({ keyId: revoked.keyId, userId: '' });
    expect((await failure(create(revoked))).code).toBe('invalid_api_key');
    const expiring = await newOwner({ expiry: auth.KeyExpiry.KEY_EXPIRY_30_DAYS });
    h.clock.advance(30 * DAY);
    expect((await failure(create(expiring))).code).toBe('expired_api_key');
  });

  it('refuses a read-only caller insufficient_scope before anything is stored', async () => {
    const o = await newOwner({ scopes: ['read'] });
    const asGateway = createClient(auth.AuthServiceClient, `127.0.0.1:${h.running.port}`, { deadlineMs: 5_000, identity: testMinter('gateway') });
    try {
      const principal = { userId: o.userId, keyId: o.keyId, scopes: ['read'] };
      const err = await failure(runWithContext({ requestId: newRequestId(), principal }, () => asGateway.createListenToken({ userId: o.userId, keyId: o.keyId, scopes: [] })));
      expect(err.code).toBe('insufficient_scope');
      expect(await rowsOf(o.userId)).toEqual([]);
    } finally {
      asGateway.close();
    }
  });

  it('deletes tokens expired over an hour ago when it makes one, and keeps younger ones', async () => {
    const o = await newOwner();
    const old = await create(o);
    h.clock.advance(30 * MINUTE);
    const recent = await create(o);
    expect((await rowsOf(o.userId)).map((r) => r.token_hash)).toEqual([sha256(old.token), sha256(recent.token)]);
    // Now old expired 1 h 0 min 1 s ago, recent 30 min 1 s ago.
    h.clock.advance(30 * MINUTE + 61 * SECOND);
    const fresh = await create(o);
    expect((await rowsOf(o.userId)).map((r) => r.token_hash)).toEqual([sha256(recent.token), sha256(fresh.token)]);
  });
});

describe('RedeemListenToken', () => {
  it('answers the principal of the token’s key once, marks it used, and refuses it the second time', async () => {
    const o = await newOwner();
    const { token } = await create(o);
    h.clock.advance(5 * SECOND);
    const res = await redeem(token);
    expect(res.principal).toEqual({ userId: o.userId, keyId: o.keyId, keyExpiresAt: o.keyExpiresAt, scopes: ['read', 'ai'], clientId: '' });
    expect((await rowsOf(o.userId))[0]?.used_at).toEqual(at(5 * SECOND));
    await expectTokenRefused(redeem(token));
  });

  it('answers each token its own owner: one user’s token never acts for another', async () => {
    const a = await newOwner();
    const b = await newOwner();
    const ta = await create(a);
    const tb = await create(b);
    expect((await redeem(tb.token)).principal?.userId).toBe(b.userId);
    expect((await redeem(ta.token)).principal?.userId).toBe(a.userId);
  });

  it.each([
    ['accepts', '59.999 s', 60 * SECOND - 1, true],
    ['refuses', 'exactly 60 s', 60 * SECOND, false],
    ['refuses', '1 hour', HOUR, false],
  ])('%s a token %s after it was made', async (_verb, _when, ms, ok) => {
    const o = await newOwner();
    const { token } = await create(o);
    h.clock.advance(ms);
    if (ok) expect((await redeem(token)).principal?.userId).toBe(o.userId);
    else await expectTokenRefused(redeem(token));
  });

  it('refuses a token whose key was revoked after it was made, saying so', async () => {
    const o = await newOwner();
    const { token } = await create(o);
    await h.client.revokeApiKey({ keyId: o.keyId, userId: '' });
    const err = await failure(redeem(token));
    expect({ code: err.code, param: err.param }).toEqual({ code: 'invalid_api_key', param: 'token' });
    expect(err.message).toMatch(/API key this listen token was made with has been revoked or has expired/);
  });

  it('refuses a token whose key expired after it was made', async () => {
    const o = await newOwner({ expiry: auth.KeyExpiry.KEY_EXPIRY_30_DAYS });
    h.clock.advance(30 * DAY - 10 * SECOND);
    const { token } = await create(o);
    h.clock.advance(10 * SECOND);
    expect((await failure(redeem(token))).message).toMatch(/revoked or has expired/);
  });

  it.each([
    ['empty', ''],
    ['an API key', `svc_${'a'.repeat(64)}`],
    ['a sign-in token', `sit_${'A'.repeat(43)}`],
    ['42 characters', `lst_${'A'.repeat(42)}`],
    ['44 characters', `lst_${'A'.repeat(44)}`],
    ['a character outside base64url', `lst_${'A'.repeat(42)}+`],
  ])('refuses %s without touching the database', async (_name, token) => {
    h.probe.statements.length = 0;
    await expectTokenRefused(redeem(token));
    expect(h.probe.statements).toEqual([]);
  });

  it('refuses a well-formed token it never made', async () => {
    await expectTokenRefused(redeem(generateListenToken()));
  });

  it('lets exactly one of two concurrent redemptions through', async () => {
    const o = await newOwner();
    const { token } = await create(o);
    const outcomes = await Promise.allSettled([redeem(token), redeem(token)]);
    expect(outcomes.map((x) => x.status).sort()).toEqual(['fulfilled', 'rejected']);
  });

  it('is refused to a developer key: only the gateway spends listen tokens', async () => {
    const { user } = await h.client.createUser({ email: uniqueEmail('listen'), name: 'Ada' });
    const { apiKey, key } = await h.client.createApiKey({ userId: user!.id, name: 'k', expiry: auth.KeyExpiry.KEY_EXPIRY_90_DAYS, scopes: [] });
    const o: Owner = { userId: user!.id, keyId: apiKey!.id, keyExpiresAt: apiKey!.expiresAt };
    const { token } = await create(o);
    const direct: AuthClient = createClient(auth.AuthServiceClient, `127.0.0.1:${h.running.port}`, { deadlineMs: 5_000 });
    try {
      const err = await failure(direct.redeemListenToken({ token }, { metadata: { authorization: `Bearer ${key}` } }));
      expect(err.code).toBe('permission_denied');
    } finally {
      direct.close();
    }
    // Not spent by the refused call.
    expect((await redeem(token)).principal?.userId).toBe(o.userId);
  });
});

describe('session-bound tokens (the app\'s Record page)', () => {
  /** A user signed in through the sign-in stand-in: their session's id and token. */
  async function signedIn(): Promise<{ userId: string; sessionId: string; sessionToken: string; sessionExpiresAt: Date }> {
    const { user } = await h.client.createUser({ email: uniqueEmail('record'), name: 'Ada' });
    const { token } = await h.client.createSignInLink({ userId: user!.id });
    const { sessionToken, session } = await h.client.startSession({ signInToken: token });
    return { userId: user!.id, sessionId: session!.id, sessionToken, sessionExpiresAt: session!.expiresAt! };
  }
  const createFor = (s: { userId: string; sessionId: string }, scopes: string[] = []) => h.client.createListenToken({ userId: s.userId, keyId: s.sessionId, scopes });

  it('mints a token for a live session with full access, bound to the session, and redeems it once as that user', async () => {
    const s = await signedIn();
    const res = await createFor(s);
    expect(res.expiresAt).toEqual(at(60 * SECOND));
    expect(await rowsOf(s.userId)).toEqual([
      { token_hash: sha256(res.token), user_id: s.userId, key_id: null, session_id: s.sessionId, scopes: ['read', 'ai'], created_at: at(0), expires_at: at(60 * SECOND), used_at: null },
    ]);
    h.clock.advance(5 * SECOND);
    expect((await redeem(res.token)).principal).toEqual({ userId: s.userId, keyId: s.sessionId, keyExpiresAt: s.sessionExpiresAt, scopes: ['read', 'ai'], clientId: '' });
    await expectTokenRefused(redeem(res.token));
    expect(JSON.stringify(h.logs.calls)).not.toContain(res.token.slice(4));
    expect(JSON.stringify(h.logs.calls)).not.toContain(s.sessionToken.slice(4));
  });

  it('refuses a token whose session was signed out after it was made, saying so', async () => {
    const s = await signedIn();
    const { token } = await createFor(s);
    await h.client.endSession({ sessionToken: s.sessionToken });
    const err = await failure(redeem(token));
    expect({ code: err.code, param: err.param }).toEqual({ code: 'invalid_api_key', param: 'token' });
    expect(err.message).toMatch(/sign-in session this listen token was made for has ended or expired.*Sign in again/);
    // Spent all the same.
    await expectTokenRefused(redeem(token));
  });

  it('refuses a token whose session expired between minting and redeeming', async () => {
    const s = await signedIn();
    h.clock.advance(12 * HOUR - 10 * SECOND);
    const { token } = await createFor(s);
    h.clock.advance(10 * SECOND);
    expect((await failure(redeem(token))).message).toMatch(/has ended or expired/);
  });

  it.each([
    ['an ended session', async (s: { sessionToken: string }) => void (await h.client.endSession({ sessionToken: s.sessionToken }))],
    ['an expired session', async () => void h.clock.advance(12 * HOUR)],
  ])('answers not_found for %s and stores nothing', async (_name, end) => {
    const s = await signedIn();
    await end(s);
    const err = await failure(createFor(s));
    expect({ code: err.code, param: err.param }).toEqual({ code: 'not_found', param: 'key_id' });
    expect(await rowsOf(s.userId)).toEqual([]);
  });

  it("answers not_found for another user's session, like an unknown one", async () => {
    const a = await signedIn();
    const b = await signedIn();
    for (const sessionId of [b.sessionId, 'ses_0000000000000000000000aa']) {
      const err = await failure(createFor({ userId: a.userId, sessionId }));
      expect({ code: err.code, param: err.param }).toEqual({ code: 'not_found', param: 'key_id' });
    }
    expect(await rowsOf(a.userId)).toEqual([]);
  });

  it('gives a narrower token when asked, and refuses an unknown scope', async () => {
    const s = await signedIn();
    const { token } = await createFor(s, ['read']);
    expect((await redeem(token)).principal?.scopes).toEqual(['read']);
    expect((await failure(createFor(s, ['write']))).param).toBe('scopes');
  });

  it('keeps a token bound to exactly one of a key and a session in the database', async () => {
    const s = await signedIn();
    const o = await newOwner();
    const insert = (keyId: string | null, sessionId: string | null) =>
      db.query(
        `INSERT INTO listen_tokens (token_hash, user_id, key_id, session_id, scopes, created_at, expires_at) VALUES ($1, $2, $3, $4, '{read}', now(), now() + interval '1 minute')`,
        [sha256(generateListenToken()), s.userId, keyId, sessionId],
      );
    await expect(insert(o.keyId, s.sessionId)).rejects.toThrow(/listen_tokens_bound_once/);
    await expect(insert(null, null)).rejects.toThrow(/listen_tokens_bound_once/);
  });
});
