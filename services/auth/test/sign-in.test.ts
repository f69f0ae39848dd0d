import { createHash } from 'node:crypto';
import type { Database } from '@murmur/kit';
import { openTestDatabase } from '@murmur/kit/testing';
import { AUTH_MIGRATIONS_DIR } from '@murmur/auth';
import { generateToken } from '../src/sign-in';
import { failure, startHarness, uniqueEmail, type Harness } from './support';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const T0 = '2026-01-15T12:00:00.000Z';
const at = (ms: number) => new Date(new Date(T0).getTime() + ms);
const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
/** 43 base64url characters: the random part of a well-formed token. */
const B64 = 'A'.repeat(42) + 'w';

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

async function newUser(): Promise<string> {
  const { user } = await h.client.createUser({ email: uniqueEmail('signin'), name: 'Ada' });
  return user!.id;
}

async function newLink(userId: string): Promise<string> {
  return (await h.client.createSignInLink({ userId })).token;
}

const expectLinkRefused = async (call: Promise<unknown>) => {
  const err = await failure(call);
  expect(err.code).toBe('not_found');
  expect(err.message).toMatch(/new sign-in link/);
};
const expectSessionRefused = async (call: Promise<unknown>) => {
  expect((await failure(call)).code).toBe('not_found');
};
const sessionsOf = (userId: string) =>
  db.query<{ id: string; token_hash: string; ended_at: Date | null }>('SELECT id, token_hash, ended_at FROM sessions WHERE user_id = $1', [userId]);

/** Runs `call` and answers the SQL statements it sent. */
async function statementsOf(call: () => Promise<unknown>): Promise<string[]> {
  h.probe.statements.length = 0;
  await call().catch(() => undefined);
  return [...h.probe.statements];
}

describe('token material', () => {
  it.each(['sit', 'sst'] as const)('mints distinct %s_ tokens of 32 random bytes in unpadded base64url', (prefix) => {
    const tokens = new Set(Array.from({ length: 50 }, () => generateToken(prefix)));
    expect(tokens.size).toBe(50);
    for (const token of tokens) {
      expect(token).toMatch(new RegExp(`^${prefix}_[A-Za-z0-9_-]{43}$`));
      expect(Buffer.from(token.slice(4), 'base64url')).toHaveLength(32);
    }
  });
});

describe('CreateSignInLink', () => {
  it('returns a sit_ token that expires 15 minutes after the clock', async () => {
    const userId = await newUser();
    const res = await h.client.createSignInLink({ userId });
    expect(res.token).toMatch(/^sit_[A-Za-z0-9_-]{43}$/);
    expect(res.expiresAt).toEqual(at(15 * MINUTE));
  });

  it('answers not_found for an unknown user and stores no link', async () => {
    const unknown = 'usr_0000000000000000000000aa';
    const err = await failure(h.client.createSignInLink({ userId: unknown }));
    expect({ code: err.code, param: err.param }).toEqual({ code: 'not_found', param: 'user_id' });
    expect(await db.query('SELECT 1 FROM sign_in_links WHERE user_id = $1', [unknown])).toEqual([]);
  });

  it.each(['', 'key_0000000000000000000000aa', 'usr_NOT-AN-ID'])('rejects the user id %j without touching the database', async (userId) => {
    let err: unknown;
    const statements = await statementsOf(() => h.client.createSignInLink({ userId }).catch((e: unknown) => ((err = e), undefined)));
    expect(statements).toEqual([]);
    expect(err).toMatchObject({ code: 'invalid_request', param: 'user_id' });
  });
});

describe('StartSession', () => {
  it('opens a 12-hour session for the link’s user, which GetSession then answers', async () => {
    const userId = await newUser();
    const token = await newLink(userId);
    h.clock.advance(MINUTE);
    const started = await h.client.startSession({ signInToken: token });
    expect(started.sessionToken).toMatch(/^sst_[A-Za-z0-9_-]{43}$/);
    expect(started.session).toEqual({ id: expect.stringMatching(/^ses_[0-9a-v]+$/), userId, createdAt: at(MINUTE), expiresAt: at(MINUTE + 12 * HOUR) });
    expect((await h.client.getSession({ sessionToken: started.sessionToken })).session).toEqual(started.session);
  });

  it('refuses the same link a second time, opening no second session', async () => {
    const userId = await newUser();
    const token = await newLink(userId);
    await h.client.startSession({ signInToken: token });
    await expectLinkRefused(h.client.startSession({ signInToken: token }));
    expect(await sessionsOf(userId)).toHaveLength(1);
  });

  it.each([
    ['accepts', '14 min 59 s', 14 * MINUTE + 59 * SECOND, true],
    ['accepts', '15 min - 1 ms', 15 * MINUTE - 1, true],
    ['refuses', 'exactly 15 min', 15 * MINUTE, false],
    ['refuses', '15 min + 1 ms', 15 * MINUTE + 1, false],
  ])('%s a link %s old', async (_verb, _age, ageMs, accepted) => {
    const userId = await newUser();
    const token = await newLink(userId);
    h.clock.advance(ageMs);
    const call = h.client.startSession({ signInToken: token });
    if (accepted) expect((await call).session?.userId).toBe(userId);
    else await expectLinkRefused(call);
    expect(await sessionsOf(userId)).toHaveLength(accepted ? 1 : 0);
  });

  it.each([2, 8])('lets exactly one of %i concurrent StartSession calls with one link succeed', async (n) => {
    const userId = await newUser();
    const token = await newLink(userId);
    const outcomes = await Promise.allSettled(Array.from({ length: n }, () => h.client.startSession({ signInToken: token })));
    const won = outcomes.filter((o) => o.status === 'fulfilled');
    const lost = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as { code?: string }] : []));
    expect(won).toHaveLength(1);
    expect(lost.map((e) => e.code)).toEqual(Array(n - 1).fill('not_found'));
    expect(await sessionsOf(userId)).toHaveLength(1);
  });

  it('refuses a well-formed token that was never issued', async () => {
    await expectLinkRefused(h.client.startSession({ signInToken: generateToken('sit') }));
  });

  it.each([
    ['an empty token', ''],
    ['the bare prefix', 'sit_'],
    ['a short token', `sit_${B64.slice(1)}`],
    ['a long token', `sit_${B64}A`],
    ['a padded token', `sit_${B64}=`],
    ['standard base64 characters', `sit_${B64.slice(2)}+/`],
    ['an upper-case prefix', `SIT_${B64}`],
    ['a session token', `sst_${B64}`],
    ['surrounding spaces', ` sit_${B64} `],
  ])('refuses %s without touching the database', async (_name, signInToken) => {
    let err: unknown;
    const statements = await statementsOf(() => h.client.startSession({ signInToken }).catch((e: unknown) => ((err = e), undefined)));
    expect(statements).toEqual([]);
    expect(err).toMatchObject({ code: 'not_found', message: expect.stringMatching(/new sign-in link/) });
  });
});

