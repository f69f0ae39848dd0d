/**
 * Billing's storage: the BillingStore interface the service is written against, and its
 * Postgres implementation. All SQL of the service lives here. Every balance change happens
 * inside {@link BillingStore.withAccount}, which holds the account row locked
 * (SELECT … FOR UPDATE) for one transaction, so concurrent calls for one user serialise and a
 * balance and its ledger row are written together or not at all. The CHECK constraints of the
 * schema are the last line of defence: a bug that would drive a balance negative fails the
 * transaction instead of overdrawing.
 */
import type { PoolClient } from 'pg';
import { newId, type Database } from '@murmur/kit';

/** A user's billing account as stored. */
export interface Account {
  userId: string;
  planId: string;
  monthlyRemaining: number;
  prepaidRemaining: number;
  reserved: number;
  periodStart: Date;
  periodEnd: Date;
  spendingCapCents: number;
  spendCents: number;
  creditsUsed: number;
  transcriptions: number;
  transcriptionSeconds: number;
  conversions: number;
  createdAt: Date;
  updatedAt: Date;
}

/** The columns a transaction may change; `updated_at` is set by the store. */
export type AccountChanges = Partial<Omit<Account, 'userId' | 'createdAt' | 'updatedAt'>>;

/** The account to create when a user has none yet. */
export type NewAccount = Omit<Account, 'updatedAt'>;

/** What moved, per the LedgerEntry.kind contract. */
export type LedgerKind = 'reserve' | 'commit' | 'release' | 'expire' | 'grant' | 'adjust' | 'reset';

export interface NewLedgerEntry {
  kind: LedgerKind;
  monthlyDelta?: number;
  prepaidDelta?: number;
  spendDeltaCents?: number;
  reservationId?: string | null;
  note?: string;
  createdAt: Date;
}

export interface LedgerEntryRecord {
  id: string;
  /** Insertion order; breaks ties between rows of the same millisecond. */
  seq: number;
  userId: string;
  kind: LedgerKind;
  monthlyDelta: number;
  prepaidDelta: number;
  spendDeltaCents: number;
  reservationId: string | null;
  note: string;
  createdAt: Date;
}

/** Where a ledger page ended: the last row returned. */
export interface LedgerPosition {
  createdAt: Date;
  seq: number;
}

/** What a caller may do with the one account it holds locked. */
export interface AccountTransaction {
  /** Writes `changes` (and `updated_at = at`) and returns the account as now stored. */
  update(changes: AccountChanges, at: Date): Promise<Account>;
  /** Appends one ledger row for this account. */
  appendLedger(entry: NewLedgerEntry): Promise<LedgerEntryRecord>;
}

export interface BillingStore {
  /** The account as stored, without locking; undefined when the user has none yet. */
  findAccount(userId: string): Promise<Account | undefined>;
  /**
   * Runs `fn` in one transaction holding the user's account locked. When the user has no
   * account, `initial` is inserted first (INSERT … ON CONFLICT DO NOTHING, so two first calls
   * racing create exactly one) and `created` is true for the call that inserted it. `fn` must
   * not wait on other database work: the embedded PGlite runs one transaction at a time.
   */
  withAccount<T>(userId: string, initial: NewAccount, fn: (account: Account, tx: AccountTransaction, created: boolean) => Promise<T>): Promise<T>;
  /** One user's ledger, newest first, `limit` rows after `after` (exclusive). */
  listLedgerEntries(userId: string, limit: number, after?: LedgerPosition): Promise<LedgerEntryRecord[]>;
}

