/**
 * The app's sign-in stand-in (Settings → Developer): the operator CLI makes a one-time sign-in
 * link for a user (CreateSignInLink); the app's web server redeems its token once for a session
 * token it keeps in an HttpOnly cookie (StartSession); each page resolves the session
 * (GetSession); sign-out ends it (EndSession). The real app replaces all of this with its own
 * sign-in.
 *
 * Tokens carry 256 CSPRNG bits and are stored only as SHA-256 hex (the same `hashKey` as API
 * keys), so a copy of the database signs no one in. A token of the wrong shape is refused before
 * any database work. Throws only MurmurError; knows nothing of gRPC or Postgres.
 */
import { randomBytes } from 'node:crypto';
import { MurmurError, requireId } from '@murmur/contract';
import { newId, type Clock, type Logger } from '@murmur/kit';
import { hashKey, isExpired, sameHash } from './api-key';
import type { AuthStore, SessionRecord } from './store';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

/** How long a sign-in link can be redeemed: enough to open it, short enough that a leaked one soon dies. */
export const SIGN_IN_LINK_TTL_MS = 15 * MINUTE_MS;
/** A session's absolute lifetime. Using a session never extends it (no sliding renewal). */
export const SESSION_TTL_MS = 12 * HOUR_MS;

/** "sit_" + 32 random bytes in unpadded base64url. */
export const SIGN_IN_TOKEN_PATTERN = /^sit_[A-Za-z0-9_-]{43}$/;
/** "sst_" + 32 random bytes in unpadded base64url. */
export const SESSION_TOKEN_PATTERN = /^sst_[A-Za-z0-9_-]{43}$/;

/** A fresh token: the prefix says its kind, so one kind is never accepted for the other. */
export function generateToken(prefix: 'sit' | 'sst'): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}

/** One answer for unknown, used, expired and malformed links: the person's remedy is the same. */
const linkRefused = () =>
  new MurmurError('not_found', 'This sign-in link is unknown, already used or expired. Ask for a new sign-in link.', {
    param: 'sign_in_token',
  });
const sessionRefused = () =>
  new MurmurError('not_found', 'No such session: it is unknown, ended or expired. Sign in again.', { param: 'session_token' });

export interface SignInDeps {
  store: AuthStore;
  clock: Clock;
  log: Logger;
}

/** See the module comment. Logs ids only, never a token or its hash. */
export class SignInService {
  constructor(private readonly deps: SignInDeps) {}

  /** A one-time token for an existing user, valid {@link SIGN_IN_LINK_TTL_MS}; returned here once and stored as a hash. */
  async createSignInLink(userIdInput: string): Promise<{ token: string; expiresAt: Date }> {
    const userId = requireId('usr', userIdInput, 'user_id');
    const now = this.deps.clock.now();
    const token = generateToken('sit');
    const link = await this.deps.store.createSignInLink({
      tokenHash: hashKey(token),
      userId,
      createdAt: now,
      expiresAt: new Date(now.getTime() + SIGN_IN_LINK_TTL_MS),
      usedAt: null,
    });
    if (!link) throw new MurmurError('not_found', 'No such user. Check user_id.', { param: 'user_id' });
    this.deps.log.info({ user_id: userId, expires_at: link.expiresAt.toISOString() }, 'sign-in link created');
    return { token, expiresAt: link.expiresAt };
  }

  /**
   * Redeems a sign-in token for a new session of {@link SESSION_TTL_MS}. The link is marked used
   * and the session inserted in one statement, so of two concurrent redemptions one wins and
   * the other is refused like a used link. A link that expires at T is refused at T.
   */
  async startSession(signInToken: string): Promise<{ sessionToken: string; session: SessionRecord }> {
    if (!SIGN_IN_TOKEN_PATTERN.test(signInToken)) throw linkRefused();
    const now = this.deps.clock.now();
    const sessionToken = generateToken('sst');
    const session = await this.deps.store.redeemSignInLink(hashKey(signInToken), {
      id: newId('ses'),
      tokenHash: hashKey(sessionToken),
      createdAt: now,
      expiresAt: new Date(now.getTime() + SESSION_TTL_MS),
    });
    if (!session) throw linkRefused();
    this.deps.log.info({ user_id: session.userId, session_id: session.id }, 'session started');
    return { sessionToken, session };
  }

  /** The live session of a token; unknown, ended, expired (at T for a session that expires at T) or malformed → not_found. */
  async getSession(sessionToken: string): Promise<SessionRecord> {
    if (!SESSION_TOKEN_PATTERN.test(sessionToken)) throw sessionRefused();
    const tokenHash = hashKey(sessionToken);
    const session = await this.deps.store.findSessionByHash(tokenHash);
    if (!session || !sameHash(session.tokenHash, tokenHash) || session.endedAt !== null) throw sessionRefused();
    if (isExpired(session.expiresAt, this.deps.clock.now())) throw sessionRefused();
    return session;
  }

  /**
   * Signs a session out. Ending an unknown or already ended session is a no-op, and so is a
   * malformed token (no database work): it names no session there is to end, and sign-out must
   * succeed whatever cookie the browser sent, so the app can always clear it. An expired session
   * is marked ended too.
   */
  async endSession(sessionToken: string): Promise<void> {
    if (!SESSION_TOKEN_PATTERN.test(sessionToken)) return;
    const ended = await this.deps.store.endSession(hashKey(sessionToken), this.deps.clock.now());
    if (ended) this.deps.log.info({ user_id: ended.userId, session_id: ended.id }, 'session ended');
  }
}
