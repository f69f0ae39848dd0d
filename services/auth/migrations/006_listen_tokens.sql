-- Listen tokens (issue 33, listen-tokens.ts; docs/live.md "Connecting"): single-use, 60-second
-- tokens a browser opens a live-transcription WebSocket with, since it cannot set Authorization
-- there. Like API keys, a token is stored only as its SHA-256 hex; the raw token exists only in
-- the CreateListenToken response and with its holder.
-- Unlike sign-in links, a lapsed token is worth nothing as a record (the stream it opened is the
-- record), so CreateListenToken deletes a bounded batch of tokens expired over an hour ago.

CREATE TABLE listen_tokens (
  -- SHA-256 hex of the full token ("lst_" + 43 base64url); RedeemListenToken finds it by it.
  token_hash  text PRIMARY KEY CHECK (token_hash ~ '^[0-9a-f]{64}$'),
  user_id     text NOT NULL REFERENCES users (id),
  -- The key it was made with: a token redeems only while this key is unrevoked and unexpired.
  key_id      text NOT NULL REFERENCES api_keys (id),
  -- What the redeemed principal may do: a non-empty subset of the key's scopes.
  scopes      text[] NOT NULL CHECK (cardinality(scopes) > 0 AND scopes <@ ARRAY['read', 'ai']::text[]),
  created_at  timestamptz(3) NOT NULL,
  -- created_at + 60 s (contract LISTEN_TOKEN_TTL_SECONDS); refused from this instant on.
  expires_at  timestamptz(3) NOT NULL CHECK (expires_at > created_at),
  -- NULL: not redeemed yet. Set once, by the one statement that redeems the token.
  used_at     timestamptz(3)
);

-- The cleanup on each CreateListenToken: the oldest expired tokens first, a bounded batch.
CREATE INDEX listen_tokens_expires_at_idx ON listen_tokens (expires_at);
