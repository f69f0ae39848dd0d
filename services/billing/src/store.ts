/**
 * Billing's storage: the records and the BillingStore interface the service is written
 * against. Its Postgres implementation is postgres-store.ts (with rows.ts and
 * account-transaction.ts), where all the service's SQL lives. Every balance change — and every
 * write of a user's reservations and admissions consumed — happens inside
 * {@link BillingStore.withAccount}, which holds the account row locked (SELECT … FOR UPDATE)
 * for one transaction, so concurrent calls for one user serialise (two reserves can never both
 * take the last credit) and a balance, its reservation and its ledger row are written together
 * or not at all. The background sweeper takes the same lock with SKIP LOCKED, so it never queues
 * behind a request. The CHECK constraints of the schema are the last line of defence: a bug
 * that would drive a balance negative fails the transaction instead of overdrawing.
 */

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
export type LedgerKind = 'reserve' | 'extend' | 'commit' | 'release' | 'expire' | 'grant' | 'adjust' | 'reset';

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
  /** What the request it was made for looked like (ReserveRequest.request_fingerprint); null for reservations older than fingerprints. */
  requestFingerprint: string | null;
  /** Price of one priced unit (a started minute, a started 1,000 characters) when reserved; 0 for an explicit amount. */
  unitCredits: number;
}

/** What a held reservation holds, and how it splits (what growing it changes). */
export type ReservationAmounts = Pick<ReservationRecord, 'credits' | 'heldCredits' | 'monthlyCredits' | 'prepaidCredits' | 'spendCents'>;

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
  /** This user's held or committed reservation made with `idempotencyKey`, if any (a released or expired one no longer holds its key). */
  findReservationByKey(idempotencyKey: string): Promise<ReservationRecord | undefined>;
  /** This user's held reservations whose deadline is at or before `now`, oldest deadline first. */
  expiredHolds(now: Date): Promise<ReservationRecord[]>;
  insertReservation(reservation: ReservationRecord): Promise<ReservationRecord>;
  /** Moves the deadline of one of this user's held reservations (a renewed lease). */
  extendReservation(id: string, expiresAt: Date): Promise<ReservationRecord>;
  /** Raises what one of this user's held reservations holds (ExtendReservation): its amounts become `amounts`. */
  growReservation(id: string, amounts: ReservationAmounts): Promise<ReservationRecord>;
  /** Moves one of this user's held reservations out of the held state. */
  settleReservation(id: string, settlement: ReservationSettlement): Promise<ReservationRecord>;
  /** One of this user's admissions by id; undefined when unknown or someone else's. */
  findAdmission(id: string): Promise<AdmissionRecord | undefined>;
  /** Marks an unconsumed admission consumed by `reservationId`; false when it was consumed already. */
  consumeAdmission(id: string, reservationId: string, at: Date): Promise<boolean>;
}

/**
 * What a locked transaction will read first, read by the lock's own query. `now` is the time the
 * change happens at: the query also tells whether any hold is past its deadline by then, sparing
 * `tx.expiredHolds(now)` a query. A reservation (by id or by idempotency key) or an admission
 * named here is then answered by the transaction without a query, found or not — but only when
 * the lock did not have to follow another transaction's change to the account: the query's rows
 * are read as of its start, and every writer of a user's reservations or admissions changes the
 * account row under the same lock, so an unchanged account row means they are current.
 */
export interface LockReadAhead {
  now: Date;
  reservationId?: string;
  idempotencyKey?: string;
  admissionId?: string;
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
   * `ahead`, when given, names what the caller will read first; the lock's own query reads it
   * (see {@link LockReadAhead}), sparing those reads their round trips.
   */
  withAccount<T>(
    userId: string,
    initial: NewAccount,
    fn: (account: Account, tx: AccountTransaction, created: boolean) => Promise<T>,
    ahead?: LockReadAhead,
  ): Promise<T>;
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
