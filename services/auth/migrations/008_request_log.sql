-- The request log (docs/request-log.md): one row per authenticated REST or MCP call, written in
-- batches by the gateway (RecordRequests) and read by its owner (GET /api/v1/requests, the app's
-- Logs page). Partitioned by day (UTC) on created_at: the service makes each day's partition
-- ahead of time and drops whole days past the 30 kept (request-log-store.ts), so expiry is a
-- DROP TABLE, never a DELETE. Never a body, a key, a token or transcript text.
CREATE TABLE request_log (
  owner_id text NOT NULL,
  created_at timestamptz(3) NOT NULL,
  request_id text NOT NULL,
  method text NOT NULL,
  route text NOT NULL,
  tool text NOT NULL DEFAULT '',
  status smallint NOT NULL,
  error_code text NOT NULL DEFAULT '',
  latency_us integer NOT NULL,
  key_id text NOT NULL DEFAULT '',
  client_id text NOT NULL DEFAULT '',
  trace_id text NOT NULL DEFAULT '',
  bytes_in bigint NOT NULL DEFAULT 0,
  bytes_out bigint NOT NULL DEFAULT 0,
  credits_charged bigint NOT NULL DEFAULT 0,
  -- A caller may send its own X-Request-Id twice: the key includes the time, and a repeat of the
  -- same id at the same millisecond is one call written twice (a retried batch), kept once.
  PRIMARY KEY (owner_id, created_at, request_id)
) PARTITION BY RANGE (created_at);
