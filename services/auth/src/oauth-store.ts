/**
 * Persistence of OAuth 2.1 for MCP clients: registered clients, authorization codes,
 * connections and their access and refresh tokens (migrations/003_oauth.sql). All OAuth SQL of
 * the auth service lives here, beside store.ts's for users and keys; table names are
 * unqualified (the service's own schema).
 *
 * Most statements are single autocommit queries, like store.ts's. The two grants that must be
 * all-or-nothing run in one transaction each, on one connection, and hold nothing open while
 * waiting for anything else (PGlite runs one transaction at a time):
 * - redeeming a code marks it used, opens its connection and inserts the first token pair;
 * - rotating a refresh token spends it and inserts the next pair.
 * Both spend with a conditional UPDATE (`… AND used_at IS NULL`): Postgres lets one of two
 * concurrent updates of a row win and makes the other wait, re-check its WHERE against the
 * winner's row, and update nothing, so the loser learns in the same transaction that it lost
 * and revokes the connection there.
 */
import type { PoolClient } from 'pg';
import type { Database } from '@murmur/kit';

/** A client registered by Dynamic Client Registration (RFC 7591). Public: it has no secret. */
export interface OAuthClientRecord {
  id: string;
  clientName: string;
  redirectUris: string[];
  /** '' when absent, like the other optional fields. */
  clientUri: string;
  logoUri: string;
  /** Space-separated scopes the client may ask for; '' means all. */
  scope: string;
  softwareId: string;
  softwareVersion: string;
  createdAt: Date;
}

/** A user's consent as a one-time code. Only the hash of the code is stored. */
export interface AuthorizationCodeRecord {
  codeHash: string;
  /** mcl_… or a Client ID Metadata Document URL. */
  clientId: string;
  clientName: string;
  userId: string;
  redirectUri: string;
  codeChallenge: string;
  scopes: string[];
  /** Normalised (kit normalizeResource). */
  resource: string;
  createdAt: Date;
  expiresAt: Date;
  /** null: not redeemed yet. */
  usedAt: Date | null;
  /** The connection the redemption opened; null until then. */
  connectionId: string | null;
}

/** Why a connection was revoked: by the user, by the client (RFC 7009), or on a detected replay. */
export type ConnectionRevokedReason = 'user' | 'client' | 'code_replay' | 'refresh_token_reuse';

/** An app a user approved, acting for them with its tokens until revoked. */
export interface OAuthConnectionRecord {
  id: string;
  userId: string;
  clientId: string;
  clientName: string;
  scopes: string[];
  resource: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  revokedReason: ConnectionRevokedReason | null;
}

/** A stored access token. `tokenHash` stays inside the service, like a key's. */
export interface AccessTokenRecord {
  tokenHash: string;
  connectionId: string;
  /** The connection's scopes or a subset a refresh asked for. */
  scopes: string[];
  createdAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
}

/** A stored refresh token. `tokenHash` stays inside the service. */
export interface RefreshTokenRecord {
  tokenHash: string;
  connectionId: string;
  createdAt: Date;
  expiresAt: Date;
  /** null: not spent yet. */
  usedAt: Date | null;
  /** The hash of the token its rotation issued. */
  replacedBy: string | null;
}

/** A token together with its connection: what one verification or exchange needs, in one read. */
export interface TokenGrant<T> {
  token: T;
  connection: OAuthConnectionRecord;
}

/** The hashes and lifetimes of a pair about to be issued; the connection id comes from the grant. */
export interface NewTokenPair {
  access: { tokenHash: string; scopes: string[]; expiresAt: Date };
  refresh: { tokenHash: string; expiresAt: Date };
  /** The issue time, also the time the code or refresh token is spent. */
  issuedAt: Date;
}

/** Redeeming a code: it opened `connection`; it was already used (that connection is now revoked); or it was unknown or expired. */
export type CodeRedemption =
  | { outcome: 'redeemed'; connection: OAuthConnectionRecord }
  | { outcome: 'replayed'; connection: OAuthConnectionRecord | null }
  | { outcome: 'refused' };

/** Rotating a refresh token: the pair was issued; the token was already spent (the connection is now revoked); or it was unknown or expired. */
export type RefreshRotation =
  | { outcome: 'rotated' }
  | { outcome: 'reused'; connection: OAuthConnectionRecord | null }
  | { outcome: 'refused' };

