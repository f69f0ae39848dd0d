/**
 * The writes of one account transaction, sent to Postgres as one statement. A reserve or a
 * commit used to make a round trip for each write — the reservation, the account's balances,
 * the ledger row — each waiting for the last under the account lock; on this machine every
 * round trip is two system calls on each side, and they were most of billing's CPU. The domain
 * code still calls the writes one by one; the transaction queues them here and sends them
 * together (data-modifying CTEs) before its next read and before COMMIT, so a read always sees
 * every earlier write, and a write the database refuses (a CHECK, a reservation no longer held)
 * still fails the transaction before it commits.
 *
 * Order is kept where it shows: the account's changes are merged into one UPDATE (each change
 * sets absolute values computed from the account before it, so the last value of a column is
 * the right one), and the ledger rows go in one multi-row INSERT in the order they were
 * appended, so their `seq` follows that order.
 */
import type { PoolClient } from 'pg';
import type { RunStatement } from './prepared';

type Value = unknown;

/** A held reservation's update, checked to have found the row. */
interface HeldUpdate {
  id: string;
  sets: [column: string, value: Value][];
  /** "settled" / "renewed": for the error when the reservation was not held. */
  what: string;
}

/** Columns of a queued row, after user_id (which is the transaction's user, $1). */
export const LEDGER_INSERT_COLUMNS = ['id', 'kind', 'monthly_delta', 'prepaid_delta', 'spend_delta_cents', 'reservation_id', 'note', 'created_at'];
export const RESERVATION_INSERT_COLUMNS = [
  'id', 'operation', 'credits', 'monthly_credits', 'prepaid_credits', 'held_credits', 'spend_cents', 'prepaid_credit_price_cents',
  'state', 'idempotency_key', 'admission_id', 'period_start', 'usage_seconds', 'note', 'created_at', 'expires_at', 'settled_at',
  'request_fingerprint', 'unit_credits',
];

export class WriteBatch {
  private account = new Map<string, Value>();
  private ledger: Value[][] = [];
  private inserts: Value[][] = [];
  private updates: HeldUpdate[] = [];
  private insertedIds = new Set<string>();
  private admissions: HeldUpdate[] = [];
  private touched = false;

  constructor(private readonly userId: string) {}

  get empty(): boolean {
    return this.account.size === 0 && this.ledger.length === 0 && this.inserts.length === 0 && this.updates.length === 0 &&
      this.admissions.length === 0 && !this.touched;
  }

  /** True when a queued write touches this reservation (a second write to it must wait for a flush). */
  touches(reservationId: string): boolean {
    return this.insertedIds.has(reservationId) || this.updates.some((u) => u.id === reservationId);
  }

  setAccount(sets: [column: string, value: Value][]): void {
    for (const [column, value] of sets) this.account.set(column, value);
  }

  /** One ledger row, values in {@link LEDGER_INSERT_COLUMNS} order. */
  appendLedger(values: Value[]): void {
    this.ledger.push(values);
  }

  /** One new reservation, values in {@link RESERVATION_INSERT_COLUMNS} order (its id first). */
  insertReservation(values: Value[]): void {
    this.inserts.push(values);
    this.insertedIds.add(values[0] as string);
  }

  /** An update of one of this user's reservations, which must still be held. */
  updateHeld(id: string, sets: [column: string, value: Value][], what: string): void {
    this.updates.push({ id, sets, what });
  }

  /** Consumes one of this user's admissions, which must still be unconsumed. */
  consumeAdmission(id: string, sets: [column: string, value: Value][]): void {
    this.admissions.push({ id, sets, what: 'consumed' });
  }

  /**
   * Rewrites the account row even when none of its values change: for a reservation or an
   * admission written outside this batch. The lock's read-ahead (account-lock.ts) trusts what it
   * read only when the account row has not changed since, so every transaction that writes
   * either must write the account row too; the batch does it for its own writes.
   */
  touchAccount(): void {
    this.touched = true;
  }

  /**
   * Every queued write as one statement, which fails (aborting the transaction) when one found
   * nothing to change; the queue is left empty. Undefined when nothing is queued.
   */
  take(): { text: string; values: Value[] } | undefined {
    if (this.empty) return undefined;
    const params: Value[] = [this.userId];
    const p = (v: Value) => {
      params.push(v);
      return `$${params.length}`;
    };
    const ctes: string[] = [];
    const counted: { name: string; error: string }[] = [];
    this.updates.forEach((u, i) => {
      ctes.push(
        `u${i} AS (UPDATE reservations SET ${u.sets.map(([c, v]) => `${c} = ${p(v)}`).join(', ')} ` +
          `WHERE id = ${p(u.id)} AND user_id = $1 AND state = 'held' RETURNING 1)`,
      );
      counted.push({ name: `u${i}`, error: `reservation ${u.id} was not held when ${u.what}` });
    });
    this.admissions.forEach((u, i) => {
      ctes.push(
        `c${i} AS (UPDATE admissions SET ${u.sets.map(([c, v]) => `${c} = ${p(v)}`).join(', ')} ` +
          `WHERE id = ${p(u.id)} AND user_id = $1 AND consumed_at IS NULL RETURNING 1)`,
      );
      counted.push({ name: `c${i}`, error: `admission ${u.id} was no longer unconsumed when ${u.what}` });
    });
    if (this.inserts.length > 0) {
      const rows = this.inserts.map((values) => `($1, ${values.map(p).join(', ')})`).join(', ');
      ctes.push(`r AS (INSERT INTO reservations (user_id, ${RESERVATION_INSERT_COLUMNS.join(', ')}) VALUES ${rows} RETURNING 1)`);
    }
    const rewrite = this.touched || this.updates.length > 0 || this.inserts.length > 0 || this.admissions.length > 0;
    if (this.account.size > 0 || rewrite) {
      const sets = this.account.size > 0 ? [...this.account].map(([c, v]) => `${c} = ${p(v)}`).join(', ') : 'updated_at = updated_at';
      ctes.push(`a AS (UPDATE accounts SET ${sets} WHERE user_id = $1 RETURNING 1)`);
      counted.push({ name: 'a', error: 'account row vanished inside its own transaction' });
    }
    if (this.ledger.length > 0) {
      const rows = this.ledger.map((values) => `($1, ${values.map(p).join(', ')})`).join(', ');
      ctes.push(`l AS (INSERT INTO ledger_entries (user_id, ${LEDGER_INSERT_COLUMNS.join(', ')}) VALUES ${rows} RETURNING 1)`);
    }
    // Checked inside the statement (migrations/004): a COMMIT pipelined behind it must find the transaction aborted.
    const select = counted.length > 0 ? counted.map((c) => `expect_one_row((SELECT count(*) FROM ${c.name}), ${p(c.error)}) AS ${c.name}`).join(', ') : '1 AS done';
    this.account.clear();
    this.ledger = [];
    this.inserts = [];
    this.updates = [];
    this.admissions = [];
    this.touched = false;
    this.insertedIds.clear();
    return { text: `WITH ${ctes.join(',\n')}\nSELECT ${select}`, values: params };
  }

  /** Sends the queued writes (see {@link take}) and waits for them. */
  async flush(client: PoolClient, run: RunStatement): Promise<void> {
    const statement = this.take();
    if (statement) await run(client, statement.text, statement.values);
  }
}