const ACCOUNT_COLUMNS: Record<keyof AccountChanges, string> = {
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

interface AccountRow {
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

interface LedgerRow {
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
function toAccount(row: AccountRow): Account {
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

function toLedgerEntry(row: LedgerRow): LedgerEntryRecord {
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

const LEDGER_COLUMNS = 'id, seq, user_id, kind, monthly_delta, prepaid_delta, spend_delta_cents, reservation_id, note, created_at';

class PostgresAccountTransaction implements AccountTransaction {
  constructor(private readonly client: PoolClient, private readonly userId: string) {}

  async update(changes: AccountChanges, at: Date): Promise<Account> {
    const sets: string[] = [];
    const params: unknown[] = [this.userId];
    for (const [field, value] of Object.entries(changes)) {
      const column = ACCOUNT_COLUMNS[field as keyof AccountChanges];
      if (!column) throw new Error(`unknown account field ${field}`);
      if (value === undefined) continue;
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    }
    params.push(at);
    sets.push(`updated_at = $${params.length}`);
    const { rows } = await this.client.query<AccountRow>(`UPDATE accounts SET ${sets.join(', ')} WHERE user_id = $1 RETURNING *`, params);
    const row = rows[0];
    if (!row) throw new Error('account row vanished inside its own transaction');
    return toAccount(row);
  }

  async appendLedger(entry: NewLedgerEntry): Promise<LedgerEntryRecord> {
    const { rows } = await this.client.query<LedgerRow>(
      `INSERT INTO ledger_entries (id, user_id, kind, monthly_delta, prepaid_delta, spend_delta_cents, reservation_id, note, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       RETURNING ${LEDGER_COLUMNS}`,
      [
        newId('led'),
        this.userId,
        entry.kind,
        entry.monthlyDelta ?? 0,
        entry.prepaidDelta ?? 0,
        entry.spendDeltaCents ?? 0,
        entry.reservationId ?? null,
        entry.note ?? '',
        entry.createdAt,
      ],
    );
    return toLedgerEntry(rows[0]!);
  }
}

/** BillingStore over the service's own Postgres schema. */
export class PostgresBillingStore implements BillingStore {
  constructor(private readonly db: Database) {}

  async findAccount(userId: string): Promise<Account | undefined> {
    const [row] = await this.db.query<AccountRow>('SELECT * FROM accounts WHERE user_id = $1', [userId]);
    return row ? toAccount(row) : undefined;
  }

  async withAccount<T>(
    userId: string,
    initial: NewAccount,
    fn: (account: Account, tx: AccountTransaction, created: boolean) => Promise<T>,
  ): Promise<T> {
    return this.db.transaction(async (client) => {
      const inserted = await client.query(
        `INSERT INTO accounts (user_id, plan_id, monthly_remaining, prepaid_remaining, reserved, period_start, period_end,
                               spending_cap_cents, spend_cents, credits_used, transcriptions, transcription_seconds, conversions,
                               created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14)
         ON CONFLICT (user_id) DO NOTHING`,
        [
          userId,
          initial.planId,
          initial.monthlyRemaining,
          initial.prepaidRemaining,
          initial.reserved,
          initial.periodStart,
          initial.periodEnd,
          initial.spendingCapCents,
          initial.spendCents,
          initial.creditsUsed,
          initial.transcriptions,
          initial.transcriptionSeconds,
          initial.conversions,
          initial.createdAt,
        ],
      );
      const { rows } = await client.query<AccountRow>('SELECT * FROM accounts WHERE user_id = $1 FOR UPDATE', [userId]);
      const row = rows[0];
      if (!row) throw new Error('account missing right after its insert');
      return fn(toAccount(row), new PostgresAccountTransaction(client, userId), inserted.rowCount === 1);
    });
  }

  async listLedgerEntries(userId: string, limit: number, after?: LedgerPosition): Promise<LedgerEntryRecord[]> {
    const rows = after
      ? await this.db.query<LedgerRow>(
          `SELECT ${LEDGER_COLUMNS} FROM ledger_entries
           WHERE user_id = $1 AND (created_at, seq) < ($2, $3)
           ORDER BY created_at DESC, seq DESC LIMIT $4`,
          [userId, after.createdAt, after.seq, limit],
        )
      : await this.db.query<LedgerRow>(
          `SELECT ${LEDGER_COLUMNS} FROM ledger_entries WHERE user_id = $1 ORDER BY created_at DESC, seq DESC LIMIT $2`,
          [userId, limit],
        );
    return rows.map(toLedgerEntry);
  }
}