describe('GetSession and EndSession', () => {
  async function newSession(userId?: string) {
    const token = await newLink(userId ?? (await newUser()));
    return h.client.startSession({ signInToken: token });
  }

  it('answers a session until 12 hours after it started, however often it is used', async () => {
    const { sessionToken, session } = await newSession();
    for (const t of [HOUR, 6 * HOUR, 11 * HOUR, 12 * HOUR - 1]) {
      h.clock.set(at(t));
      expect((await h.client.getSession({ sessionToken })).session).toEqual(session);
    }
    h.clock.set(at(12 * HOUR));
    await expectSessionRefused(h.client.getSession({ sessionToken }));
  });

  it('refuses a session after EndSession; ending it again is a no-op that keeps the first end time', async () => {
    const { sessionToken, session } = await newSession();
    h.clock.advance(MINUTE);
    expect(await h.client.endSession({ sessionToken })).toEqual({});
    await expectSessionRefused(h.client.getSession({ sessionToken }));
    h.clock.advance(MINUTE);
    expect(await h.client.endSession({ sessionToken })).toEqual({});
    expect((await sessionsOf(session!.userId)).map((r) => r.ended_at)).toEqual([at(MINUTE)]);
  });

  it('ends only the session of the token, not the user’s other sessions', async () => {
    const userId = await newUser();
    const first = await newSession(userId);
    const second = await newSession(userId);
    await h.client.endSession({ sessionToken: first.sessionToken });
    expect((await h.client.getSession({ sessionToken: second.sessionToken })).session).toEqual(second.session);
  });

  it('refuses an unknown session, and ending one is a no-op', async () => {
    const sessionToken = generateToken('sst');
    await expectSessionRefused(h.client.getSession({ sessionToken }));
    expect(await h.client.endSession({ sessionToken })).toEqual({});
  });

  it.each([
    ['an empty token', ''],
    ['a short token', `sst_${B64.slice(1)}`],
    ['a padded token', `sst_${B64}=`],
    ['a sign-in token', `sit_${B64}`],
    ['an API key', `svc_${'0'.repeat(64)}`],
  ])('refuses %s without touching the database, and EndSession of it is a no-op', async (_name, sessionToken) => {
    let err: unknown;
    expect(await statementsOf(() => h.client.getSession({ sessionToken }).catch((e: unknown) => ((err = e), undefined)))).toEqual([]);
    expect(err).toMatchObject({ code: 'not_found' });
    let ended: unknown;
    expect(await statementsOf(async () => (ended = await h.client.endSession({ sessionToken })))).toEqual([]);
    expect(ended).toEqual({});
  });
});

describe('what is stored and logged', () => {
  it('stores only SHA-256 hashes of the tokens, and logs neither the tokens nor their hashes', async () => {
    const userId = await newUser();
    const linkToken = await newLink(userId);
    const { sessionToken, session } = await h.client.startSession({ signInToken: linkToken });
    await h.client.getSession({ sessionToken });
    await h.client.endSession({ sessionToken });

    const links = await db.query<{ token_hash: string }>('SELECT * FROM sign_in_links WHERE user_id = $1', [userId]);
    const sessions = await db.query<{ id: string; token_hash: string }>('SELECT * FROM sessions WHERE user_id = $1', [userId]);
    expect(links.map((r) => r.token_hash)).toEqual([sha256(linkToken)]);
    expect(sessions.map((r) => [r.id, r.token_hash])).toEqual([[session!.id, sha256(sessionToken)]]);
    const stored = JSON.stringify([links, sessions]);
    const logged = JSON.stringify(h.logs.calls);
    for (const secret of [linkToken, sessionToken]) {
      expect(stored).not.toContain(secret.slice(4));
      expect(logged).not.toContain(secret.slice(4));
      expect(logged).not.toContain(sha256(secret));
    }
    // It did log, by id: the check above looked at real log lines.
    expect(logged).toContain(session!.id);
  });
});
