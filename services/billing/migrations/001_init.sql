-- Billing: one account per user (plan, balances, cap, this period's counters), the ledger of
-- every balance change, and reservations (reserve → commit / release; used from the next
-- release on). Credits are whole numbers, money is cents; both bigint. No cross-service keys:
-- user_id is the auth service's usr_… id, checked there, not here.

CREATE TABLE accounts (
  user_id               text PRIMARY KEY,
  plan_id               text NOT NULL,
  monthly_remaining     bigint NOT NULL CONSTRAINT accounts_monthly_remaining_nonnegative CHECK (monthly_remaining >= 0),
  prepaid_remaining     bigint NOT NULL CONSTRAINT accounts_prepaid_remaining_nonnegative CHECK (prepaid_remaining >= 0),
  -- Credits held by running operations (already taken out of the two balances above).
  reserved              bigint NOT NULL DEFAULT 0 CONSTRAINT accounts_reserved_nonnegative CHECK (reserved >= 0),
  -- Current billing period: a calendar month in UTC, [period_start, period_end).
  period_start          timestamptz(3) NOT NULL,
  period_end            timestamptz(3) NOT NULL,
  spending_cap_cents    bigint NOT NULL CONSTRAINT accounts_spending_cap_nonnegative CHECK (spending_cap_cents >= 0),
  -- This period's spend on prepaid credits, and this period's counters.
  spend_cents           bigint NOT NULL DEFAULT 0 CONSTRAINT accounts_spend_nonnegative CHECK (spend_cents >= 0),
  credits_used          bigint NOT NULL DEFAULT 0 CONSTRAINT accounts_credits_used_nonnegative CHECK (credits_used >= 0),
  transcriptions        bigint NOT NULL DEFAULT 0 CONSTRAINT accounts_transcriptions_nonnegative CHECK (transcriptions >= 0),
  transcription_seconds bigint NOT NULL DEFAULT 0 CONSTRAINT accounts_transcription_seconds_nonnegative CHECK (transcription_seconds >= 0),
  conversions           bigint NOT NULL DEFAULT 0 CONSTRAINT accounts_conversions_nonnegative CHECK (conversions >= 0),
  created_at            timestamptz(3) NOT NULL,
  updated_at            timestamptz(3) NOT NULL,
  CONSTRAINT accounts_period_ordered CHECK (period_end > period_start)
);

CREATE TABLE ledger_entries (
  id                 text PRIMARY KEY, -- led_…
  -- Insertion order: breaks ties between rows written in the same millisecond (one transaction).
  seq                bigint GENERATED ALWAYS AS IDENTITY,
  user_id            text NOT NULL,
  kind               text NOT NULL CONSTRAINT ledger_entries_kind_known
                       CHECK (kind IN ('reserve', 'commit', 'release', 'expire', 'grant', 'adjust', 'reset')),
  monthly_delta      bigint NOT NULL DEFAULT 0,
  prepaid_delta      bigint NOT NULL DEFAULT 0,
  spend_delta_cents  bigint NOT NULL DEFAULT 0,
  reservation_id     text NULL,
  note               text NOT NULL DEFAULT '',
  created_at         timestamptz(3) NOT NULL
);

-- ListLedgerEntries: one user's rows, newest first, keyset-paged.
CREATE INDEX ledger_entries_user_newest ON ledger_entries (user_id, created_at DESC, seq DESC);

CREATE TABLE reservations (
  id               text PRIMARY KEY, -- rsv_…
  user_id          text NOT NULL,
  operation        text NOT NULL CONSTRAINT reservations_operation_known CHECK (operation IN ('transcribe', 'convert')),
  credits          bigint NOT NULL CONSTRAINT reservations_credits_nonnegative CHECK (credits >= 0),
  monthly_credits  bigint NOT NULL CONSTRAINT reservations_monthly_credits_nonnegative CHECK (monthly_credits >= 0),
  prepaid_credits  bigint NOT NULL CONSTRAINT reservations_prepaid_credits_nonnegative CHECK (prepaid_credits >= 0),
  state            text NOT NULL CONSTRAINT reservations_state_known CHECK (state IN ('held', 'committed', 'released', 'expired')),
  idempotency_key  text NOT NULL,
  created_at       timestamptz(3) NOT NULL,
  expires_at       timestamptz(3) NOT NULL,
  CONSTRAINT reservations_idempotency_key_per_user UNIQUE (user_id, idempotency_key)
);

-- The expiry sweep: held reservations past their deadline.
CREATE INDEX reservations_held_expiry ON reservations (expires_at) WHERE state = 'held';
