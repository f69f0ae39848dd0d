/**
 * Billing's storage: the BillingStore interface the service is written against, and its
 * Postgres implementation. All SQL of the service lives here. Every balance change — and every
 * write of a user's reservations and admissions consumed — happens inside
 * {@link BillingStore.withAccount}, which holds the account row locked (SELECT … FOR UPDATE)
 * for one transaction, so concurrent calls for one user serialise (two reserves can never both
 * take the last credit) and a balance, its reservation and its ledger row are written together
 * or not at all. The background sweeper takes the same lock with SKIP LOCKED, so it never queues
 * behind a request. The CHECK constraints of the schema are the last line of defence: a bug
 * that would drive a balance negative fails the transaction instead of overdrawing.
 */
import type { PoolClient } from 'pg';
import { newId, type Database } from '@murmur/kit';
import { statementRunner, type RunStatement } from './prepared';
import { WriteBatch } from './write-batch';

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

/** An AI operation as stored. */
export type OperationName = 'transcribe' | 'convert';

/** Where a reservation is in reserve → commit / release / expire. */
export type ReservationStateName = 'held' | 'committed' | 'released' | 'expired';

/** A reservation as stored (see migrations/002_charging.sql for what each amount means). */
export interface ReservationRecord {
  id: string;
  userId: string;
  operation: OperationName;
  /** Held while held; the final charge once committed. */
  credits: number;
  monthlyCredits: number;
  prepaidCredits: number;
  /** What Reserve held. */
  heldCredits: number;
  /** Spend the prepaid part counts for. */
  spendCents: number;
  /** Price of one prepaid credit when it was reserved. */
  prepaidCreditPriceCents: number;
  state: ReservationStateName;
  idempotencyKey: string;
  admissionId: string | null;
  /** Start of the billing period the credits were drawn in. */
  periodStart: Date;
  usageSeconds: number;
  note: string;
  createdAt: Date;
  expiresAt: Date;
  settledAt: Date | null;
}

/** The columns settling a reservation changes. */
export type ReservationSettlement = Pick<ReservationRecord, 'state' | 'credits' | 'monthlyCredits' | 'prepaidCredits' | 'spendCents' | 'usageSeconds' | 'note'> & {
  settledAt: Date;
};

/** An admission from AdmitAiRequest as stored. */
export interface AdmissionRecord {
  id: string;
  userId: string;
  operation: OperationName;
  createdAt: Date;
  expiresAt: Date;
  consumedAt: Date | null;
  reservationId: string | null;
}

/** One UTC day of a user's committed charges. */
export interface DailyUsageRecord {
  /** `YYYY-MM-DD` in UTC. */
  date: string;
  credits: number;
  transcriptions: number;
  conversions: number;
}

/** A committed reservation seen as what the AI call cost. */
export interface ChargeRecord {
  reservationId: string;
  operation: OperationName;
  /** The final charge. */
  credits: number;
  spendCents: number;
  /** When it was committed (the reservation's settled_at). */
  chargedAt: Date;
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
  /** Appends one ledger row for this account (written with the transaction's other writes, in order). */
  appendLedger(entry: NewLedgerEntry): Promise<void>;
  /** One of this user's reservations by id; undefined when unknown or someone else's. */
  findReservation(id: string): Promise<ReservationRecord | undefined>;
  /** This user's reservation made with `idempotencyKey`, if any. */
  findReservationByKey(idempotencyKey: string): Promise<ReservationRecord | undefined>;
  /** This user's held reservations whose deadline is at or before `now`, oldest deadline first. */
  expiredHolds(now: Date): Promise<ReservationRecord[]>;
  insertReservation(reservation: ReservationRecord): Promise<ReservationRecord>;
  /** Moves the deadline of one of this user's held reservations (a renewed lease). */
  extendReservation(id: string, expiresAt: Date): Promise<ReservationRecord>;
  /** Moves one of this user's held reservations out of the held state. */
  settleReservation(id: string, settlement: ReservationSettlement): Promise<ReservationRecord>;
  /** One of this user's admissions by id; undefined when unknown or someone else's. */
  findAdmission(id: string): Promise<AdmissionRecord | undefined>;
  /** Marks an unconsumed admission consumed by `reservationId`; false when it was consumed already. */
  consumeAdmission(id: string, reservationId: string, at: Date): Promise<boolean>;
}

