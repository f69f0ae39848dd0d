/**
 * Listen tokens (docs/live.md, "Connecting"): a browser cannot set Authorization on a WebSocket,
 * so its server, which holds the API key, asks for a listen token (CreateListenToken, through
 * POST /api/v1/listen/tokens) and hands the browser that; the gateway's WebSocket endpoint spends
 * it (RedeemListenToken) for the principal the stream acts for.
 *
 * A token carries 256 CSPRNG bits, is stored only as SHA-256 hex (the same `hashKey` as API
 * keys), lasts LISTEN_TOKEN_TTL_SECONDS, opens one stream, and is bound to the key it was made
 * with: revoking that key stops its unspent tokens too. The app's Record page has a signed-in
 * person's session, not a key: the app (admin) names the session's id (ses_…) as `key_id`, and
 * the token is bound to that session instead, with full access, and dies when the session ends
 * or expires. A token of the wrong shape is refused before any database work. Throws only
 * MurmurError; knows nothing of gRPC or Postgres.
 */
import { randomBytes } from 'node:crypto';
import { FULL_ACCESS_SCOPES, isId, isOAuthScope, LISTEN_TOKEN_PATTERN, LISTEN_TOKEN_TTL_SECONDS, MurmurError, invalidParam, requireId } from '@murmur/contract';
import type { Clock, Logger } from '@murmur/kit';
import { hashKey, isExpired } from './api-key';
import type { Principal } from './service';
import type { AuthStore, ListenTokenBinding } from './store';

/** Tokens that expired longer ago than this are deleted by the next CreateListenToken. */
export const LISTEN_TOKEN_RETENTION_MS = 60 * 60 * 1000;
/** Most expired tokens one CreateListenToken deletes: bounded, so minting stays one quick statement. */
export const LISTEN_TOKEN_SWEEP_LIMIT = 100;

/** A fresh token: "lst_" + 32 random bytes in unpadded base64url. */
export function generateListenToken(): string {
  return `lst_${randomBytes(32).toString('base64url')}`;
}

/**
 * One answer for a malformed, unknown, used or expired token: the holder's remedy is the same,
 * and a token that is not the caller's own says nothing about whose it might be.
 */
const tokenRefused = () =>
  new MurmurError(
    'invalid_api_key',
    `This listen token is unknown, expired or already used: a listen token lasts ${LISTEN_TOKEN_TTL_SECONDS} seconds and opens one stream. Ask for a new one with POST /api/v1/listen/tokens.`,
    { param: 'token' },
  );
const keyGone = () =>
  new MurmurError(
    'invalid_api_key',
    'The API key this listen token was made with has been revoked or has expired, so the token no longer works. Ask for a new token with POST /api/v1/listen/tokens using an active key.',
    { param: 'token' },
  );
const sessionGone = () =>
  new MurmurError('invalid_api_key', 'The sign-in session this listen token was made for has ended or expired, so the token no longer works. Sign in again.', {
    param: 'token',
  });
/** One answer for an unknown, another user's, ended or expired session: the remedy is signing in again. */
const noSuchSession = () => new MurmurError('not_found', 'No such session: it is unknown, ended or expired. Sign in again.', { param: 'key_id' });

export interface ListenTokenDeps {
  store: AuthStore;
  clock: Clock;
  log: Logger;
}

/** See the module comment. Logs ids only, never a token or its hash. */
export class ListenTokenService {
  constructor(private readonly deps: ListenTokenDeps) {}