/** Making a code: made; refused because the user holds `maxActive` active grants; or no such user. */
export type CodeCreation = { outcome: 'created'; code: AuthorizationCodeRecord } | { outcome: 'limit_reached' } | { outcome: 'no_user' };

export interface OAuthStore {
  createClient(client: OAuthClientRecord): Promise<OAuthClientRecord>;
  getClient(id: string): Promise<OAuthClientRecord | null>;
  /**
   * Inserts a code for an existing user unless they hold `maxActive` active grants already: live
   * connections (unrevoked, with an unspent refresh token unexpired at `code.createdAt`) and codes
   * not yet redeemed nor expired. One transaction that locks the user's row first, so concurrent
   * consents count each other.
   */
  createAuthorizationCode(code: AuthorizationCodeRecord, maxActive: number): Promise<CodeCreation>;
  /** The code whose hash is `codeHash`, used or expired or not. */
  findAuthorizationCode(codeHash: string): Promise<AuthorizationCodeRecord | null>;
  /**
   * In one transaction: marks the code used at `pair.issuedAt` (it must be unused and unexpired
   * then), opens connection `connectionId` from the code's user, client, scopes and resource,
   * and inserts `pair`. When the code was already used, revokes the connection its first
   * redemption opened (reason code_replay) instead, so of two concurrent redemptions one
   * opens a connection and the other revokes it.
   */
  redeemAuthorizationCode(codeHash: string, connectionId: string, pair: NewTokenPair): Promise<CodeRedemption>;
  /** The access token of `tokenHash` with its connection, revoked or expired or not: VerifyKey's one indexed read. */
  findAccessToken(tokenHash: string): Promise<TokenGrant<AccessTokenRecord> | null>;
  /** The refresh token of `tokenHash` with its connection, spent or expired or not. */
  findRefreshToken(tokenHash: string): Promise<TokenGrant<RefreshTokenRecord> | null>;
  /**
   * In one transaction: spends the refresh token of `tokenHash` (it must be unspent and
   * unexpired at `pair.issuedAt`) and inserts `pair` on its connection. When it was already
   * spent, however recently, revokes the connection (reason refresh_token_reuse) instead, so of
   * two concurrent rotations one issues a pair and the other revokes the connection.
   */
  rotateRefreshToken(tokenHash: string, pair: NewTokenPair): Promise<RefreshRotation>;
  /** Sets revoked_at of one access token once; false when there is no such token. */
  revokeAccessToken(tokenHash: string, now: Date): Promise<boolean>;
  /**
   * Sets revoked_at and the reason once (a second call keeps the first of both); null when no
   * such connection (of `owner`, when given).
   */
  revokeConnection(id: string, owner: string | null, now: Date, reason: ConnectionRevokedReason): Promise<OAuthConnectionRecord | null>;
  /** A user's unrevoked connections, newest first. */
  listLiveConnections(userId: string): Promise<OAuthConnectionRecord[]>;
  /** Records a use at `now` unless one was recorded less than 60 s before (as store.touchLastUsed for keys). True when written. */
  touchConnectionLastUsed(id: string, now: Date): Promise<boolean>;
}

interface ClientRow {
  id: string;
  client_name: string;
  redirect_uris: string[];
  client_uri: string;
  logo_uri: string;
  scope: string;
  software_id: string;
  software_version: string;
  created_at: Date;
}

interface CodeRow {
  code_hash: string;
  client_id: string;
  client_name: string;
  user_id: string;
  redirect_uri: string;
  code_challenge: string;
  scopes: string[];
  resource: string;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
  connection_id: string | null;
}

interface ConnectionRow {
  id: string;
  user_id: string;
  client_id: string;
  client_name: string;
  scopes: string[];
  resource: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
  revoked_reason: ConnectionRevokedReason | null;
}

/** A token's columns (t_…) beside its connection's (c_…), from one join. */
interface AccessGrantRow {
  t_token_hash: string;
  t_scopes: string[];
  t_created_at: Date;
  t_expires_at: Date;
  t_revoked_at: Date | null;
  c_id: string;
  c_user_id: string;
  c_client_id: string;
  c_client_name: string;
  c_scopes: string[];
  c_resource: string;
  c_created_at: Date;
  c_last_used_at: Date | null;
  c_revoked_at: Date | null;
  c_revoked_reason: ConnectionRevokedReason | null;
}

interface RefreshGrantRow extends Omit<AccessGrantRow, 't_scopes' | 't_revoked_at'> {
  t_used_at: Date | null;
  t_replaced_by: string | null;
}