/** A lock-free look at an account, enough to tell whether it needs the locked path first. */
export interface AccountSnapshot {
  account: Account;
  /** True when a held reservation of the user is past its deadline (to be expired under the lock). */
  hasExpiredHolds: boolean;
}

export interface BillingStore {
  /** The account as stored, without locking, and whether it has holds past `now`; undefined when the user has none yet. */
  findAccount(userId: string, now: Date): Promise<AccountSnapshot | undefined>;
  /**
   * Runs `fn` in one transaction holding the user's account locked (SELECT … FOR UPDATE). When
   * the user has no account, `initial` is inserted first (INSERT … ON CONFLICT DO NOTHING, so two
   * first calls racing create exactly one) and `created` is true for the call that inserted it. `fn` must
   * not wait on other database work: the embedded PGlite runs one transaction at a time.
   * `now`, when given, is the time the caller's change happens at: the lock's query then also
   * tells whether any hold is past its deadline by then, sparing `tx.expiredHolds(now)` a query.
   */
  withAccount<T>(userId: string, initial: NewAccount, fn: (account: Account, tx: AccountTransaction, created: boolean) => Promise<T>, now?: Date): Promise<T>;
  /**
   * Runs `fn` in one transaction holding an existing account locked, unless another
   * transaction holds it (SELECT … FOR UPDATE SKIP LOCKED): then `fn` does not run and the
   * result is `{ ran: false }`. For background work that must never queue behind requests.
   */
  withAccountIfUnlocked<T>(userId: string, fn: (account: Account, tx: AccountTransaction) => Promise<T>): Promise<{ ran: true; value: T } | { ran: false }>;
  /** One user's ledger, newest first, `limit` rows after `after` (exclusive). */
  listLedgerEntries(userId: string, limit: number, after?: LedgerPosition): Promise<LedgerEntryRecord[]>;
  /**
   * One user's committed charges settled in `[from, until)`, summed per UTC day, oldest day
   * first; days without a charge are absent.
   */
  dailyUsage(userId: string, from: Date, until: Date): Promise<DailyUsageRecord[]>;
  /** One user's `limit` most recent committed charges, newest first (ties: the larger reservation id first). */
  recentCharges(userId: string, limit: number): Promise<ChargeRecord[]>;
  /** Records a new admission. */
  insertAdmission(admission: AdmissionRecord): Promise<void>;
  /** Up to `limit` users with a held reservation past `now`, leaving out `exclude`. */
  usersWithExpiredHolds(now: Date, limit: number, exclude: string[]): Promise<string[]>;
  /** Deletes admissions that expired before `cutoff`; returns how many. */
  deleteAdmissionsExpiredBefore(cutoff: Date): Promise<number>;
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

interface ReservationRow {
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
}

function toReservation(row: ReservationRow): ReservationRecord {
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
  };
}

interface AdmissionRow {
  id: string;
  user_id: string;
  operation: OperationName;
  created_at: Date;
  expires_at: Date;
  consumed_at: Date | null;
  reservation_id: string | null;
}

