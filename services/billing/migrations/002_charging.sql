-- Charging: reserve → commit / release / expire, and one-use admissions from AdmitAiRequest.
--
-- A reservation's credits / monthly_credits / prepaid_credits are what it holds while held and
-- its final charge (and that charge's split) once committed; held_credits keeps what Reserve
-- held. spend_cents is the spend its prepaid part counts for, at the price of one prepaid credit
-- when it was reserved (prepaid_credit_price_cents), so a refund returns exactly what was taken
-- even after a plan change. period_start is the billing period the credits were drawn in: the
-- monthly part of a hold from an earlier period is not returned (it lapsed with that period).

ALTER TABLE reservations
  ADD COLUMN held_credits               bigint NULL,
  ADD COLUMN spend_cents                bigint NOT NULL DEFAULT 0 CONSTRAINT reservations_spend_nonnegative CHECK (spend_cents >= 0),
  ADD COLUMN prepaid_credit_price_cents bigint NOT NULL DEFAULT 0 CONSTRAINT reservations_price_nonnegative CHECK (prepaid_credit_price_cents >= 0),
  ADD COLUMN period_start               timestamptz(3) NULL,
  -- The admission this reservation consumed; NULL when Reserve took its own rate-limit slot.
  ADD COLUMN admission_id               text NULL,
  -- Usage reported by Commit (audio seconds of a transcription).
  ADD COLUMN usage_seconds              bigint NOT NULL DEFAULT 0 CONSTRAINT reservations_usage_seconds_nonnegative CHECK (usage_seconds >= 0),
  -- Release reason, or why the service expired it.
  ADD COLUMN note                       text NOT NULL DEFAULT '',
  -- When it left the held state (committed, released or expired).
  ADD COLUMN settled_at                 timestamptz(3) NULL;

-- The previous release never wrote reservations; backfill anyway so this never depends on it.
UPDATE reservations SET held_credits = credits, period_start = date_trunc('month', created_at, 'UTC') WHERE held_credits IS NULL;

ALTER TABLE reservations
  ALTER COLUMN held_credits SET NOT NULL,
  ALTER COLUMN period_start SET NOT NULL,
  ADD CONSTRAINT reservations_charge_within_hold CHECK (credits <= held_credits),
  ADD CONSTRAINT reservations_split_adds_up CHECK (monthly_credits + prepaid_credits = credits),
  ADD CONSTRAINT reservations_settled_iff_not_held CHECK ((state = 'held') = (settled_at IS NULL));

-- Lazy expiry while touching one account: that user's held reservations past their deadline.
CREATE INDEX reservations_user_held_expiry ON reservations (user_id, expires_at) WHERE state = 'held';

-- AdmitAiRequest's one-use admissions: the gateway admits a call before reading its body (rate
-- limit slot taken, credits and cap checked) and the AI service's Reserve consumes the admission
-- instead of taking a second slot.
CREATE TABLE admissions (
  id              text PRIMARY KEY, -- adm_…
  user_id         text NOT NULL,
  operation       text NOT NULL CONSTRAINT admissions_operation_known CHECK (operation IN ('transcribe', 'convert')),
  created_at      timestamptz(3) NOT NULL,
  expires_at      timestamptz(3) NOT NULL,
  consumed_at     timestamptz(3) NULL,
  reservation_id  text NULL,
  CONSTRAINT admissions_consumed_by_a_reservation CHECK ((consumed_at IS NULL) = (reservation_id IS NULL))
);

-- The sweeper deletes admissions a day after they expired.
CREATE INDEX admissions_expiry ON admissions (expires_at);
