/**
 * The statement that locks an account (SELECT … FOR UPDATE) and, in the same round trip, reads
 * what the locked transaction will read first (store.ts, LockReadAhead): whether a hold is past
 * its deadline, and the reservation or admission the caller named. A reserve or a commit is a
 * few round trips under the lock; this spares it one or two.
 *
 * Why the rows read ahead can be trusted. A statement reads as of its start; when the account
 * row it locks was changed by a transaction that committed after that start (it waited for the
 * lock, or lost a race to it), Postgres locks the newest version of the account row, but the
 * joined rows stay as they were at the start. Every writer of a user's reservations and
 * admissions holds that user's account lock and rewrites the account row in the same
 * transaction (write-batch.ts makes sure of it), so the locked row is the row seen at the start
 * (same xmin) exactly when no such writer committed in between — and only then are the rows
 * read ahead used. Otherwise they are dropped and the transaction reads as it would without
 * them. `has_expired_holds` may likewise be stale, but only towards a false "yes": a transaction
 * waited for can settle holds, never make one overdue.
 */
import { ADMISSION_COLUMN_NAMES, RESERVATION_COLUMN_NAMES, toAccount, toAdmission, toReservation, type AccountRow, type AdmissionRow, type ReservationRow } from './rows';
import type { Account, AdmissionRecord, LockReadAhead, ReservationRecord } from './store';

/** What the lock's query found ahead, when it is current (see the module comment). */
export interface ReadAhead {
  /** The reservation asked for by id or key; null when there is none. Absent when none was asked for. */
  reservation?: ReservationRecord | null;
  /** The id or key it was asked for by. */
  reservationById?: string;
  reservationByKey?: string;
  /** The admission asked for; null when this user has none of that id. */
  admission?: AdmissionRecord | null;
  admissionId?: string;
}

export interface LockedAccount {
  account: Account;
  hasExpiredHolds: boolean;
  /** null when nothing was asked for, or what was read is not current. */
  ahead: ReadAhead | null;
}

const RESERVATION_PREFIX = 'r_';
const ADMISSION_PREFIX = 'm_';

/**
 * Whether account `a` has a held reservation past its deadline as of `$2`: a column of the lock's
 * statement and of the lock-free account read (postgres-store.ts findAccount).
 */
export const HAS_EXPIRED_HOLDS = `EXISTS (SELECT 1 FROM reservations h WHERE h.user_id = a.user_id AND h.state = 'held' AND h.expires_at <= $2) AS has_expired_holds`;

/** The lock statement and its parameters. */
export function lockStatement(userId: string, ahead: LockReadAhead): { text: string; values: unknown[] } {
  const values: unknown[] = [userId, ahead.now];
  const select = ['a.*', HAS_EXPIRED_HOLDS];
  const joins: string[] = [];
  const reservationBy = ahead.reservationId !== undefined ? 'id' : ahead.idempotencyKey !== undefined ? 'idempotency_key' : undefined;
  if (reservationBy) {
    values.push(ahead.reservationId ?? ahead.idempotencyKey);
    select.push(...RESERVATION_COLUMN_NAMES.map((c) => `r.${c} AS ${RESERVATION_PREFIX}${c}`));
    // By key, only a reservation that holds its key (held or committed; migrations/005).
    const live = reservationBy === 'idempotency_key' ? ` AND r.state IN ('held', 'committed')` : '';
    joins.push(`LEFT JOIN reservations r ON r.user_id = a.user_id AND r.${reservationBy} = $${values.length}${live}`);
  }
  if (ahead.admissionId !== undefined) {
    values.push(ahead.admissionId);
    select.push(...ADMISSION_COLUMN_NAMES.map((c) => `m.${c} AS ${ADMISSION_PREFIX}${c}`));
    joins.push(`LEFT JOIN admissions m ON m.user_id = a.user_id AND m.id = $${values.length}`);
  }
  if (joins.length > 0) select.push('a.xmin = (SELECT s.xmin FROM accounts s WHERE s.user_id = $1) AS read_ahead_current');
  return { text: `SELECT ${select.join(', ')} FROM accounts a ${joins.join(' ')} WHERE a.user_id = $1 FOR UPDATE OF a`, values };
}

function prefixed<R>(row: Record<string, unknown>, prefix: string, columns: readonly (keyof R)[]): R | null {
  if (row[`${prefix}id`] === null) return null;
  const out: Record<string, unknown> = {};
  for (const c of columns) out[c as string] = row[`${prefix}${String(c)}`];
  return out as R;
}

/** The lock statement's row, read. */
export function lockedAccount(row: AccountRow & Record<string, unknown>, ahead: LockReadAhead): LockedAccount {
  const account = toAccount(row);
  const hasExpiredHolds = row.has_expired_holds === true;
  if (row.read_ahead_current !== true) return { account, hasExpiredHolds, ahead: null };
  const found: ReadAhead = {};
  if (ahead.reservationId !== undefined || ahead.idempotencyKey !== undefined) {
    const r = prefixed<ReservationRow>(row, RESERVATION_PREFIX, RESERVATION_COLUMN_NAMES);
    found.reservation = r && toReservation(r);
    if (ahead.reservationId !== undefined) found.reservationById = ahead.reservationId;
    else found.reservationByKey = ahead.idempotencyKey;
  }
  if (ahead.admissionId !== undefined) {
    const m = prefixed<AdmissionRow>(row, ADMISSION_PREFIX, ADMISSION_COLUMN_NAMES);
    found.admission = m && toAdmission(m);
    found.admissionId = ahead.admissionId;
  }
  return { account, hasExpiredHolds, ahead: found };
}
