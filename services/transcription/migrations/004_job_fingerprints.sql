-- What a job's submission looked like (issue 30): a digest of its options and its audio's bytes.
-- A submission with the same Idempotency-Key answers the job it made only when it is the same
-- request; with other audio or options it is idempotency_conflict (the gateway checks this when
-- it still has its record; this holds when it does not, and for direct gRPC callers). NULL for
-- jobs made before: their key answers them as before.
ALTER TABLE jobs ADD COLUMN request_fingerprint text NULL;
