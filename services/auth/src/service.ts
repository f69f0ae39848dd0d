/**
 * The auth domain: who a key acts for, and the management of users and keys. Throws only
 * MurmurError; knows nothing of gRPC or Postgres (the store and the cache are injected).
 * VerifyKey also answers OAuth access tokens, by handing them to the OAuth grants (oauth.ts).
 */
import { ACCESS_TOKEN_PATTERN, MAX_ACTIVE_API_KEYS, MurmurError, pageSizeOf, parseAuthorization, requireId } from '@murmur/contract';
import { CursorCodec, newId, type Clock, type Logger } from '@murmur/kit';
import { auth } from '@murmur/proto';
import { expiresAtFor, generateApiKey, hashKey, isExpired, keyHint, sameHash } from './api-key';
import type { ApiKeyRecord, AuthStore, User, UserPosition } from './store';
import { normalizeEmail, normalizeKeyName, normalizeKeyScopes, normalizeUserName } from './validation';
import type { VerificationCache } from './verification-cache';

/** Who a verified key or OAuth access token acts for. */
export interface Principal {
  userId: string;
  /**
   * The API key's id, or the OAuth connection's (con_…): what a revocation names. For a listen
   * token the app made for a signed-in person, their session's (ses_…).
   */
  keyId: string;
  /** null: the key never expires. An access token always does. */
  expiresAt: Date | null;
  /** What it may do: an API key's scopes (read and ai, or read alone), or an access token's. */
  scopes: string[];
  /** The OAuth client an access token was issued to; '' for an API key. */
  clientId: string;
}

/** Verifies OAuth access tokens for VerifyKey (OAuthGrants in oauth.ts). */
export interface AccessTokenVerifier {
  verifyAccessToken(token: string, resource: string): Promise<Principal>;
}

export type UserLookup = { by: 'id'; userId: string } | { by: 'email'; email: string };

export interface AuthDomainDeps {
  store: AuthStore;
  cache: VerificationCache;
  clock: Clock;
  cursors: CursorCodec;
  log: Logger;
  /** Where an access token ("mat_…") goes; API keys never reach it. */
  accessTokens: AccessTokenVerifier;
  /**
   * Tells caches outside this service (the gateways') that a key was revoked, resolving once
   * they dropped it; absent when there are none (no Redis).
   */
  announceRevocation?: (keyId: string) => Promise<void>;
}

interface UserCursor extends Record<string, unknown> {
  k: 'users';
  t: number;
  i: string;
}

function isUserCursor(v: unknown): v is UserCursor {
  if (typeof v !== 'object' || v === null) return false;
  const c = v as Record<string, unknown>;
  return c.k === 'users' && typeof c.t === 'number' && Number.isSafeInteger(c.t) && typeof c.i === 'string';
}

