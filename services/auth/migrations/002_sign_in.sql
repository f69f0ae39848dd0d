-- The app's sign-in stand-in (sign-in.ts): one-time sign-in links and the sessions of the app's
-- web pages they open. Like API keys, tokens are stored only as their SHA-256 hex; the raw
-- tokens exist only in the CreateSignInLink / StartSession responses and with their holder.
-- Rows are kept after they lapse (a record of who signed in when); nothing purges them yet.

-- One row per CreateSignInLink. StartSession redeems a link by setting used_at, once.
CREATE TABLE sign_in_links (
  -- SHA-256 hex of the full token ("sit_" + 43 base64url); StartSession finds the link by it.
  token_hash  text PRIMARY KEY CHECK (token_hash ~ '^[0-9a-f]{64}$'),
  user_id     text NOT NULL REFERENCES users (id),
  created_at  timestamptz(3) NOT NULL,
  -- created_at + 15 minutes (SIGN_IN_LINK_TTL_MS); refused from this instant on.
  expires_at  timestamptz(3) NOT NULL CHECK (expires_at > created_at),
  -- NULL: not redeemed yet. Set by the one statement that redeems the link and opens its session.
  used_at     timestamptz(3)
);

-- One row per StartSession: a signed-in visit of the app's web pages.
CREATE TABLE sessions (
  id          text PRIMARY KEY,
  -- SHA-256 hex of the full token ("sst_" + 43 base64url, the browser's cookie); GetSession and
  -- EndSession find the session by it.
  token_hash  text NOT NULL UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
  user_id     text NOT NULL REFERENCES users (id),
  created_at  timestamptz(3) NOT NULL,
  -- created_at + 12 hours (SESSION_TTL_MS), absolute: using the session never moves it.
  expires_at  timestamptz(3) NOT NULL CHECK (expires_at > created_at),
  -- NULL: not signed out. Set once by EndSession.
  ended_at    timestamptz(3)
);
