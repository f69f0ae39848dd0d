/**
 * Billing's rows as Postgres returns them, their column lists, and their conversion into the
 * domain's records (store.ts): bigints come back as strings, so every count is read through
 * Number here, in one place.
 */
import type {
  Account,
  AccountChanges,
  AdmissionRecord,
  LedgerEntryRecord,
  LedgerKind,
  OperationName,
  ReservationRecord,
  ReservationStateName,
} from './store';

export const ACCOUNT_COLUMNS: Record<keyof AccountChanges, string> = {
  planId: 'plan_id',
  monthlyRemaining: 'monthly_remaining',
  prepaidRemaining: 'prepaid_remaining',
  reserved: 'reserved',
  periodStart: 'period_start',
  periodEnd: 'period_end',
  spendingCapCents: 'spending_cap_cents',
  spendCents: 'spend_cents',
  creditsUsed: 'credits_used',
  transcriptions: 'transcriptions',
  transcriptionSeconds: 'transcription_seconds',
  conversions: 'conversions',
};

export interface AccountRow {
  user_id: string;
  plan_id: string;
  monthly_remaining: string;
  prepaid_remaining: string;
  reserved: string;
  period_start: Date;
  period_end: Date;
  spending_cap_cents: string;
  spend_cents: string;
  credits_used: string;
  transcriptions: string;
  transcription_seconds: string;
  conversions: string;
  created_at: Date;
  updated_at: Date;
}

export interface LedgerRow {
  id: string;
  seq: string;
  user_id: string;
  kind: LedgerKind;
  monthly_delta: string;
  prepaid_delta: string;
  spend_delta_cents: string;
  reservation_id: string | null;
  note: string;
  created_at: Date;
}

// bigint columns arrive as strings; balances stay far below 2^53, which the checks in the
// service (and int64 → number in the generated code) already enforce.
export function toAccount(row: AccountRow): Account {
  return {
    userId: row.user_id,
    planId: row.plan_id,
    monthlyRemaining: Number(row.monthly_remaining),
    prepaidRemaining: Number(row.prepaid_remaining),
    reserved: Number(row.reserved),
    periodStart: row.period_start,
    periodEnd: row.period_end,
    spendingCapCents: Number(row.spending_cap_cents),
    spendCents: Number(row.spend_cents),
    creditsUsed: Number(row.credits_used),
    transcriptions: Number(row.transcriptions),
    transcriptionSeconds: Number(row.transcription_seconds),
    conversions: Number(row.conversions),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function toLedgerEntry(row: LedgerRow): LedgerEntryRecord {
  return {
    id: row.id,
    seq: Number(row.seq),
    userId: row.user_id,
    kind: row.kind,
    monthlyDelta: Number(row.monthly_delta),
    prepaidDelta: Number(row.prepaid_delta),
    spendDeltaCents: Number(row.spend_delta_cents),
    reservationId: row.reservation_id,
    note: row.note,
    createdAt: row.created_at,
  };
}

export const LEDGER_COLUMNS = 'id, seq, user_id, kind, monthly_delta, prepaid_delta, spend_delta_cents, reservation_id, note, created_at';

export interface ReservationRow {
  id: string;
  user_id: string;
  operation: OperationName;
  credits: string;
  monthly_credits: string;
  prepaid_credits: string;
  held_credits: string;
  spend_cents: string;
  prepaid_credit_price_cents: string;
  state: ReservationStateName;
  idempotency_key: string;
  admission_id: string | null;
  period_start: Date;
  usage_seconds: string;
  note: string;
  created_at: Date;
  expires_at: Date;
  settled_at: Date | null;
  request_fingerprint: string | null;
  unit_credits: string;
}

export function toReservation(row: ReservationRow): ReservationRecord {
  return {
    id: row.id,
    userId: row.user_id,
    operation: row.operation,
    credits: Number(row.credits),
    monthlyCredits: Number(row.monthly_credits),
    prepaidCredits: Number(row.prepaid_credits),
    heldCredits: Number(row.held_credits),
    spendCents: Number(row.spend_cents),
    prepaidCreditPriceCents: Number(row.prepaid_credit_price_cents),
    state: row.state,
    idempotencyKey: row.idempotency_key,
    admissionId: row.admission_id,
    periodStart: row.period_start,
    usageSeconds: Number(row.usage_seconds),
    note: row.note,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    settledAt: row.settled_at,
    requestFingerprint: row.request_fingerprint,
    unitCredits: Number(row.unit_credits),
  };
}

export interface AdmissionRow {
  id: string;
  user_id: string;
  operation: OperationName;
  created_at: Date;
  expires_at: Date;
  consumed_at: Date | null;
  reservation_id: string | null;
}

export function toAdmission(row: AdmissionRow): AdmissionRecord {
  return {
    id: row.id,
    userId: row.user_id,
    operation: row.operation,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    consumedAt: row.consumed_at,
    reservationId: row.reservation_id,
  };
}

export interface DailyUsageRow {
  date: string;
  credits: string;
  transcriptions: string;
  conversions: string;
}

export interface ChargeRow {
  id: string;
  operation: OperationName;
  credits: string;
  spend_cents: string;
  settled_at: Date;
}

/** A reservation row's columns, in the order the service reads them. */
export const RESERVATION_COLUMN_NAMES: readonly (keyof ReservationRow)[] = [
  'id', 'user_id', 'operation', 'credits', 'monthly_credits', 'prepaid_credits', 'held_credits', 'spend_cents', 'prepaid_credit_price_cents',
  'state', 'idempotency_key', 'admission_id', 'period_start', 'usage_seconds', 'note', 'created_at', 'expires_at', 'settled_at',
  'request_fingerprint', 'unit_credits',
];
export const RESERVATION_COLUMNS = RESERVATION_COLUMN_NAMES.join(', ');
/** An admission row's columns. */
export const ADMISSION_COLUMN_NAMES: readonly (keyof AdmissionRow)[] = ['id', 'user_id', 'operation', 'created_at', 'expires_at', 'consumed_at', 'reservation_id'];
