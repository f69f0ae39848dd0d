-- A user's pending authorization codes, counted with their live connections against
-- MAX_ACTIVE_OAUTH_CONNECTIONS (issue 30) on every consent: only unredeemed codes are counted.
CREATE INDEX oauth_codes_pending_user_id_idx ON oauth_codes (user_id) WHERE used_at IS NULL;
