-- Idempotency keys that replay only the same request, and holds that grow with the audio.
--
-- request_fingerprint: a digest of everything the operation's result depends on, computed by the
-- service doing the work. Reserve returns a reservation for its key only to a request with the
-- same operation and fingerprint; anything else is idempotency_conflict. NULL for reservations
-- made before this migration: they are never replayed (no fingerprint matches NULL).
--
-- unit_credits: the price of one priced unit (a started minute of audio, a started 1,000
-- characters) on the plan when it was reserved, so ExtendReservation and a Commit by decoded
-- audio price at the rate the hold began with; 0 for an explicit amount (never re-priced).

ALTER TABLE reservations
  ADD COLUMN request_fingerprint text NULL,
  ADD COLUMN unit_credits        bigint NOT NULL DEFAULT 0 CONSTRAINT reservations_unit_credits_nonnegative CHECK (unit_credits >= 0);

-- A key belongs to the reservation that holds it or was charged for it. A released or expired
-- reservation charged nothing and delivered nothing, so its key is free again: a retry of a call
-- that failed, was cancelled or whose client went away (its upload perhaps cut short, so another
-- fingerprint) reserves anew and pays for what it then gets. Reserve looks keys up among held and
-- committed reservations only; the uniqueness follows.
ALTER TABLE reservations DROP CONSTRAINT reservations_idempotency_key_per_user;
CREATE UNIQUE INDEX reservations_live_key_per_user ON reservations (user_id, idempotency_key) WHERE state IN ('held', 'committed');

-- A hold extended (ExtendReservation) is its own ledger kind: every reservation then has one
-- 'reserve' row and one settling row ('commit', 'release' or 'expire'), however often it grew.
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_kind_known;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_kind_known
  CHECK (kind IN ('reserve', 'extend', 'commit', 'release', 'expire', 'grant', 'adjust', 'reset'));
