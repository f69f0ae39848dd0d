-- The auth service's tables (schema "auth"): users and their API keys. Keys are stored only as
-- a SHA-256 hash plus a display hint; the raw key never reaches the database.
-- Times are timestamptz(3): millisecond precision, so JS Dates round-trip exactly and keyset
-- cursors built from them match the rows they came from.

CREATE TABLE users (
  id          text PRIMARY KEY,
  -- Stored lowercased; the unique index below makes uniqueness case-insensitive regardless.
  email       text NOT NULL CHECK (email = lower(email)),
  name        text NOT NULL DEFAULT '',
  created_at  timestamptz(3) NOT NULL
);

CREATE UNIQUE INDEX users_email_lower_key ON users (lower(email));
-- ListUsers: oldest first, keyset on (created_at, id).
CREATE INDEX users_created_at_id_idx ON users (created_at, id);

CREATE TABLE api_keys (
  id            text PRIMARY KEY,
  user_id       text NOT NULL REFERENCES users (id),
  name          text NOT NULL,
  -- SHA-256 hex of the full key ("svc_" + 64 hex); VerifyKey looks keys up by it.
  key_hash      text NOT NULL UNIQUE CHECK (key_hash ~ '^[0-9a-f]{64}$'),
  -- e.g. "svc_1a2b…9f0e": first and last 4 hex, for people to recognise a key in a list.
  hint          text NOT NULL,
  created_at    timestamptz(3) NOT NULL,
  -- NULL: never expires.
  expires_at    timestamptz(3),
  -- Written at most once a minute per key (see store.touchLastUsed).
  last_used_at  timestamptz(3),
  revoked_at    timestamptz(3)
);

-- ListApiKeys: one user's keys, newest first.
CREATE INDEX api_keys_user_id_created_at_idx ON api_keys (user_id, created_at DESC, id DESC);
