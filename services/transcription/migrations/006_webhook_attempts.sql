-- Issue 36: every attempt of every webhook delivery, for Settings → Developer → Webhook
-- deliveries. An attempt row is written by the same statement that records its outcome on the
-- delivery (webhooks/delivery-store.ts), so the two never disagree; it holds the answer's status
-- and timing and the sender's reason for a failure — never the response body, never the event.
--
-- Rounds: RetryWebhook starts a new round of attempts; `round` numbers them from 1.
ALTER TABLE webhook_deliveries ADD COLUMN round integer NOT NULL DEFAULT 1;

-- Deliveries are listed newest first by keyset paging on (created_at, id); a cursor carries
-- created_at in milliseconds, so the column keeps milliseconds too (as the library's lists do),
-- or a row within the millisecond after a page's last one would be skipped.
ALTER TABLE webhook_deliveries ALTER COLUMN created_at TYPE timestamptz(3);
CREATE INDEX webhook_deliveries_owner_created_idx ON webhook_deliveries (owner_id, created_at DESC, id DESC);

CREATE TABLE webhook_attempts (
  -- Attempts go with their delivery; a new round drops the attempts of rounds older than the
  -- last few (MAX_KEPT_ROUNDS in delivery-store.ts), so resending forever keeps a bounded history.
  delivery_id text NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  owner_id text NOT NULL,
  round integer NOT NULL,
  -- 1–8 within its round.
  attempt integer NOT NULL,
  started_at timestamptz(3) NOT NULL,
  -- The HTTP status the endpoint answered; 0 when none came (refused, unreachable, timed out).
  status_code integer NOT NULL,
  latency_ms integer NOT NULL,
  -- Why it failed, as the sender words it ('' when it succeeded).
  error text NOT NULL DEFAULT '',
  PRIMARY KEY (delivery_id, round, attempt)
);