function toAdmission(row: AdmissionRow): AdmissionRecord {
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

interface DailyUsageRow {
  date: string;
  credits: string;
  transcriptions: string;
  conversions: string;
}

interface ChargeRow {
  id: string;
  operation: OperationName;
  credits: string;
  spend_cents: string;
  settled_at: Date;
}

const RESERVATION_COLUMNS =
  'id, user_id, operation, credits, monthly_credits, prepaid_credits, held_credits, spend_cents, prepaid_credit_price_cents, state, ' +
  'idempotency_key, admission_id, period_start, usage_seconds, note, created_at, expires_at, settled_at';

class PostgresAccountTransaction implements AccountTransaction {
  private readonly writes: WriteBatch;
  /** Reservations this transaction has read or written, as they now stand: what a queued settle returns. */
  private readonly known = new Map<string, ReservationRecord>();

  /**
   * `account` is the locked row; `noExpiredHoldsAt`, when set, is a time at which the lock's own
   * query found no held reservation past its deadline (so `expiredHolds` of that time needs no query).
   */
  constructor(
    private readonly client: PoolClient,
    private readonly run: RunStatement,
    private readonly userId: string,
    private account: Account,
    private readonly noExpiredHoldsAt: Date | null,
  ) {
    this.writes = new WriteBatch(userId);
  }

  /** Sends the queued writes: before every read, and before COMMIT. */
  flush(): Promise<void> {
    return this.writes.flush(this.client, this.run);
  }

  private remember(r: ReservationRecord): ReservationRecord {
    this.known.set(r.id, r);
    return r;
  }

  async update(changes: AccountChanges, at: Date): Promise<Account> {
    const sets: [string, unknown][] = [];
    const next: Account = { ...this.account, updatedAt: at };
    for (const [field, value] of Object.entries(changes)) {
      const column = ACCOUNT_COLUMNS[field as keyof AccountChanges];
      if (!column) throw new Error(`unknown account field ${field}`);
      if (value === undefined) continue;
      sets.push([column, value]);
      (next as unknown as Record<string, unknown>)[field] = value;
    }
    sets.push(['updated_at', at]);
    this.writes.setAccount(sets);
    this.account = next;
    return next;
  }

  async appendLedger(entry: NewLedgerEntry): Promise<void> {
    this.writes.appendLedger([
      newId('led'),
      entry.kind,
      entry.monthlyDelta ?? 0,
      entry.prepaidDelta ?? 0,
      entry.spendDeltaCents ?? 0,
      entry.reservationId ?? null,
      entry.note ?? '',
      entry.createdAt,
    ]);
  }

  async findReservation(id: string): Promise<ReservationRecord | undefined> {
    await this.flush();
    const { rows } = await this.run<ReservationRow>(this.client, `SELECT ${RESERVATION_COLUMNS} FROM reservations WHERE id = $1 AND user_id = $2`, [
      id,
      this.userId,
    ]);
    return rows[0] ? this.remember(toReservation(rows[0])) : undefined;
  }

  async findReservationByKey(idempotencyKey: string): Promise<ReservationRecord | undefined> {
    await this.flush();
    const { rows } = await this.run<ReservationRow>(
      this.client,
      `SELECT ${RESERVATION_COLUMNS} FROM reservations WHERE user_id = $1 AND idempotency_key = $2`,
      [this.userId, idempotencyKey],
    );
    return rows[0] ? this.remember(toReservation(rows[0])) : undefined;
  }

  async expiredHolds(now: Date): Promise<ReservationRecord[]> {
    if (this.noExpiredHoldsAt !== null && now.getTime() <= this.noExpiredHoldsAt.getTime()) return [];
    await this.flush();
    const { rows } = await this.run<ReservationRow>(
      this.client,
      `SELECT ${RESERVATION_COLUMNS} FROM reservations
       WHERE user_id = $1 AND state = 'held' AND expires_at <= $2
       ORDER BY expires_at, id`,
      [this.userId, now],
    );
    return rows.map((row) => this.remember(toReservation(row)));
  }

  async insertReservation(r: ReservationRecord): Promise<ReservationRecord> {
    if (this.writes.touches(r.id)) await this.flush();
    this.writes.insertReservation([
      r.id, r.operation, r.credits, r.monthlyCredits, r.prepaidCredits, r.heldCredits, r.spendCents,
      r.prepaidCreditPriceCents, r.state, r.idempotencyKey, r.admissionId, r.periodStart, r.usageSeconds, r.note,
      r.createdAt, r.expiresAt, r.settledAt,
    ]);
    return this.remember({ ...r, userId: this.userId });
  }

  async extendReservation(id: string, expiresAt: Date): Promise<ReservationRecord> {
    const known = this.known.get(id);
    if (known?.state === 'held') {
      if (this.writes.touches(id)) await this.flush();
      // Every writer of a user's reservations holds that user's account lock: the flush checks it found the held row.
      this.writes.updateHeld(id, [['expires_at', expiresAt]], 'renewed');
      return this.remember({ ...known, expiresAt });
    }
    await this.flush();
    const { rows } = await this.client.query<ReservationRow>(
      `UPDATE reservations SET expires_at = $3 WHERE id = $1 AND user_id = $2 AND state = 'held' RETURNING ${RESERVATION_COLUMNS}`,
      [id, this.userId, expiresAt],
    );
    const row = rows[0];
    if (!row) throw new Error(`reservation ${id} was not held when renewed`);
    return this.remember(toReservation(row));
  }

  async settleReservation(id: string, s: ReservationSettlement): Promise<ReservationRecord> {
    const known = this.known.get(id);
    if (known?.state === 'held') {
      if (this.writes.touches(id)) await this.flush();
      this.writes.updateHeld(
        id,
        [
          ['state', s.state], ['credits', s.credits], ['monthly_credits', s.monthlyCredits], ['prepaid_credits', s.prepaidCredits],
          ['spend_cents', s.spendCents], ['usage_seconds', s.usageSeconds], ['note', s.note], ['settled_at', s.settledAt],
        ],
        'settled',
      );
      return this.remember({ ...known, ...s });
    }
    await this.flush();
    const { rows } = await this.client.query<ReservationRow>(
      `UPDATE reservations
       SET state = $3, credits = $4, monthly_credits = $5, prepaid_credits = $6, spend_cents = $7, usage_seconds = $8, note = $9, settled_at = $10
       WHERE id = $1 AND user_id = $2 AND state = 'held'
       RETURNING ${RESERVATION_COLUMNS}`,
      [id, this.userId, s.state, s.credits, s.monthlyCredits, s.prepaidCredits, s.spendCents, s.usageSeconds, s.note, s.settledAt],
    );
    const row = rows[0];
    if (!row) throw new Error(`reservation ${id} was not held when settled`);
    return this.remember(toReservation(row));
  }

  async findAdmission(id: string): Promise<AdmissionRecord | undefined> {
    await this.flush();
    const { rows } = await this.client.query<AdmissionRow>('SELECT * FROM admissions WHERE id = $1 AND user_id = $2', [id, this.userId]);
    return rows[0] ? toAdmission(rows[0]) : undefined;
  }

  async consumeAdmission(id: string, reservationId: string, at: Date): Promise<boolean> {
    await this.flush();
    const { rowCount } = await this.client.query(
      'UPDATE admissions SET consumed_at = $3, reservation_id = $4 WHERE id = $1 AND user_id = $2 AND consumed_at IS NULL',
      [id, this.userId, at, reservationId],
    );
    return rowCount === 1;
  }
}

/** BillingStore over the service's own Postgres schema. */
export class PostgresBillingStore implements BillingStore {
  private readonly run: RunStatement;

  constructor(private readonly db: Database) {
    this.run = statementRunner(db.embedded);
  }

  async findAccount(userId: string, now: Date): Promise<AccountSnapshot | undefined> {
    const [row] = await this.db.query<AccountRow & { has_expired_holds: boolean }>(
      `SELECT a.*, EXISTS (SELECT 1 FROM reservations r WHERE r.user_id = a.user_id AND r.state = 'held' AND r.expires_at <= $2) AS has_expired_holds
       FROM accounts a WHERE a.user_id = $1`,
      [userId, now],
    );
    return row ? { account: toAccount(row), hasExpiredHolds: row.has_expired_holds } : undefined;
  }

  async withAccount<T>(
    userId: string,
    initial: NewAccount,
    fn: (account: Account, tx: AccountTransaction, created: boolean) => Promise<T>,
    now?: Date,
  ): Promise<T> {
    return this.db.transaction(async (client) => {
      // The account nearly always exists: lock it straight away, and insert only when it is missing.
      // The same query says whether a hold is past its deadline by `now` (false positives only: a
      // row lock waited for does not refresh the subquery, and the transaction waited for can
      // only have settled holds, never made one overdue).
      const lock = () =>
        this.run<AccountRow & { has_expired_holds: boolean }>(
          client,
          `SELECT a.*, EXISTS (SELECT 1 FROM reservations r WHERE r.user_id = a.user_id AND r.state = 'held' AND r.expires_at <= $2) AS has_expired_holds
           FROM accounts a WHERE a.user_id = $1 FOR UPDATE OF a`,
          [userId, now ?? initial.createdAt],
        );
      let row = (await lock()).rows[0];
      let created = false;
      if (!row) {
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
        created = inserted.rowCount === 1;
        row = (await lock()).rows[0];
      }
      if (!row) throw new Error('account missing right after its insert');
      const account = toAccount(row);
      const tx = new PostgresAccountTransaction(client, this.run, userId, account, now && !row.has_expired_holds ? now : null);
      const out = await fn(account, tx, created);
      await tx.flush();
      return out;
    });
  }

  async withAccountIfUnlocked<T>(
    userId: string,
    fn: (account: Account, tx: AccountTransaction) => Promise<T>,
  ): Promise<{ ran: true; value: T } | { ran: false }> {
    return this.db.transaction(async (client) => {
      const { rows } = await client.query<AccountRow>('SELECT * FROM accounts WHERE user_id = $1 FOR UPDATE SKIP LOCKED', [userId]);
      const row = rows[0];
      if (!row) return { ran: false };
      const account = toAccount(row);
      const tx = new PostgresAccountTransaction(client, this.run, userId, account, null);
      const value = await fn(account, tx);
      await tx.flush();
      return { ran: true, value };
    });
  }

  async insertAdmission(a: AdmissionRecord): Promise<void> {
    await this.db.query(
      `INSERT INTO admissions (id, user_id, operation, created_at, expires_at, consumed_at, reservation_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [a.id, a.userId, a.operation, a.createdAt, a.expiresAt, a.consumedAt, a.reservationId],
    );
  }

  async usersWithExpiredHolds(now: Date, limit: number, exclude: string[]): Promise<string[]> {
    // Oldest deadlines first (the partial index on expires_at); DISTINCT after the ordering.
    const rows = await this.db.query<{ user_id: string }>(
      `SELECT user_id FROM (
         SELECT user_id, min(expires_at) AS first_deadline FROM reservations
         WHERE state = 'held' AND expires_at <= $1 AND NOT (user_id = ANY($3::text[]))
         GROUP BY user_id
       ) due ORDER BY first_deadline LIMIT $2`,
      [now, limit, exclude],
    );
    return rows.map((r) => r.user_id);
  }

  async deleteAdmissionsExpiredBefore(cutoff: Date): Promise<number> {
    const rows = await this.db.query<{ id: string }>('DELETE FROM admissions WHERE expires_at < $1 RETURNING id', [cutoff]);
    return rows.length;
  }

  async dailyUsage(userId: string, from: Date, until: Date): Promise<DailyUsageRecord[]> {
    // The day is taken in UTC whatever the session's time zone (AT TIME ZONE 'UTC' of a timestamptz).
    const rows = await this.db.query<DailyUsageRow>(
      `SELECT to_char(settled_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS date, sum(credits) AS credits,
              count(*) FILTER (WHERE operation = 'transcribe') AS transcriptions,
              count(*) FILTER (WHERE operation = 'convert') AS conversions
       FROM reservations
       WHERE user_id = $1 AND state = 'committed' AND settled_at >= $2 AND settled_at < $3
       GROUP BY 1 ORDER BY 1`,
      [userId, from, until],
    );
    return rows.map((r) => ({ date: r.date, credits: Number(r.credits), transcriptions: Number(r.transcriptions), conversions: Number(r.conversions) }));
  }

  async recentCharges(userId: string, limit: number): Promise<ChargeRecord[]> {
    const rows = await this.db.query<ChargeRow>(
      `SELECT id, operation, credits, spend_cents, settled_at FROM reservations
       WHERE user_id = $1 AND state = 'committed'
       ORDER BY settled_at DESC, id DESC LIMIT $2`,
      [userId, limit],
    );
    return rows.map((r) => ({
      reservationId: r.id,
      operation: r.operation,
      credits: Number(r.credits),
      spendCents: Number(r.spend_cents),
      chargedAt: r.settled_at,
    }));
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
