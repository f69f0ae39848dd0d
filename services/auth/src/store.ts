/**
 * Persistence of users, API keys, sign-in links, sessions and listen tokens. All SQL of the auth service lives
 * here; the search_path is the service's own schema, so table names are unqualified. Every
 * statement is a single autocommit query, which keeps the embedded PGlite default safe (redeeming
 * a sign-in link or a listen token is one statement for that reason too), except creating a key: one short
 * transaction that locks its user's row and waits for nothing else.
 */
import type { Database } from '@murmur/kit';

export interface User {
  id: string;
  /** Lowercased. */
  email: string;
  name: string;
  createdAt: Date;
}

/** A stored key. `keyHash` stays inside the service: it is never put in a response. */
export interface ApiKeyRecord {
  id: string;
  userId: string;
  name: string;
  keyHash: string;
  hint: string;
  createdAt: Date;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  /** What the key may do: ['read', 'ai'] (full access) or ['read'] (read-only). */
  scopes: string[];
}

/** A one-time sign-in link. Only the hash of its token is stored. */
export interface SignInLink {
  tokenHash: string;
  userId: string;
  createdAt: Date;
  expiresAt: Date;
  /** null: not redeemed yet. */
  usedAt: Date | null;
}

/** A session of the app's web pages. `tokenHash` stays inside the service, like a key's. */
export interface SessionRecord {
  id: string;
  userId: string;
  tokenHash: string;
  createdAt: Date;
  expiresAt: Date;
  /** null: not signed out. */
  endedAt: Date | null;
}

/** A single-use listen token (listen-tokens.ts). Only the hash of the token is stored. */
export interface ListenTokenRecord {
  tokenHash: string;
  userId: string;
  /** What it is bound to: the key it was made with, or the app session it was made for. */
  binding: ListenTokenBinding;
  scopes: string[];
  createdAt: Date;
  expiresAt: Date;
  /** null: not redeemed yet. */
  usedAt: Date | null;
}

/** A listen token's binding: an API key (key_…) or a session of the app's pages (ses_…). */
export type ListenTokenBinding = { kind: 'key'; keyId: string } | { kind: 'session'; sessionId: string };

/**
 * A listen token just redeemed, with the state of what it is bound to as the same statement read
 * it (`key` or `session` null: the row is gone, which the foreign keys prevent, but the caller
 * refuses it all the same).
 */
export type RedeemedListenToken = { userId: string; scopes: string[] } & (
  | { kind: 'key'; keyId: string; key: { revokedAt: Date | null; expiresAt: Date | null } | null }
  | { kind: 'session'; sessionId: string; session: { endedAt: Date | null; expiresAt: Date } | null }
);

/** Position after the last user of a page: keyset on (created_at, id). */
export interface UserPosition {
  createdAt: Date;
  id: string;
}

/** Creating a key: made; refused because the user holds `maxActive` active keys already; or no such user. */
export type ApiKeyCreation = { outcome: 'created'; key: ApiKeyRecord } | { outcome: 'limit_reached' } | { outcome: 'no_user' };