const errMessage = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** See the module comment. */
export class AuthService {
  /** last_used_at writes still running; awaited by {@link idle}. */
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly deps: AuthDomainDeps) {}

  /**
   * Checks an Authorization header value in the order of DESIGN.md §2: missing → malformed
   * (no database, no cache) → unknown or revoked → expired. A valid key is cached for 60 s
   * with its scopes; expiry is still checked against the clock on every cached hit.
   *
   * `resource` is the resource the call is for (RFC 8707). It matters only for an OAuth access
   * token, which is accepted for exactly the resource it was issued for and is never cached
   * (see OAuthGrants.verifyAccessToken); an API key is accepted whatever it says.
   */
  async verifyKey(authorization: string, resource: string): Promise<Principal> {
    const parsed = parseAuthorization(authorization);
    if (!parsed.ok) throw new MurmurError(parsed.code);
    if (ACCESS_TOKEN_PATTERN.test(parsed.key)) return this.deps.accessTokens.verifyAccessToken(parsed.key, resource);
    const keyHash = hashKey(parsed.key);
    const now = this.deps.clock.now();

    const cached = await this.deps.cache.lookup(keyHash);
    if (cached) {
      if (isExpired(cached.expiresAt, now)) throw new MurmurError('expired_api_key');
      return { ...cached, clientId: '' };
    }

    const row = await this.deps.store.findApiKeyByHash(keyHash);
    // The lookup is by hash of a 256-bit secret, so its timing says nothing about stored keys;
    // the constant-time comparison keeps that true whatever the index does.
    if (!row || !sameHash(row.keyHash, keyHash) || row.revokedAt !== null) throw new MurmurError('invalid_api_key');
    if (isExpired(row.expiresAt, now)) throw new MurmurError('expired_api_key');

    const principal: Principal = { userId: row.userId, keyId: row.id, expiresAt: row.expiresAt, scopes: row.scopes, clientId: '' };
    await this.deps.cache.remember(keyHash, principal);
    this.recordUse(row.id, now);
    return principal;
  }

  async createUser(input: { email: string; name: string }): Promise<User> {
    const email = normalizeEmail(input.email);
    const name = normalizeUserName(input.name);
    const user = await this.deps.store.createUser({ id: newId('usr'), email, name, createdAt: this.deps.clock.now() });
    if (!user) throw new MurmurError('invalid_request', 'A user with this email already exists.', { param: 'email' });
    this.deps.log.info({ user_id: user.id }, 'user created');
    return user;
  }

  async getUser(lookup: UserLookup | undefined): Promise<User> {
    if (!lookup) throw new MurmurError('invalid_request', 'Pass user_id or email.', { param: 'user_id' });
    const user =
      lookup.by === 'id'
        ? await this.deps.store.getUserById(requireId('usr', lookup.userId, 'user_id'))
        : await this.deps.store.getUserByEmail(normalizeEmail(lookup.email));
    if (!user) throw new MurmurError('not_found', 'No such user. Check the id or email.');
    return user;
  }

  /** All users, oldest first, in pages joined by opaque signed tokens. */
  async listUsers(input: { pageSize: number; pageToken: string }): Promise<{ users: User[]; nextPageToken: string }> {
    const limit = pageSizeOf(input.pageSize, 'page_size', { zeroMeansDefault: true });
    const after = this.decodePageToken(input.pageToken);
    const rows = await this.deps.store.listUsers(after, limit + 1);
    const users = rows.slice(0, limit);
    const last = users[users.length - 1];
    const nextPageToken =
      rows.length > limit && last ? this.deps.cursors.encode({ k: 'users', t: last.createdAt.getTime(), i: last.id } satisfies UserCursor) : '';
    return { users, nextPageToken };
  }

  /**
   * Mints a key for an existing user, with full access or read-only (`scopes`), unless they hold
   * MAX_ACTIVE_API_KEYS active keys already (`api_key_limit_reached`). The raw key is returned
   * here once and stored nowhere.
   */
  async createApiKey(input: { userId: string; name: string; expiry: auth.KeyExpiry; scopes: readonly string[] }): Promise<{ apiKey: ApiKeyRecord; key: string }> {
    const userId = requireId('usr', input.userId, 'user_id');
    const name = normalizeKeyName(input.name);
    const scopes = normalizeKeyScopes(input.scopes);
    const now = this.deps.clock.now();
    const expiresAt = expiresAtFor(input.expiry, now);
    const key = generateApiKey();
    const created = await this.deps.store.createApiKey({
      id: newId('key'),
      userId,
      name,
      keyHash: hashKey(key),
      hint: keyHint(key),
      createdAt: now,
      expiresAt,
      lastUsedAt: null,
      revokedAt: null,
      scopes,
    }, MAX_ACTIVE_API_KEYS);
    if (created.outcome === 'no_user') throw new MurmurError('not_found', 'No such user. Check user_id.', { param: 'user_id' });
    if (created.outcome === 'limit_reached') {
      throw new MurmurError(
        'api_key_limit_reached',
        `You already have ${MAX_ACTIVE_API_KEYS} active API keys, the most one account may hold. Revoke a key you no longer use (Settings → Developer, or \`npm run admin -- keys revoke KEY_ID\`), then create this one.`,
      );
    }
    const apiKey = created.key;
    this.deps.log.info({ user_id: userId, key_id: apiKey.id, expires_at: expiresAt?.toISOString() ?? null, scopes }, 'api key created');
    return { apiKey, key };
  }

  /** A user's keys, newest first, revoked ones included (the app shows them as revoked). */
  async listApiKeys(userIdInput: string): Promise<ApiKeyRecord[]> {
    const userId = requireId('usr', userIdInput, 'user_id');
    if (!(await this.deps.store.getUserById(userId))) throw new MurmurError('not_found', 'No such user. Check user_id.', { param: 'user_id' });
    return this.deps.store.listApiKeys(userId);
  }

  /**
   * Revokes a key and clears it from the verification cache in the same call, so it fails on
   * its very next use. Revoking again keeps the first revocation time and clears the cache again
   * (which makes a retry after a cache failure safe). With `userIdInput` the key must belong to
   * that user; another user's key answers not_found, like a missing one.
   */
  async revokeApiKey(keyIdInput: string, userIdInput = ''): Promise<ApiKeyRecord> {
    const keyId = requireId('key', keyIdInput, 'key_id');
    const owner = userIdInput ? requireId('usr', userIdInput, 'user_id') : null;
    const apiKey = await this.deps.store.revokeApiKey(keyId, owner, this.deps.clock.now());
    if (!apiKey) throw new MurmurError('not_found', 'No such API key. Check key_id.', { param: 'key_id' });
    await this.deps.cache.forget(apiKey.keyHash, apiKey.id);
    await this.deps.announceRevocation?.(apiKey.id);
    this.deps.log.info({ user_id: apiKey.userId, key_id: apiKey.id }, 'api key revoked');
    return apiKey;
  }

  /** Resolves once every background last_used_at write has finished (graceful stop, tests). */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /** Fire-and-forget: a slow or failing write never delays or fails a verification. */
  private recordUse(keyId: string, now: Date): void {
    const write = this.deps.store.touchLastUsed(keyId, now).then(
      () => undefined,
      (err: unknown) => this.deps.log.error({ key_id: keyId, err: errMessage(err) }, 'could not record the use of an API key'),
    );
    this.pending.add(write);
    void write.finally(() => this.pending.delete(write));
  }

  private decodePageToken(token: string): UserPosition | null {
    if (token === '') return null;
    let cursor: UserCursor;
    try {
      cursor = this.deps.cursors.decode(token, isUserCursor);
    } catch (err) {
      if (err instanceof MurmurError) {
        throw new MurmurError('invalid_request', 'page_token is not valid. Pass next_page_token from a previous page unchanged.', {
          param: 'page_token',
        });
      }
      throw err;
    }
    return { createdAt: new Date(cursor.t), id: cursor.i };
  }
}
