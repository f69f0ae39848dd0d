/**
 * OAuth 2.1 grants for MCP clients (docs/oauth.md; shared rules in contract oauth-rules.ts): auth is
 * the storage and the judge of the authorization server whose endpoints the app serves. The app
 * registers clients (RegisterOAuthClient), turns a user's consent into a one-time code
 * (CreateAuthorizationCode) and exchanges codes and refresh tokens for tokens here; VerifyKey
 * accepts the access tokens for the resource they were issued for (service.ts).
 *
 * Every client is public (no secret): PKCE S256 binds a code to the client that started the
 * authorization, and refresh tokens rotate on every use, so a stolen one is good once at most.
 * A redeemed code opens a *connection* (one app acting for one user); all its tokens die with
 * it, and its id is the principal's key_id, so revoking it reaches the gateways' caches exactly
 * as revoking an API key does.
 *
 * Replays are treated as theft (RFC 6749 §4.1.2, OAuth 2.1 §4.3.1, RFC 9700 §4.14.2): a code
 * presented after it was redeemed revokes the connection, and so does a refresh token presented
 * after it was spent, however soon: there is no grace window in which a spent token still works,
 * since the server cannot tell a client's second, parallel refresh from a thief's. A client
 * refreshes once at a time and keeps the newest pair (docs/oauth.md).
 *
 * Codes and tokens are 256 random bits stored only as SHA-256 hex (`hashKey`, like API keys);
 * logs carry ids, never a code, token, verifier or hash. Token endpoint refusals are all
 * invalid_grant, with a message saying why; malformed registrations and consents are
 * invalid_request. Throws only MurmurError; knows nothing of gRPC or Postgres.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  ACCESS_TOKEN_PATTERN,
  ACCESS_TOKEN_TTL_S,
  AUTHORIZATION_CODE_PATTERN,
  AUTHORIZATION_CODE_TTL_S,
  CODE_CHALLENGE_PATTERN,
  CODE_VERIFIER_PATTERN,
  invalidParam,
  isOAuthScope,
  MAX_ACTIVE_OAUTH_CONNECTIONS,
  MurmurError,
  normalizeResource,
  REFRESH_TOKEN_PATTERN,
  REFRESH_TOKEN_TTL_S,
  requireId,
} from '@murmur/contract';
import { newId, type Clock, type Logger } from '@murmur/kit';
import { hashKey, isExpired, sameHash } from './api-key';
import type { ConnectionRevokedReason, NewTokenPair, OAuthClientRecord, OAuthConnectionRecord, OAuthStore } from './oauth-store';
import {
  classifyClientId,
  normalizeClientName,
  normalizeOptionalUrl,
  normalizeRedirectUris,
  normalizeScopes,
  normalizeScopeString,
  normalizeSoftwareField,
  redirectUriRegistered,
  requireRedirectUri,
} from './oauth-validation';
import type { Principal } from './service';
import type { AuthStore } from './store';

/** A fresh code or token: the prefix says its kind, so one kind is never accepted for another. */
export function generateOAuthSecret(prefix: 'mac' | 'mat' | 'mrt'): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}

/** The S256 challenge of a PKCE verifier (RFC 7636 §4.2): base64url(SHA-256(ASCII(verifier))), unpadded. */
export function pkceChallenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** What the token endpoint answers: the raw tokens exist here once and are stored nowhere. */
export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
  /** Seconds the access token lives. */
  expiresIn: number;
  scopes: string[];
  connectionId: string;
}

export interface OAuthDeps {
  store: OAuthStore;
  /** To check that a user exists before listing their connections. */
  users: Pick<AuthStore, 'getUserById'>;
  clock: Clock;
  log: Logger;
  /** As AuthDomainDeps.announceRevocation, with the connection id as the key id. */
  announceRevocation?: (keyId: string) => Promise<void>;
}

const grantRefused = (message: string, param: string) => new MurmurError('invalid_grant', message, { param });
const START_AGAIN = 'Start the authorization again.';
const CONNECT_AGAIN = 'Connect the app again.';
const accessTokenRefused = () =>
  new MurmurError('invalid_api_key', 'The access token is unknown, revoked or was issued for another resource. Refresh it, or connect the app again.');
const accessTokenExpired = () => new MurmurError('expired_api_key', 'The access token has expired. Use the refresh token to get a new one.');

const errMessage = (err: unknown) => (err instanceof Error ? err.message : String(err));
const SECOND_MS = 1000;