export interface AuthStore {
  /** Inserts a user; null when the email (case-insensitively) is taken. */
  createUser(user: User): Promise<User | null>;
  getUserById(id: string): Promise<User | null>;
  /** `email` must already be lowercased. */
  getUserByEmail(email: string): Promise<User | null>;
  /** Users after `after` (oldest first), at most `limit`. */
  listUsers(after: UserPosition | null, limit: number): Promise<User[]>;
  /**
   * Inserts a key for an existing user unless they hold `maxActive` active keys (unrevoked, not
   * expired at `key.createdAt`) already. One transaction that locks the user's row first, so
   * concurrent creations for one user count each other and never pass the cap together.
   */
  createApiKey(key: ApiKeyRecord, maxActive: number): Promise<ApiKeyCreation>;
  /** The key whose hash is `keyHash`, revoked or not. */
  findApiKeyByHash(keyHash: string): Promise<ApiKeyRecord | null>;
  /** A user's keys, newest first, revoked ones included. */
  listApiKeys(userId: string): Promise<ApiKeyRecord[]>;
  /** Sets revoked_at once (a second call keeps the first time); null when no such key (of `owner`, when given). */
  revokeApiKey(id: string, owner: string | null, now: Date): Promise<ApiKeyRecord | null>;
  /**
   * Records a use at `now` unless one was recorded less than 60 s before, so a hot key costs
   * at most one write a minute. True when the row was written.
   */
  touchLastUsed(id: string, now: Date): Promise<boolean>;
  /** Inserts a sign-in link for an existing user; null when the user does not exist. */
  createSignInLink(link: SignInLink): Promise<SignInLink | null>;
  /**
   * Redeems the link of `linkHash` and opens `session` for its user, in one statement: the link
   * must be unused and unexpired at `session.createdAt`, and is marked used then. Of concurrent
   * redemptions of one link exactly one gets the session; the others, like an unknown, used or
   * expired link, get null.
   */
  redeemSignInLink(linkHash: string, session: Omit<SessionRecord, 'userId' | 'endedAt'>): Promise<SessionRecord | null>;
  /** The session whose token hash is `tokenHash`, ended or expired or not. */
  findSessionByHash(tokenHash: string): Promise<SessionRecord | null>;
  /** Sets ended_at of a session not yet ended; null when none was (unknown or already ended). */
  endSession(tokenHash: string, now: Date): Promise<SessionRecord | null>;
  /** The key of id `id`, revoked or not. */
  findApiKeyById(id: string): Promise<ApiKeyRecord | null>;
  /** The session of id `id`, ended or expired or not. */
  findSessionById(id: string): Promise<SessionRecord | null>;
  /**
   * Inserts a listen token, and in the same statement deletes at most `sweep.limit` tokens that
   * expired before `sweep.expiredBefore` (oldest first, skipping rows another statement holds),
   * so the table stays about as large as an hour of tokens without a background sweeper.
   */
  createListenToken(token: ListenTokenRecord, sweep: { expiredBefore: Date; limit: number }): Promise<void>;
  /**
   * Marks the token of `tokenHash` used at `now` if it is unused and unexpired at `now`, and
   * answers it with its key's or session's state, in one statement: of concurrent redemptions exactly one gets
   * it; the others, like an unknown, used or expired token, get null.
   */
  redeemListenToken(tokenHash: string, now: Date): Promise<RedeemedListenToken | null>;
}

interface UserRow {
  id: string;
  email: string;
  name: string;
  created_at: Date;
}

interface ApiKeyRow {
  id: string;
  user_id: string;
  name: string;
  key_hash: string;
  hint: string;
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
  scopes: string[];
}

interface SignInLinkRow {
  token_hash: string;
  user_id: string;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

interface SessionRow {
  id: string;
  user_id: string;
  token_hash: string;
  created_at: Date;
  expires_at: Date;
  ended_at: Date | null;
}

interface RedeemedListenTokenRow {
  user_id: string;
  key_id: string | null;
  session_id: string | null;
  scopes: string[];
  key_found: boolean;
  key_revoked_at: Date | null;
  key_expires_at: Date | null;
  session_found: boolean;
  session_ended_at: Date | null;
  session_expires_at: Date | null;
}

const USER_COLUMNS = 'id, email, name, created_at';
const KEY_COLUMNS = 'id, user_id, name, key_hash, hint, created_at, expires_at, last_used_at, revoked_at, scopes';
const LINK_COLUMNS = 'token_hash, user_id, created_at, expires_at, used_at';
const SESSION_COLUMNS = 'id, user_id, token_hash, created_at, expires_at, ended_at';

function toUser(r: UserRow): User {
  return { id: r.id, email: r.email, name: r.name, createdAt: r.created_at };
}

function toKey(r: ApiKeyRow): ApiKeyRecord {
  return {
    id: r.id,
    userId: r.user_id,
    name: r.name,
    keyHash: r.key_hash,
    hint: r.hint,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    lastUsedAt: r.last_used_at,
    revokedAt: r.revoked_at,
    scopes: r.scopes,
  };
}

function toSignInLink(r: SignInLinkRow): SignInLink {
  return { tokenHash: r.token_hash, userId: r.user_id, createdAt: r.created_at, expiresAt: r.expires_at, usedAt: r.used_at };
}

function toSession(r: SessionRow): SessionRecord {
  return { id: r.id, userId: r.user_id, tokenHash: r.token_hash, createdAt: r.created_at, expiresAt: r.expires_at, endedAt: r.ended_at };
}

/** {@link AuthStore} on the service's Postgres schema (real server or embedded PGlite). */
export class PostgresAuthStore implements AuthStore {
  constructor(private readonly db: Pick<Database, 'query' | 'transaction'>) {}

  async createUser(user: User): Promise<User | null> {
    // ON CONFLICT without a target covers the unique index on lower(email).
    const rows = await this.db.query<UserRow>(
      `INSERT INTO users (id, email, name, created_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT DO NOTHING
       RETURNING ${USER_COLUMNS}`,
      [user.id, user.email, user.name, user.createdAt],
    );
    return rows[0] ? toUser(rows[0]) : null;
  }

