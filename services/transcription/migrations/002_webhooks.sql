-- Webhooks (Standard Webhooks): each user's signing secret and default endpoint, each job's
-- endpoint, and the delivery of each ended job's event (one row a job; its id is the
-- webhook-id header, the same on every attempt). A delivery row is written in the transaction
-- that ends its job, and its queue entry with it: an end is never lost.
CREATE TABLE webhook_settings (
  owner_id text PRIMARY KEY,
  -- whsec_ + base64 of 32 random bytes; it must be readable to sign (HMAC), as in every
  -- Standard Webhooks sender.
  secret text,
  -- The rotated-out secret still signs (a second signature) until previous_until.
  previous_secret text,
  previous_until timestamptz,
  default_url text NOT NULL DEFAULT '',
  updated_at timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE jobs ADD COLUMN webhook_url text NOT NULL DEFAULT '';

CREATE TABLE webhook_deliveries (
  id text PRIMARY KEY,                 -- msg_…
  job_id text NOT NULL UNIQUE REFERENCES jobs (id),
  owner_id text NOT NULL,
  url text NOT NULL,
  event text NOT NULL,
  state text NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  -- Attempts of the current round (RetryWebhook starts a new round).
  round_attempts integer NOT NULL DEFAULT 0,
  last_status_code integer NOT NULL DEFAULT 0,
  last_error text NOT NULL DEFAULT '',
  next_attempt_at timestamptz,
  delivered_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