/** See the module comment. */
export class OAuthGrants {
  /** last_used_at writes still running; awaited by {@link idle}. */
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly deps: OAuthDeps) {}

  /** Dynamic Client Registration (RFC 7591): validates and stores a public client. */
  async registerClient(input: {
    clientName: string;
    redirectUris: readonly string[];
    clientUri: string;
    logoUri: string;
    scope: string;
    softwareId: string;
    softwareVersion: string;
  }): Promise<OAuthClientRecord> {
    const client = await this.deps.store.createClient({
      id: newId('mcl'),
      clientName: normalizeClientName(input.clientName, input.redirectUris),
      redirectUris: normalizeRedirectUris(input.redirectUris),
      clientUri: normalizeOptionalUrl(input.clientUri, 'client_uri'),
      logoUri: normalizeOptionalUrl(input.logoUri, 'logo_uri'),
      scope: normalizeScopeString(input.scope),
      softwareId: normalizeSoftwareField(input.softwareId, 'software_id'),
      softwareVersion: normalizeSoftwareField(input.softwareVersion, 'software_version'),
      createdAt: this.deps.clock.now(),
    });
    this.deps.log.info({ client_id: client.id, redirect_uris: client.redirectUris.length }, 'oauth client registered');
    return client;
  }

  async getClient(clientIdInput: string): Promise<OAuthClientRecord> {
    const clientId = requireId('mcl', clientIdInput, 'client_id');
    const client = await this.deps.store.getClient(clientId);
    if (!client) throw new MurmurError('not_found', 'No such OAuth client. Check client_id, or register the client again.', { param: 'client_id' });
    return client;
  }

  /**
   * Records a user's consent as a one-time code for {@link AUTHORIZATION_CODE_TTL_S}, bound to
   * the client, redirect URI, PKCE S256 challenge, scopes and (normalised) resource. A
   * registered client must exist, the redirect URI must be one it registered (loopback ones on
   * any port) and the scopes within those it registered; a Client ID Metadata Document client
   * was checked by the app that fetched its document. A user holds at most
   * MAX_ACTIVE_OAUTH_CONNECTIONS live connections and pending codes
   * (`oauth_connection_limit_reached`).
   */
  async createAuthorizationCode(input: {
    userId: string;
    clientId: string;
    clientName: string;
    redirectUri: string;
    codeChallenge: string;
    scopes: readonly string[];
    resource: string;
  }): Promise<{ code: string; expiresAt: Date }> {
    const userId = requireId('usr', input.userId, 'user_id');
    const { kind, clientId } = classifyClientId(input.clientId);
    const redirectUri = requireRedirectUri(input.redirectUri);
    if (!CODE_CHALLENGE_PATTERN.test(input.codeChallenge)) {
      throw invalidParam('code_challenge', 'code_challenge must be an S256 challenge: base64url(SHA-256(code_verifier)), 43 characters. The plain method is not supported.');
    }
    const scopes = normalizeScopes(input.scopes);
    const resource = normalizeResource(input.resource);
    if (resource === null) throw invalidParam('resource', 'resource must be the absolute http(s) URL of the MCP server, without a fragment.');

    let clientName = input.clientName.trim();
    if (kind === 'registered') {
      const client = await this.getClient(clientId);
      if (!redirectUriRegistered(client.redirectUris, redirectUri)) {
        throw invalidParam('redirect_uri', 'redirect_uri is not one of the redirect URIs the client registered.');
      }
      const allowed = client.scope === '' ? null : new Set(client.scope.split(' '));
      if (allowed && scopes.some((s) => !allowed.has(s))) {
        throw invalidParam('scopes', `The client registered for scope "${client.scope}" only.`);
      }
      if (clientName === '') clientName = client.clientName;
    }
    clientName = normalizeClientName(clientName);

    const now = this.deps.clock.now();
    const code = generateOAuthSecret('mac');
    const stored = await this.deps.store.createAuthorizationCode({
      codeHash: hashKey(code),
      clientId,
      clientName,
      userId,
      redirectUri,
      codeChallenge: input.codeChallenge,
      scopes,
      resource,
      createdAt: now,
      expiresAt: new Date(now.getTime() + AUTHORIZATION_CODE_TTL_S * SECOND_MS),
      usedAt: null,
      connectionId: null,
    }, MAX_ACTIVE_OAUTH_CONNECTIONS);
    if (stored.outcome === 'no_user') throw new MurmurError('not_found', 'No such user. Check user_id.', { param: 'user_id' });
    if (stored.outcome === 'limit_reached') {
      throw new MurmurError(
        'oauth_connection_limit_reached',
        `You already have ${MAX_ACTIVE_OAUTH_CONNECTIONS} connected apps, the most one account may hold. Revoke one you no longer use in Settings → Developer (Connected apps), then connect this one again.`,
      );
    }
    this.deps.log.info({ user_id: userId, client_id: clientId, scopes }, 'oauth authorization code created');
    return { code, expiresAt: stored.code.expiresAt };
  }

  /**
   * Redeems a code once for a token pair, opening a connection. Checks, in order: the code's
   * shape, that it exists, was not redeemed before (else its connection is revoked), is
   * unexpired by the clock, and was issued to this client for this redirect URI; then PKCE
   * S256 and, when given, the resource. Any refusal is invalid_grant.
   */
  async exchangeAuthorizationCode(input: {
    clientId: string;
    code: string;
    codeVerifier: string;
    redirectUri: string;
    resource: string;
  }): Promise<IssuedTokens> {
    if (!AUTHORIZATION_CODE_PATTERN.test(input.code)) throw grantRefused(`The authorization code is malformed or unknown. ${START_AGAIN}`, 'code');
    const codeHash = hashKey(input.code);
    const code = await this.deps.store.findAuthorizationCode(codeHash);
    if (!code || !sameHash(code.codeHash, codeHash)) throw grantRefused(`The authorization code is malformed or unknown. ${START_AGAIN}`, 'code');
    const now = this.deps.clock.now();
    if (code.usedAt !== null) {
      if (code.connectionId !== null) await this.revokeReplayed(code.connectionId, now, 'code_replay');
      throw this.codeReplayed();
    }
    if (isExpired(code.expiresAt, now)) throw grantRefused(`The authorization code has expired (codes last ${AUTHORIZATION_CODE_TTL_S / 60} minutes). ${START_AGAIN}`, 'code');
    if (input.clientId !== code.clientId) throw grantRefused('The authorization code was issued to another client. Check client_id.', 'client_id');
    if (input.redirectUri !== code.redirectUri) {
      throw grantRefused('redirect_uri must be exactly the redirect URI of the authorization request.', 'redirect_uri');
    }
    if (input.codeVerifier === '') throw grantRefused('code_verifier is required: this server requires PKCE (S256).', 'code_verifier');
    if (!CODE_VERIFIER_PATTERN.test(input.codeVerifier)) {
      throw grantRefused('code_verifier must be 43 to 128 characters of A-Z, a-z, 0-9 and "-._~" (RFC 7636).', 'code_verifier');
    }
    if (!sameHash(pkceChallenge(input.codeVerifier), code.codeChallenge)) {
      throw grantRefused('code_verifier does not match the code_challenge of the authorization request.', 'code_verifier');
    }
    if (input.resource !== '' && normalizeResource(input.resource) !== code.resource) {
      throw grantRefused('resource must be the resource of the authorization request.', 'resource');
    }

    const connectionId = newId('con');
    const { pair, tokens } = this.newPair(connectionId, code.scopes, now);
    const redeemed = await this.deps.store.redeemAuthorizationCode(codeHash, connectionId, pair);
    switch (redeemed.outcome) {
      case 'redeemed':
        this.deps.log.info({ user_id: redeemed.connection.userId, client_id: redeemed.connection.clientId, connection_id: connectionId }, 'oauth connection opened');
        return tokens;
      case 'replayed':
        // A concurrent exchange of the same code won: that is a replay too (see the module comment).
        if (redeemed.connection) await this.afterReplay(redeemed.connection, 'code_replay');
        throw this.codeReplayed();
      case 'refused':
        throw grantRefused(`The authorization code has expired. ${START_AGAIN}`, 'code');
    }
  }

  /**
   * Rotates a refresh token: the presented one is spent and a new pair issued on the same
   * connection. Checks, in order: shape, existence, a live connection, that the token was not
   * spent before (else the connection is revoked: reuse detection), the client, expiry, the
   * resource when given, and that `scopes`, when given, only narrow the connection's (the new
   * access token gets them; the refresh token keeps the full grant, RFC 6749 §6).
   */
  async exchangeRefreshToken(input: { clientId: string; refreshToken: string; scopes: readonly string[]; resource: string }): Promise<IssuedTokens> {
    const unknown = () => grantRefused(`The refresh token is malformed or unknown. ${CONNECT_AGAIN}`, 'refresh_token');
    if (!REFRESH_TOKEN_PATTERN.test(input.refreshToken)) throw unknown();
    const tokenHash = hashKey(input.refreshToken);
    const found = await this.deps.store.findRefreshToken(tokenHash);
    if (!found || !sameHash(found.token.tokenHash, tokenHash)) throw unknown();
    const { token, connection } = found;
    const now = this.deps.clock.now();
    if (connection.revokedAt !== null) throw grantRefused(`The refresh token is revoked: its connection was revoked. ${CONNECT_AGAIN}`, 'refresh_token');
    if (input.clientId !== connection.clientId) throw grantRefused('The refresh token was issued to another client. Check client_id.', 'client_id');
    if (token.usedAt !== null) {
      await this.revokeReplayed(connection.id, now, 'refresh_token_reuse');
      throw this.refreshReused();
    }
    if (isExpired(token.expiresAt, now)) throw grantRefused(`The refresh token has expired. ${CONNECT_AGAIN}`, 'refresh_token');
    if (input.resource !== '' && normalizeResource(input.resource) !== connection.resource) {
      throw grantRefused('resource must be the resource the connection was authorized for.', 'resource');
    }
    let scopes = connection.scopes;
    if (input.scopes.length > 0) {
      const granted = new Set(connection.scopes);
      if (input.scopes.some((s) => !isOAuthScope(s) || !granted.has(s))) {
        throw grantRefused(`scopes may only narrow the scopes granted (${connection.scopes.join(' ')}).`, 'scopes');
      }
      scopes = normalizeScopes(input.scopes);
    }

    const { pair, tokens } = this.newPair(connection.id, scopes, now);
    const rotated = await this.deps.store.rotateRefreshToken(tokenHash, pair);
    switch (rotated.outcome) {
      case 'rotated':
        this.deps.log.info({ user_id: connection.userId, client_id: connection.clientId, connection_id: connection.id }, 'oauth refresh token rotated');
        return tokens;
      case 'reused':
        // A concurrent rotation of the same token won: that is a reuse too (see the module comment).
        if (rotated.connection) await this.afterReplay(rotated.connection, 'refresh_token_reuse');
        throw this.refreshReused();
      case 'refused':
        throw grantRefused(`The refresh token has expired. ${CONNECT_AGAIN}`, 'refresh_token');
    }
  }

  /**
   * Token revocation (RFC 7009) by the client it was issued to: a refresh token revokes its
   * whole connection, an access token only itself. An unknown or malformed token, or another
   * client's, is a no-op (the RFC answers 200 for them, and telling them apart would help
   * whoever probes tokens).
   */
  async revokeToken(input: { clientId: string; token: string }): Promise<void> {
    const now = this.deps.clock.now();
    if (REFRESH_TOKEN_PATTERN.test(input.token)) {
      const tokenHash = hashKey(input.token);
      const found = await this.deps.store.findRefreshToken(tokenHash);
      if (!found || !sameHash(found.token.tokenHash, tokenHash) || found.connection.clientId !== input.clientId) return;
      const revoked = await this.deps.store.revokeConnection(found.connection.id, null, now, 'client');
      if (!revoked) return;
      await this.deps.announceRevocation?.(revoked.id);
      this.deps.log.info({ user_id: revoked.userId, client_id: revoked.clientId, connection_id: revoked.id }, 'oauth connection revoked by its client');
    } else if (ACCESS_TOKEN_PATTERN.test(input.token)) {
      const tokenHash = hashKey(input.token);
      const found = await this.deps.store.findAccessToken(tokenHash);
      if (!found || !sameHash(found.token.tokenHash, tokenHash) || found.connection.clientId !== input.clientId) return;
      await this.deps.store.revokeAccessToken(tokenHash, now);
      // Gateways cache by key id, which is the connection's: they drop its other access tokens
      // too and verify them afresh, which costs one lookup each and keeps this exact.
      await this.deps.announceRevocation?.(found.connection.id);
      this.deps.log.info({ user_id: found.connection.userId, client_id: found.connection.clientId, connection_id: found.connection.id }, 'oauth access token revoked by its client');
    }
  }

  /** A user's live connections, newest first (Connected apps). */
  async listConnections(userIdInput: string): Promise<OAuthConnectionRecord[]> {
    const userId = requireId('usr', userIdInput, 'user_id');
    if (!(await this.deps.users.getUserById(userId))) throw new MurmurError('not_found', 'No such user. Check user_id.', { param: 'user_id' });
    return this.deps.store.listLiveConnections(userId);
  }

  /**
   * Revokes one of a user's connections: its tokens fail on their very next use, here and at
   * the gateways (announced like a revoked key). Another user's connection answers not_found,
   * like a missing one; revoking again keeps the first time and announces again (so a retry
   * after a failed announcement is safe).
   */
  async revokeConnection(connectionIdInput: string, userIdInput: string): Promise<OAuthConnectionRecord> {
    const connectionId = requireId('con', connectionIdInput, 'connection_id');
    const userId = requireId('usr', userIdInput, 'user_id');
    const connection = await this.deps.store.revokeConnection(connectionId, userId, this.deps.clock.now(), 'user');
    if (!connection) throw new MurmurError('not_found', 'No such connection. Check connection_id.', { param: 'connection_id' });
    await this.deps.announceRevocation?.(connection.id);
    this.deps.log.info({ user_id: connection.userId, client_id: connection.clientId, connection_id: connection.id }, 'oauth connection revoked by its user');
    return connection;
  }

  /**
   * VerifyKey for an access token ("mat_…"), always from the database (one indexed read joining
   * the connection; no cache, so a revoked token or connection fails at once). Refused as
   * invalid_api_key when unknown, revoked (itself or its connection), or when `resource` does
   * not name the resource it was issued for (an empty one names none); expired_api_key when
   * expired. The principal's key id is the connection's.
   */
  async verifyAccessToken(token: string, resource: string): Promise<Principal> {
    const tokenHash = hashKey(token);
    const found = await this.deps.store.findAccessToken(tokenHash);
    if (!found || !sameHash(found.token.tokenHash, tokenHash) || found.token.revokedAt !== null || found.connection.revokedAt !== null) {
      throw accessTokenRefused();
    }
    const { token: access, connection } = found;
    const wanted = normalizeResource(resource);
    if (wanted === null || wanted !== connection.resource) throw accessTokenRefused();
    const now = this.deps.clock.now();
    if (isExpired(access.expiresAt, now)) throw accessTokenExpired();
    this.recordUse(connection.id, now);
    return { userId: connection.userId, keyId: connection.id, expiresAt: access.expiresAt, scopes: access.scopes, clientId: connection.clientId };
  }

  /** Resolves once every background last_used_at write has finished (graceful stop, tests). */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  private newPair(connectionId: string, scopes: string[], now: Date): { pair: NewTokenPair; tokens: IssuedTokens } {
    const accessToken = generateOAuthSecret('mat');
    const refreshToken = generateOAuthSecret('mrt');
    return {
      pair: {
        access: { tokenHash: hashKey(accessToken), scopes, expiresAt: new Date(now.getTime() + ACCESS_TOKEN_TTL_S * SECOND_MS) },
        refresh: { tokenHash: hashKey(refreshToken), expiresAt: new Date(now.getTime() + REFRESH_TOKEN_TTL_S * SECOND_MS) },
        issuedAt: now,
      },
      tokens: { accessToken, refreshToken, expiresIn: ACCESS_TOKEN_TTL_S, scopes, connectionId },
    };
  }

  private codeReplayed(): MurmurError {
    return grantRefused(`The authorization code was already used; the tokens issued for it are revoked. ${START_AGAIN}`, 'code');
  }

  private refreshReused(): MurmurError {
    return grantRefused(`The refresh token was already used, so the connection was revoked as a precaution. ${CONNECT_AGAIN}`, 'refresh_token');
  }

  /** Revokes a connection whose code or refresh token was presented again, then announces it. */
  private async revokeReplayed(connectionId: string, now: Date, reason: ConnectionRevokedReason): Promise<void> {
    const connection = await this.deps.store.revokeConnection(connectionId, null, now, reason);
    if (connection) await this.afterReplay(connection, reason);
  }

  /**
   * Tells the gateways and logs. The refusal is the answer whatever happens here, so a failed
   * announcement is logged, not thrown: the connection is revoked in the database either way,
   * and gateways hold a verification 30 s at most.
   */
  private async afterReplay(connection: OAuthConnectionRecord, reason: ConnectionRevokedReason): Promise<void> {
    this.deps.log.warn(
      { user_id: connection.userId, client_id: connection.clientId, connection_id: connection.id, reason },
      reason === 'code_replay' ? 'oauth code presented again: connection revoked' : 'oauth refresh token reused: connection revoked',
    );
    try {
      await this.deps.announceRevocation?.(connection.id);
    } catch (err) {
      this.deps.log.error({ connection_id: connection.id, err: errMessage(err) }, 'could not announce the revocation of an oauth connection');
    }
  }

  /** Fire-and-forget: a slow or failing write never delays or fails a verification. */
  private recordUse(connectionId: string, now: Date): void {
    const write = this.deps.store.touchConnectionLastUsed(connectionId, now).then(
      () => undefined,
      (err: unknown) => this.deps.log.error({ connection_id: connectionId, err: errMessage(err) }, 'could not record the use of an oauth connection'),
    );
    this.pending.add(write);
    void write.finally(() => this.pending.delete(write));
  }
}