  async getUserById(id: string): Promise<User | null> {
    const rows = await this.db.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users WHERE id = $1`, [id]);
    return rows[0] ? toUser(rows[0]) : null;
  }

  async getUserByEmail(email: string): Promise<User | null> {
    const rows = await this.db.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users WHERE lower(email) = $1`, [email]);
    return rows[0] ? toUser(rows[0]) : null;
  }

  async listUsers(after: UserPosition | null, limit: number): Promise<User[]> {
    const rows = after
      ? await this.db.query<UserRow>(
          `SELECT ${USER_COLUMNS} FROM users WHERE (created_at, id) > ($1, $2) ORDER BY created_at, id LIMIT $3`,
          [after.createdAt, after.id, limit],
        )
      : await this.db.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users ORDER BY created_at, id LIMIT $1`, [limit]);
    return rows.map(toUser);
  }

  async createApiKey(key: ApiKeyRecord, maxActive: number): Promise<ApiKeyCreation> {
    return this.db.transaction(async (client) => {
      // The user's row lock orders concurrent creations: each counts after the one before committed
      // (under READ COMMITTED the next statement reads a snapshot taken after the lock was granted).
      const owner = await client.query('SELECT id FROM users WHERE id = $1 FOR UPDATE', [key.userId]);
      if (owner.rowCount === 0) return { outcome: 'no_user' };
      const inserted = await client.query<ApiKeyRow>(
        `INSERT INTO api_keys (id, user_id, name, key_hash, hint, created_at, expires_at, scopes)
         SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::timestamptz, $7::timestamptz, $8::text[]
         WHERE (SELECT count(*) FROM api_keys
                WHERE user_id = $2::text AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $6::timestamptz)) < $9::int
         RETURNING ${KEY_COLUMNS}`,
        [key.id, key.userId, key.name, key.keyHash, key.hint, key.createdAt, key.expiresAt, key.scopes, maxActive],
      );
      const row = inserted.rows[0];
      return row ? { outcome: 'created', key: toKey(row) } : { outcome: 'limit_reached' };
    });
  }

  async findApiKeyByHash(keyHash: string): Promise<ApiKeyRecord | null> {
    const rows = await this.db.query<ApiKeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE key_hash = $1`, [keyHash]);
    return rows[0] ? toKey(rows[0]) : null;
  }

  async listApiKeys(userId: string): Promise<ApiKeyRecord[]> {
    const rows = await this.db.query<ApiKeyRow>(
      `SELECT ${KEY_COLUMNS} FROM api_keys WHERE user_id = $1 ORDER BY created_at DESC, id DESC`,
      [userId],
    );
    return rows.map(toKey);
  }

  async revokeApiKey(id: string, owner: string | null, now: Date): Promise<ApiKeyRecord | null> {
    const rows = await this.db.query<ApiKeyRow>(
      `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2)
       WHERE id = $1 AND ($3::text IS NULL OR user_id = $3) RETURNING ${KEY_COLUMNS}`,
      [id, now, owner],
    );
    return rows[0] ? toKey(rows[0]) : null;
  }

  async touchLastUsed(id: string, now: Date): Promise<boolean> {
    const rows = await this.db.query<{ id: string }>(
      `UPDATE api_keys SET last_used_at = $2
       WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2::timestamptz - interval '60 seconds')
       RETURNING id`,
      [id, now],
    );
    return rows.length > 0;
  }

  async createSignInLink(link: SignInLink): Promise<SignInLink | null> {
    const rows = await this.db.query<SignInLinkRow>(
      `INSERT INTO sign_in_links (token_hash, user_id, created_at, expires_at)
       SELECT $1::text, $2::text, $3::timestamptz, $4::timestamptz
       WHERE EXISTS (SELECT 1 FROM users WHERE id = $2::text)
       RETURNING ${LINK_COLUMNS}`,
      [link.tokenHash, link.userId, link.createdAt, link.expiresAt],
    );
    return rows[0] ? toSignInLink(rows[0]) : null;
  }

  async redeemSignInLink(linkHash: string, session: Omit<SessionRecord, 'userId' | 'endedAt'>): Promise<SessionRecord | null> {
    // One statement, so one transaction: a concurrent redemption waits for this one's row lock,
    // then finds used_at set and updates nothing, so it inserts no session either.
    const rows = await this.db.query<SessionRow>(
      `WITH redeemed AS (
         UPDATE sign_in_links SET used_at = $4::timestamptz
         WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $4::timestamptz
         RETURNING user_id
       )
       INSERT INTO sessions (id, token_hash, user_id, created_at, expires_at)
       SELECT $2::text, $3::text, user_id, $4::timestamptz, $5::timestamptz FROM redeemed
       RETURNING ${SESSION_COLUMNS}`,
      [linkHash, session.id, session.tokenHash, session.createdAt, session.expiresAt],
    );
    return rows[0] ? toSession(rows[0]) : null;
  }

  async findSessionByHash(tokenHash: string): Promise<SessionRecord | null> {
    const rows = await this.db.query<SessionRow>(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE token_hash = $1`, [tokenHash]);
    return rows[0] ? toSession(rows[0]) : null;
  }

  async endSession(tokenHash: string, now: Date): Promise<SessionRecord | null> {
    const rows = await this.db.query<SessionRow>(
      `UPDATE sessions SET ended_at = $2 WHERE token_hash = $1 AND ended_at IS NULL RETURNING ${SESSION_COLUMNS}`,
      [tokenHash, now],
    );
    return rows[0] ? toSession(rows[0]) : null;
  }
  async findApiKeyById(id: string): Promise<ApiKeyRecord | null> {
    const rows = await this.db.query<ApiKeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1`, [id]);
    return rows[0] ? toKey(rows[0]) : null;
  }

  async findSessionById(id: string): Promise<SessionRecord | null> {
    const rows = await this.db.query<SessionRow>(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = $1`, [id]);
    return rows[0] ? toSession(rows[0]) : null;
  }

  async createListenToken(token: ListenTokenRecord, sweep: { expiredBefore: Date; limit: number }): Promise<void> {
    // A data-modifying WITH runs to completion even though nothing reads it. SKIP LOCKED: a row
    // being redeemed right now is left for the next sweep rather than waited for.
    await this.db.query(
      `WITH swept AS (
         DELETE FROM listen_tokens WHERE token_hash IN (
           SELECT token_hash FROM listen_tokens WHERE expires_at < $7::timestamptz
           ORDER BY expires_at LIMIT $8::int FOR UPDATE SKIP LOCKED
         )
       )
       INSERT INTO listen_tokens (token_hash, user_id, key_id, session_id, scopes, created_at, expires_at)
       VALUES ($1::text, $2::text, $3::text, $9::text, $4::text[], $5::timestamptz, $6::timestamptz)`,
      [
        token.tokenHash,
        token.userId,
        token.binding.kind === 'key' ? token.binding.keyId : null,
        token.scopes,
        token.createdAt,
        token.expiresAt,
        sweep.expiredBefore,
        sweep.limit,
        token.binding.kind === 'session' ? token.binding.sessionId : null,
      ],
    );
  }

  async redeemListenToken(tokenHash: string, now: Date): Promise<RedeemedListenToken | null> {
    // One statement: a concurrent redemption waits for this one's row lock, then finds used_at
    // set and updates nothing. The key or session is read in the same snapshot, so a revocation
    // or sign-out committed before this statement began is seen.
    const rows = await this.db.query<RedeemedListenTokenRow>(
      `WITH redeemed AS (
         UPDATE listen_tokens SET used_at = $2::timestamptz
         WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2::timestamptz
         RETURNING user_id, key_id, session_id, scopes
       )
       SELECT r.user_id, r.key_id, r.session_id, r.scopes,
              k.id IS NOT NULL AS key_found, k.revoked_at AS key_revoked_at, k.expires_at AS key_expires_at,
              s.id IS NOT NULL AS session_found, s.ended_at AS session_ended_at, s.expires_at AS session_expires_at
       FROM redeemed r
       LEFT JOIN api_keys k ON k.id = r.key_id
       LEFT JOIN sessions s ON s.id = r.session_id`,
      [tokenHash, now],
    );
    const r = rows[0];
    if (!r) return null;
    if (r.session_id !== null) {
      return {
        kind: 'session',
        userId: r.user_id,
        sessionId: r.session_id,
        scopes: r.scopes,
        session: r.session_found && r.session_expires_at ? { endedAt: r.session_ended_at, expiresAt: r.session_expires_at } : null,
      };
    }
    return {
      kind: 'key',
      userId: r.user_id,
      keyId: r.key_id ?? '',
      scopes: r.scopes,
      key: r.key_found ? { revokedAt: r.key_revoked_at, expiresAt: r.key_expires_at } : null,
    };
  }

}
