-- OAuth 2.1 for MCP clients (oauth.ts, oauth-store.ts; the rules in kit oauth-rules.ts): the
-- clients that registered themselves, the one-time codes a user's consent yields, and the
-- connections those codes open, each with its access and refresh tokens. Like API keys, codes
-- and tokens are stored only as their SHA-256 hex; the raw values exist only in the RPC
-- responses that mint them and with their holder.
-- Rows are kept after they lapse (a record of which app acted for whom, and when); nothing
-- purges them yet.

-- One row per RegisterOAuthClient (Dynamic Client Registration, RFC 7591). Every client is
-- public: there is no secret, PKCE binds each code to the client that asked for it.
CREATE TABLE oauth_clients (
  id                text PRIMARY KEY,                     -- mcl_…
  client_name       text NOT NULL CHECK (client_name <> ''),
  -- Absolute https URLs, or http loopback ones (RFC 8252 §7.3); checked by oauth.ts.
  redirect_uris     text[] NOT NULL CHECK (cardinality(redirect_uris) BETWEEN 1 AND 10),
  -- '' when the client sent none.
  client_uri        text NOT NULL DEFAULT '',
  logo_uri          text NOT NULL DEFAULT '',
  -- Space-separated scopes the client may ask for; '' means all of them.
  scope             text NOT NULL DEFAULT '',
  software_id       text NOT NULL DEFAULT '',
  software_version  text NOT NULL DEFAULT '',
  created_at        timestamptz(3) NOT NULL
);

-- One row per redeemed code: an app a user approved, acting for them until revoked. Its tokens
-- are verified together with this row, so revoking it stops every token at once.
CREATE TABLE oauth_connections (
  id              text PRIMARY KEY,                       -- con_…; the key_id of its principals
  user_id         text NOT NULL REFERENCES users (id),
  -- A registered client's id (mcl_…) or a Client ID Metadata Document URL (https://…), so no
  -- foreign key to oauth_clients.
  client_id       text NOT NULL CHECK (client_id <> ''),
  -- The name the consent screen showed, for Connected apps.
  client_name     text NOT NULL,
  scopes          text[] NOT NULL CHECK (cardinality(scopes) > 0 AND scopes <@ ARRAY['read', 'ai']::text[]),
  -- The normalised resource (RFC 8707) its access tokens are for, e.g. "https://api.example.com/mcp".
  resource        text NOT NULL,
  created_at      timestamptz(3) NOT NULL,
  -- Written at most once a minute (see oauth-store touchConnectionLastUsed).
  last_used_at    timestamptz(3),
  -- NULL: live. Set once; a later revocation keeps the first time and reason.
  revoked_at      timestamptz(3),
  -- Who or what revoked it: the user (Connected apps), the client (RFC 7009 revocation), or
  -- the authorization server on a replayed code or a reused refresh token.
  revoked_reason  text CHECK (revoked_reason IN ('user', 'client', 'code_replay', 'refresh_token_reuse')),
  CHECK ((revoked_at IS NULL) = (revoked_reason IS NULL))
);

-- ListOAuthConnections: one user's connections, newest first.
CREATE INDEX oauth_connections_user_id_created_at_idx ON oauth_connections (user_id, created_at DESC, id DESC);

-- One row per CreateAuthorizationCode: a user's consent, redeemable once within 5 minutes
-- (AUTHORIZATION_CODE_TTL_S) by the same client, redirect URI and PKCE verifier.
CREATE TABLE oauth_codes (
  -- SHA-256 hex of the full code ("mac_" + 43 base64url); ExchangeAuthorizationCode finds it by it.
  code_hash       text PRIMARY KEY CHECK (code_hash ~ '^[0-9a-f]{64}$'),
  client_id       text NOT NULL CHECK (client_id <> ''),
  client_name     text NOT NULL,
  user_id         text NOT NULL REFERENCES users (id),
  redirect_uri    text NOT NULL,
  -- PKCE S256 only: base64url(SHA-256(code_verifier)), unpadded.
  code_challenge  text NOT NULL CHECK (code_challenge ~ '^[A-Za-z0-9_-]{43}$'),
  scopes          text[] NOT NULL CHECK (cardinality(scopes) > 0 AND scopes <@ ARRAY['read', 'ai']::text[]),
  resource        text NOT NULL,
  created_at      timestamptz(3) NOT NULL,
  expires_at      timestamptz(3) NOT NULL CHECK (expires_at > created_at),
  -- NULL: not redeemed yet. Set, with connection_id, by the statement that opens the
  -- connection; a later presentation of the code revokes that connection (RFC 6749 §4.1.2).
  used_at         timestamptz(3),
  connection_id   text REFERENCES oauth_connections (id),
  CHECK ((used_at IS NULL) = (connection_id IS NULL))
);

-- One row per access token issued (by a code exchange or a refresh).
CREATE TABLE oauth_access_tokens (
  -- SHA-256 hex of the full token ("mat_" + 43 base64url); VerifyKey finds it by it.
  token_hash     text PRIMARY KEY CHECK (token_hash ~ '^[0-9a-f]{64}$'),
  connection_id  text NOT NULL REFERENCES oauth_connections (id),
  -- The connection's scopes, or the narrower set a refresh asked for.
  scopes         text[] NOT NULL CHECK (cardinality(scopes) > 0 AND scopes <@ ARRAY['read', 'ai']::text[]),
  created_at     timestamptz(3) NOT NULL,
  -- created_at + 1 hour (ACCESS_TOKEN_TTL_S); refused from this instant on.
  expires_at     timestamptz(3) NOT NULL CHECK (expires_at > created_at),
  -- NULL: not revoked on its own (RFC 7009). Revoking the connection revokes it too.
  revoked_at     timestamptz(3)
);

CREATE INDEX oauth_access_tokens_connection_id_idx ON oauth_access_tokens (connection_id);

-- One row per refresh token issued. Each is spent by its first use, which issues the next
-- (rotation); a spent one presented again revokes the connection (reuse detection).
CREATE TABLE oauth_refresh_tokens (
  -- SHA-256 hex of the full token ("mrt_" + 43 base64url); ExchangeRefreshToken finds it by it.
  token_hash     text PRIMARY KEY CHECK (token_hash ~ '^[0-9a-f]{64}$'),
  connection_id  text NOT NULL REFERENCES oauth_connections (id),
  created_at     timestamptz(3) NOT NULL,
  -- created_at + 30 days (REFRESH_TOKEN_TTL_S).
  expires_at     timestamptz(3) NOT NULL CHECK (expires_at > created_at),
  -- NULL: not spent yet. Set by the conditional UPDATE of the rotation that issues its successor.
  used_at        timestamptz(3),
  -- The hash of that successor: the chain of rotations, for an investigation.
  replaced_by    text CHECK (replaced_by ~ '^[0-9a-f]{64}$'),
  CHECK (replaced_by IS NULL OR used_at IS NOT NULL)
);

CREATE INDEX oauth_refresh_tokens_connection_id_idx ON oauth_refresh_tokens (connection_id);
