/**
 * The one account a caller holds locked (store.ts, BillingStore.withAccount) on Postgres. Its
 * reads go out at once; its writes are queued and sent together (write-batch.ts) before the next
 * read and before COMMIT, so a reserve or a commit is a few round trips, not one per write.
 */
import type { PoolClient } from 'pg';
import { newId } from '@murmur/kit';
import type { ReadAhead } from './account-lock';
import type { RunStatement } from './prepared';
import { ACCOUNT_COLUMNS, RESERVATION_COLUMNS, toAdmission, toReservation, type AdmissionRow, type ReservationRow } from './rows';
import type { Account, AccountChanges, AccountTransaction, AdmissionRecord, NewLedgerEntry, ReservationAmounts, ReservationRecord, ReservationSettlement } from './store';
import { WriteBatch } from './write-batch';

/** A released or expired reservation charged nothing and delivered nothing: its key is free again (migrations/005). */
function holdsItsKey(r: ReservationRecord): boolean {
  return r.state === 'held' || r.state === 'committed';
}

export class PostgresAccountTransaction implements AccountTransaction {
  private readonly writes: WriteBatch;
  /** Reservations this transaction has read or written, as they now stand: what a queued settle returns. */
  private readonly known = new Map<string, ReservationRecord>();
  /** Reservation ids and idempotency keys known to have no reservation (read ahead, found none). */
  private readonly absentIds = new Set<string>();
  private readonly absentKeys = new Set<string>();
  /** Admissions read ahead, as they now stand; null: this user has none of that id. */
  private readonly admissions = new Map<string, AdmissionRecord | null>();

  /**
   * `account` is the locked row; `noExpiredHoldsAt`, when set, is a time at which the lock's own
   * query found no held reservation past its deadline (so `expiredHolds` of that time needs no query);
   * `ahead` is what the lock's query read ahead, when current (account-lock.ts).
   */
  constructor(
    private readonly client: PoolClient,
    private readonly run: RunStatement,
    private readonly userId: string,
    private account: Account,
    private readonly noExpiredHoldsAt: Date | null,
    ahead: ReadAhead | null,
  ) {
    this.writes = new WriteBatch(userId);
    if (ahead?.reservation) this.remember(ahead.reservation);
    else if (ahead?.reservation === null) {
      if (ahead.reservationById !== undefined) this.absentIds.add(ahead.reservationById);
      if (ahead.reservationByKey !== undefined) this.absentKeys.add(ahead.reservationByKey);
    }
    if (ahead?.admissionId !== undefined) this.admissions.set(ahead.admissionId, ahead.admission ?? null);
  }

  /** Sends the queued writes: before every read. */
  flush(): Promise<void> {
    return this.writes.flush(this.client, this.run);
  }

  /** The queued writes as one statement, for the transaction to send with its COMMIT (kit db.ts `commitWith`). */
  takeWrites(): { text: string; values: unknown[] } | undefined {
    return this.writes.take();
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

  // Under the account lock nobody else writes this user's reservations: one this transaction has
  // read or written stands as it knows it.
  async findReservation(id: string): Promise<ReservationRecord | undefined> {
    const known = this.known.get(id);
    if (known) return known;
    if (this.absentIds.has(id)) return undefined;
    await this.flush();
    const { rows } = await this.run<ReservationRow>(this.client, `SELECT ${RESERVATION_COLUMNS} FROM reservations WHERE id = $1 AND user_id = $2`, [
      id,
      this.userId,
    ]);
    return rows[0] ? this.remember(toReservation(rows[0])) : undefined;
  }

  async findReservationByKey(idempotencyKey: string): Promise<ReservationRecord | undefined> {
    for (const r of this.known.values()) if (r.idempotencyKey === idempotencyKey && holdsItsKey(r)) return r;
    if (this.absentKeys.has(idempotencyKey)) return undefined;
    await this.flush();
    const { rows } = await this.run<ReservationRow>(
      this.client,
      `SELECT ${RESERVATION_COLUMNS} FROM reservations WHERE user_id = $1 AND idempotency_key = $2 AND state IN ('held', 'committed')`,
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
      r.createdAt, r.expiresAt, r.settledAt, r.requestFingerprint, r.unitCredits,
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
    this.writes.touchAccount();
    return this.remember(toReservation(row));
  }

  async growReservation(id: string, a: ReservationAmounts): Promise<ReservationRecord> {
    const known = this.known.get(id) ?? (await this.findReservation(id));
    if (known?.state !== 'held') throw new Error(`reservation ${id} was not held when grown`);
    if (this.writes.touches(id)) await this.flush();
    // Every writer of a user's reservations holds that user's account lock: the flush checks it found the held row.
    this.writes.updateHeld(
      id,
      [['credits', a.credits], ['held_credits', a.heldCredits], ['monthly_credits', a.monthlyCredits], ['prepaid_credits', a.prepaidCredits], ['spend_cents', a.spendCents]],
      'grown',
    );
    return this.remember({ ...known, ...a });
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
    this.writes.touchAccount();
    return this.remember(toReservation(row));
  }

  async findAdmission(id: string): Promise<AdmissionRecord | undefined> {
    const known = this.admissions.get(id);
    if (known !== undefined) return known ?? undefined;
    await this.flush();
    const { rows } = await this.client.query<AdmissionRow>('SELECT * FROM admissions WHERE id = $1 AND user_id = $2', [id, this.userId]);
    return rows[0] ? toAdmission(rows[0]) : undefined;
  }

  async consumeAdmission(id: string, reservationId: string, at: Date): Promise<boolean> {
    const known = this.admissions.get(id);
    if (known) {
      if (known.consumedAt) return false;
      // Admissions are consumed only under their user's account lock: the flush checks it found the row unconsumed.
      this.writes.consumeAdmission(id, [['consumed_at', at], ['reservation_id', reservationId]]);
      this.admissions.set(id, { ...known, consumedAt: at, reservationId });
      return true;
    }
    await this.flush();
    const { rowCount } = await this.client.query(
      'UPDATE admissions SET consumed_at = $3, reservation_id = $4 WHERE id = $1 AND user_id = $2 AND consumed_at IS NULL',
      [id, this.userId, at, reservationId],
    );
    this.writes.touchAccount();
    return rowCount === 1;
  }
}