const CLIENT_COLUMNS = 'id, client_name, redirect_uris, client_uri, logo_uri, scope, software_id, software_version, created_at';
const CODE_COLUMNS =
  'code_hash, client_id, client_name, user_id, redirect_uri, code_challenge, scopes, resource, created_at, expires_at, used_at, connection_id';
const CONNECTION_COLUMNS = 'id, user_id, client_id, client_name, scopes, resource, created_at, last_used_at, revoked_at, revoked_reason';
/** The connection's columns prefixed c_, for the token joins. */
const JOINED_CONNECTION_COLUMNS = CONNECTION_COLUMNS.split(', ')
  .map((c) => `c.${c} AS c_${c}`)
  .join(', ');

function toClient(r: ClientRow): OAuthClientRecord {
  return {
    id: r.id,
    clientName: r.client_name,
    redirectUris: r.redirect_uris,
    clientUri: r.client_uri,
    logoUri: r.logo_uri,
    scope: r.scope,
    softwareId: r.software_id,
    softwareVersion: r.software_version,
    createdAt: r.created_at,
  };
}

function toCode(r: CodeRow): AuthorizationCodeRecord {
  return {
    codeHash: r.code_hash,
    clientId: r.client_id,
    clientName: r.client_name,
    userId: r.user_id,
    redirectUri: r.redirect_uri,
    codeChallenge: r.code_challenge,
    scopes: r.scopes,
    resource: r.resource,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    usedAt: r.used_at,
    connectionId: r.connection_id,
  };
}

function toConnection(r: ConnectionRow): OAuthConnectionRecord {
  return {
    id: r.id,
    userId: r.user_id,
    clientId: r.client_id,
    clientName: r.client_name,
    scopes: r.scopes,
    resource: r.resource,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
    revokedAt: r.revoked_at,
    revokedReason: r.revoked_reason,
  };
}

function joinedConnection(r: Omit<AccessGrantRow, `t_${string}`>): OAuthConnectionRecord {
  return toConnection({
    id: r.c_id,
    user_id: r.c_user_id,
    client_id: r.c_client_id,
    client_name: r.c_client_name,
    scopes: r.c_scopes,
    resource: r.c_resource,
    created_at: r.c_created_at,
    last_used_at: r.c_last_used_at,
    revoked_at: r.c_revoked_at,
    revoked_reason: r.c_revoked_reason,
  });
}

/** Sets revoked_at and revoked_reason once: a later revocation keeps the first time and reason. */
const REVOKE_CONNECTION_SQL = `UPDATE oauth_connections
  SET revoked_at = COALESCE(revoked_at, $2::timestamptz), revoked_reason = COALESCE(revoked_reason, $3::text)
  WHERE id = $1 AND ($4::text IS NULL OR user_id = $4::text)
  RETURNING ${CONNECTION_COLUMNS}`;

async function rows<R>(client: PoolClient, sql: string, params: unknown[]): Promise<R[]> {
  return (await client.query(sql, params)).rows as R[];
}

/** Inserts the access and refresh token of `pair` on `connectionId`, inside the caller's transaction. */
async function insertPair(client: PoolClient, connectionId: string, pair: NewTokenPair): Promise<void> {
  await client.query(
    `INSERT INTO oauth_access_tokens (token_hash, connection_id, scopes, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)`,
    [pair.access.tokenHash, connectionId, pair.access.scopes, pair.issuedAt, pair.access.expiresAt],
  );
  await client.query(
    `INSERT INTO oauth_refresh_tokens (token_hash, connection_id, created_at, expires_at) VALUES ($1, $2, $3, $4)`,
    [pair.refresh.tokenHash, connectionId, pair.issuedAt, pair.refresh.expiresAt],
  );
}

/** {@link OAuthStore} on the service's Postgres schema (real server or embedded PGlite). */
export class PostgresOAuthStore implements OAuthStore {
  constructor(private readonly db: Pick<Database, 'query' | 'transaction'>) {}

  async createClient(client: OAuthClientRecord): Promise<OAuthClientRecord> {
    const inserted = await this.db.query<ClientRow>(
      `INSERT INTO oauth_clients (${CLIENT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${CLIENT_COLUMNS}`,
      [
        client.id,
        client.clientName,
        client.redirectUris,
        client.clientUri,
        client.logoUri,
        client.scope,
        client.softwareId,
        client.softwareVersion,
        client.createdAt,
      ],
    );
    return toClient(inserted[0]!);
  }

