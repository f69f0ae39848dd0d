/**
 * A locked transaction's writes go out as one statement with the COMMIT behind it on the wire
 * (kit db.ts pipelining, write-batch.ts). These tests make a queued write miss its row — a
 * reservation or an admission changed outside the account lock, which billing itself never
 * does — and check that the statement's own check aborts the whole transaction: the balance,
 * the ledger row and the reservation stay as they were.
 */
import { newId, type Database } from '@murmur/kit';
import { PostgresBillingStore } from '../src/postgres-store';
import type { NewAccount, ReservationRecord } from '../src/store';
import { openBillingDatabase } from './support/database';

const AT = new Date('2026-03-02T10:00:00Z');

function newAccount(userId: string): NewAccount {
  return {
    userId, planId: 'free', monthlyRemaining: 100, prepaidRemaining: 0, reserved: 0, periodStart: AT,
    periodEnd: new Date('2026-04-02T10:00:00Z'), spendingCapCents: 0, spendCents: 0, creditsUsed: 0, transcriptions: 0,
    transcriptionSeconds: 0, conversions: 0, createdAt: AT,
  };
}

function heldReservation(userId: string): ReservationRecord {
  return {
    id: newId('res'), userId, operation: 'convert', credits: 5, monthlyCredits: 5, prepaidCredits: 0, heldCredits: 5, spendCents: 0,
    prepaidCreditPriceCents: 0, state: 'held', idempotencyKey: newId('idem'), admissionId: null, periodStart: AT, usageSeconds: 0,
    note: '', createdAt: AT, expiresAt: new Date(AT.getTime() + 60_000), settledAt: null, requestFingerprint: 'fp', unitCredits: 1,
  };
}

describe('a queued write that misses its row fails its transaction, with the COMMIT already sent behind it (real Postgres where it can be had)', () => {
  let db: Database;
  let store: PostgresBillingStore;
  beforeAll(async () => {
    db = await openBillingDatabase(4);
    store = new PostgresBillingStore(db);
  });
  afterAll(async () => {
    await db?.close();
  });

  /** A user with 100 credits and one held reservation of 5 of them. */
  async function userWithHold(): Promise<{ userId: string; reservation: ReservationRecord }> {
    const userId = newId('usr');
    const reservation = heldReservation(userId);
    await store.withAccount(userId, newAccount(userId), async (account, tx) => {
      await tx.insertReservation(reservation);
      await tx.update({ monthlyRemaining: account.monthlyRemaining - 5, reserved: 5 }, AT);
      await tx.appendLedger({ kind: 'reserve', monthlyDelta: -5, reservationId: reservation.id, createdAt: AT });
    });
    return { userId, reservation };
  }

  const snapshot = async (userId: string) => ({
    account: (await db.query('SELECT monthly_remaining, reserved, credits_used FROM accounts WHERE user_id = $1', [userId]))[0],
    ledger: (await db.query('SELECT kind FROM ledger_entries WHERE user_id = $1 ORDER BY seq', [userId])).map((r) => r.kind),
    reservations: await db.query('SELECT id, state, credits::int AS credits FROM reservations WHERE user_id = $1', [userId]),
  });

  it('settling a reservation that is no longer held: nothing of the transaction is kept', async () => {
    const { userId, reservation } = await userWithHold();
    const before = await snapshot(userId);
    expect(before.ledger).toEqual(['reserve']);
    await expect(
      store.withAccount(userId, newAccount(userId), async (account, tx) => {
        expect((await tx.findReservation(reservation.id))?.state).toBe('held');
        // Changed behind the lock's back, on another connection.
        await db.query(`UPDATE reservations SET state = 'released', settled_at = $2 WHERE id = $1`, [reservation.id, AT]);
        await tx.settleReservation(reservation.id, { state: 'committed', credits: 5, monthlyCredits: 5, prepaidCredits: 0, spendCents: 0, usageSeconds: 0, note: '', settledAt: AT });
        await tx.update({ reserved: 0, creditsUsed: account.creditsUsed + 5 }, AT);
        await tx.appendLedger({ kind: 'commit', reservationId: reservation.id, createdAt: AT });
      }),
    ).rejects.toThrow(`reservation ${reservation.id} was not held when settled`);
    const after = await snapshot(userId);
    expect(after.account).toEqual(before.account);
    expect(after.ledger).toEqual(['reserve']);
    expect(after.reservations).toEqual([{ id: reservation.id, state: 'released', credits: 5 }]);
  });

  it('consuming an admission that was consumed meanwhile: the reservation it paid for is not kept', async () => {
    const userId = newId('usr');
    await store.withAccount(userId, newAccount(userId), async () => undefined);
    const before = await snapshot(userId);
    const admission = { id: newId('adm'), userId, operation: 'convert' as const, createdAt: AT, expiresAt: new Date(AT.getTime() + 60_000), consumedAt: null, reservationId: null };
    await store.insertAdmission(admission);
    const reservation = heldReservation(userId);
    await expect(
      store.withAccount(
        userId,
        newAccount(userId),
        async (account, tx) => {
          expect(await tx.findAdmission(admission.id)).toMatchObject({ consumedAt: null });
          await db.query('UPDATE admissions SET consumed_at = $2, reservation_id = $3 WHERE id = $1', [admission.id, AT, newId('res')]);
          expect(await tx.consumeAdmission(admission.id, reservation.id, AT)).toBe(true);
          await tx.insertReservation({ ...reservation, admissionId: admission.id });
          await tx.update({ monthlyRemaining: account.monthlyRemaining - 5, reserved: 5 }, AT);
          await tx.appendLedger({ kind: 'reserve', monthlyDelta: -5, reservationId: reservation.id, createdAt: AT });
        },
        { now: AT, admissionId: admission.id },
      ),
    ).rejects.toThrow(`admission ${admission.id} was no longer unconsumed when consumed`);
    const after = await snapshot(userId);
    expect(after.account).toEqual(before.account);
    expect(after.ledger).toEqual([]);
    expect(after.reservations).toEqual([]);
  });
});