  /**
   * A token for `userId`'s own active key `keyId`, valid LISTEN_TOKEN_TTL_SECONDS, with `scopes`
   * (a subset of the key's; none asked: all of the key's). Returned here once, stored as a hash.
   * A key that is not the user's answers not_found like a missing one; a revoked or expired key
   * the codes VerifyKey would answer for it. A session id (ses_…) instead of a key: a token for
   * that live session of `userId` (the scopes a subset of full access); a session that is not the
   * user's, ended or expired answers not_found.
   */
  async createListenToken(input: { userId: string; keyId: string; scopes: readonly string[] }): Promise<{ token: string; expiresAt: Date }> {
    const userId = requireId('usr', input.userId, 'user_id');
    const now = this.deps.clock.now();
    let binding: ListenTokenBinding;
    let scopes: string[];
    if (isId('ses', input.keyId)) {
      const session = await this.deps.store.findSessionById(input.keyId);
      if (!session || session.userId !== userId || session.endedAt !== null || isExpired(session.expiresAt, now)) throw noSuchSession();
      binding = { kind: 'session', sessionId: session.id };
      scopes = tokenScopes(input.scopes, FULL_ACCESS_SCOPES);
    } else {
      const keyId = requireId('key', input.keyId, 'key_id');
      const key = await this.deps.store.findApiKeyById(keyId);
      if (!key || key.userId !== userId) throw new MurmurError('not_found', 'No such API key. Check key_id.', { param: 'key_id' });
      if (key.revokedAt !== null) throw new MurmurError('invalid_api_key');
      if (isExpired(key.expiresAt, now)) throw new MurmurError('expired_api_key');
      binding = { kind: 'key', keyId };
      scopes = tokenScopes(input.scopes, key.scopes);
    }

    const token = generateListenToken();
    const expiresAt = new Date(now.getTime() + LISTEN_TOKEN_TTL_SECONDS * 1000);
    await this.deps.store.createListenToken(
      { tokenHash: hashKey(token), userId, binding, scopes, createdAt: now, expiresAt, usedAt: null },
      { expiredBefore: new Date(now.getTime() - LISTEN_TOKEN_RETENTION_MS), limit: LISTEN_TOKEN_SWEEP_LIMIT },
    );
    this.deps.log.info({ user_id: userId, ...bindingIds(binding), expires_at: expiresAt.toISOString() }, 'listen token created');
    return { token, expiresAt };
  }

  /**
   * Spends a token and answers who it acts for: its user, its key (with the key's expiry, so a
   * stream can end when the key does) and its scopes; for a session-bound token, the session's id
   * in place of the key's and the session's expiry. Marking it used and reading its key or session
   * is one statement, so of two concurrent redemptions one wins. A token that expires at T is
   * refused at T; a token whose key was revoked or expired since, or whose session ended or
   * expired since, is refused too (and spent all the same).
   */
  async redeemListenToken(token: string): Promise<Principal> {
    if (!LISTEN_TOKEN_PATTERN.test(token)) throw tokenRefused();
    const now = this.deps.clock.now();
    const redeemed = await this.deps.store.redeemListenToken(hashKey(token), now);
    if (!redeemed) throw tokenRefused();
    if (redeemed.kind === 'session') {
      const session = redeemed.session;
      if (!session || session.endedAt !== null || isExpired(session.expiresAt, now)) {
        this.deps.log.info({ user_id: redeemed.userId, session_id: redeemed.sessionId }, 'listen token refused: its session ended or expired');
        throw sessionGone();
      }
      this.deps.log.info({ user_id: redeemed.userId, session_id: redeemed.sessionId }, 'listen token redeemed');
      return { userId: redeemed.userId, keyId: redeemed.sessionId, expiresAt: session.expiresAt, scopes: redeemed.scopes, clientId: '' };
    }
    const key = redeemed.key;
    if (!key || key.revokedAt !== null || isExpired(key.expiresAt, now)) {
      this.deps.log.info({ user_id: redeemed.userId, key_id: redeemed.keyId }, 'listen token refused: its key is revoked or expired');
      throw keyGone();
    }
    this.deps.log.info({ user_id: redeemed.userId, key_id: redeemed.keyId }, 'listen token redeemed');
    return { userId: redeemed.userId, keyId: redeemed.keyId, expiresAt: key.expiresAt, scopes: redeemed.scopes, clientId: '' };
  }
}

/** The ids a log line names for a binding (never a token or its hash). */
function bindingIds(binding: ListenTokenBinding): { key_id: string } | { session_id: string } {
  return binding.kind === 'key' ? { key_id: binding.keyId } : { session_id: binding.sessionId };
}

/** The scopes a token gets: those asked for, each one the key holds, in the key's order; none asked: the key's. */
function tokenScopes(asked: readonly string[], keyScopes: readonly string[]): string[] {
  if (asked.length === 0) return [...keyScopes];
  if (!asked.every((s) => isOAuthScope(s) && keyScopes.includes(s))) {
    throw invalidParam('scopes', `scopes must be a subset of the key's scopes (${keyScopes.join(', ')}), or none for all of them.`);
  }
  return keyScopes.filter((s) => asked.includes(s));
}