  async getClient(id: string): Promise<OAuthClientRecord | null> {
    const found = await this.db.query<ClientRow>(`SELECT ${CLIENT_COLUMNS} FROM oauth_clients WHERE id = $1`, [id]);
    return found[0] ? toClient(found[0]) : null;
  }

  async createAuthorizationCode(code: AuthorizationCodeRecord, maxActive: number): Promise<CodeCreation> {
    return this.db.transaction(async (client) => {
      // As for keys (store.ts createApiKey): the user's row lock orders concurrent consents.
      const owner = await client.query('SELECT id FROM users WHERE id = $1 FOR UPDATE', [code.userId]);
      if (owner.rowCount === 0) return { outcome: 'no_user' };
      const inserted = await rows<CodeRow>(
        client,
        `INSERT INTO oauth_codes (code_hash, client_id, client_name, user_id, redirect_uri, code_challenge, scopes, resource, created_at, expires_at)
         SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text[], $8::text, $9::timestamptz, $10::timestamptz
         WHERE (SELECT count(*) FROM oauth_connections c
                WHERE c.user_id = $4::text AND c.revoked_at IS NULL
                  AND EXISTS (SELECT 1 FROM oauth_refresh_tokens t
                              WHERE t.connection_id = c.id AND t.used_at IS NULL AND t.expires_at > $9::timestamptz))
             + (SELECT count(*) FROM oauth_codes
                WHERE user_id = $4::text AND used_at IS NULL AND expires_at > $9::timestamptz) < $11::int
         RETURNING ${CODE_COLUMNS}`,
        [
          code.codeHash,
          code.clientId,
          code.clientName,
          code.userId,
          code.redirectUri,
          code.codeChallenge,
          code.scopes,
          code.resource,
          code.createdAt,
          code.expiresAt,
          maxActive,
        ],
      );
      return inserted[0] ? { outcome: 'created', code: toCode(inserted[0]) } : { outcome: 'limit_reached' };
    });
  }

  async findAuthorizationCode(codeHash: string): Promise<AuthorizationCodeRecord | null> {
    const found = await this.db.query<CodeRow>(`SELECT ${CODE_COLUMNS} FROM oauth_codes WHERE code_hash = $1`, [codeHash]);
    return found[0] ? toCode(found[0]) : null;
  }

  async redeemAuthorizationCode(codeHash: string, connectionId: string, pair: NewTokenPair): Promise<CodeRedemption> {
    return this.db.transaction(async (client) => {
      // One statement marks the code used and opens the connection from the code's own row; the
      // foreign key oauth_codes.connection_id → oauth_connections is checked at its end, when
      // both rows exist.
      const opened = await rows<ConnectionRow>(
        client,
        `WITH redeemed AS (
           UPDATE oauth_codes SET used_at = $3::timestamptz, connection_id = $2::text
           WHERE code_hash = $1 AND used_at IS NULL AND expires_at > $3::timestamptz
           RETURNING user_id, client_id, client_name, scopes, resource
         )
         INSERT INTO oauth_connections (id, user_id, client_id, client_name, scopes, resource, created_at)
         SELECT $2::text, user_id, client_id, client_name, scopes, resource, $3::timestamptz FROM redeemed
         RETURNING ${CONNECTION_COLUMNS}`,
        [codeHash, connectionId, pair.issuedAt],
      );
      const connection = opened[0];
      if (connection) {
        await insertPair(client, connection.id, pair);
        return { outcome: 'redeemed', connection: toConnection(connection) };
      }
      // Nothing redeemed: read the code as it is now (after any concurrent redemption committed).
      const code = (await rows<Pick<CodeRow, 'connection_id'>>(client, 'SELECT connection_id FROM oauth_codes WHERE code_hash = $1', [codeHash]))[0];
      if (!code) return { outcome: 'refused' };
      if (code.connection_id === null) return { outcome: 'refused' }; // unused, so expired
      const revoked = await rows<ConnectionRow>(client, REVOKE_CONNECTION_SQL, [code.connection_id, pair.issuedAt, 'code_replay', null]);
      return { outcome: 'replayed', connection: revoked[0] ? toConnection(revoked[0]) : null };
    });
  }

  async findAccessToken(tokenHash: string): Promise<TokenGrant<AccessTokenRecord> | null> {
    const found = await this.db.query<AccessGrantRow>(
      `SELECT t.token_hash AS t_token_hash, t.scopes AS t_scopes, t.created_at AS t_created_at, t.expires_at AS t_expires_at,
              t.revoked_at AS t_revoked_at, ${JOINED_CONNECTION_COLUMNS}
       FROM oauth_access_tokens t JOIN oauth_connections c ON c.id = t.connection_id
       WHERE t.token_hash = $1`,
      [tokenHash],
    );
    const r = found[0];
    if (!r) return null;
    return {
      token: { tokenHash: r.t_token_hash, connectionId: r.c_id, scopes: r.t_scopes, createdAt: r.t_created_at, expiresAt: r.t_expires_at, revokedAt: r.t_revoked_at },
      connection: joinedConnection(r),
    };
  }

  async findRefreshToken(tokenHash: string): Promise<TokenGrant<RefreshTokenRecord> | null> {
    const found = await this.db.query<RefreshGrantRow>(
      `SELECT t.token_hash AS t_token_hash, t.created_at AS t_created_at, t.expires_at AS t_expires_at, t.used_at AS t_used_at,
              t.replaced_by AS t_replaced_by, ${JOINED_CONNECTION_COLUMNS}
       FROM oauth_refresh_tokens t JOIN oauth_connections c ON c.id = t.connection_id
       WHERE t.token_hash = $1`,
      [tokenHash],
    );
    const r = found[0];
    if (!r) return null;
    return {
      token: { tokenHash: r.t_token_hash, connectionId: r.c_id, createdAt: r.t_created_at, expiresAt: r.t_expires_at, usedAt: r.t_used_at, replacedBy: r.t_replaced_by },
      connection: joinedConnection(r),
    };
  }

  async rotateRefreshToken(tokenHash: string, pair: NewTokenPair): Promise<RefreshRotation> {
    return this.db.transaction(async (client) => {
      // The conditional UPDATE is the whole race: a concurrent rotation of the same token waits
      // for this row lock, then finds used_at set and spends nothing.
      const spent = await rows<{ connection_id: string }>(
        client,
        `UPDATE oauth_refresh_tokens SET used_at = $2::timestamptz, replaced_by = $3::text
         WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2::timestamptz
         RETURNING connection_id`,
        [tokenHash, pair.issuedAt, pair.refresh.tokenHash],
      );
      const connectionId = spent[0]?.connection_id;
      if (connectionId !== undefined) {
        await insertPair(client, connectionId, pair);
        return { outcome: 'rotated' };
      }
      const token = (await rows<{ connection_id: string; used_at: Date | null }>(
        client,
        'SELECT connection_id, used_at FROM oauth_refresh_tokens WHERE token_hash = $1',
        [tokenHash],
      ))[0];
      if (!token || token.used_at === null) return { outcome: 'refused' }; // unknown, or unspent and expired
      const revoked = await rows<ConnectionRow>(client, REVOKE_CONNECTION_SQL, [token.connection_id, pair.issuedAt, 'refresh_token_reuse', null]);
      return { outcome: 'reused', connection: revoked[0] ? toConnection(revoked[0]) : null };
    });
  }

  async revokeAccessToken(tokenHash: string, now: Date): Promise<boolean> {
    const updated = await this.db.query<{ token_hash: string }>(
      'UPDATE oauth_access_tokens SET revoked_at = COALESCE(revoked_at, $2) WHERE token_hash = $1 RETURNING token_hash',
      [tokenHash, now],
    );
    return updated.length > 0;
  }

  async revokeConnection(id: string, owner: string | null, now: Date, reason: ConnectionRevokedReason): Promise<OAuthConnectionRecord | null> {
    const revoked = await this.db.query<ConnectionRow>(REVOKE_CONNECTION_SQL, [id, now, reason, owner]);
    return revoked[0] ? toConnection(revoked[0]) : null;
  }

  async listLiveConnections(userId: string): Promise<OAuthConnectionRecord[]> {
    const found = await this.db.query<ConnectionRow>(
      `SELECT ${CONNECTION_COLUMNS} FROM oauth_connections WHERE user_id = $1 AND revoked_at IS NULL ORDER BY created_at DESC, id DESC`,
      [userId],
    );
    return found.map(toConnection);
  }

  async touchConnectionLastUsed(id: string, now: Date): Promise<boolean> {
    const updated = await this.db.query<{ id: string }>(
      `UPDATE oauth_connections SET last_used_at = $2
       WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2::timestamptz - interval '60 seconds')
       RETURNING id`,
      [id, now],
    );
    return updated.length > 0;
  }
}
