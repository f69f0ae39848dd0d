/**
 * Giving a held reservation's credits back (a release or an expiry). Shared by charging, which
 * releases on request and sweeps forgotten holds, and the account lifecycle, which expires a
 * locked account's overdue holds before any change to it.
 */
import { settleHold, type Draw } from './limits';
import { lapsedNote } from './messages';
import type { Account, AccountTransaction, ReservationRecord } from './store';

/** What a held reservation took out of the balances. */
export function holdOf(r: ReservationRecord): Draw {
  return { monthly: r.monthlyCredits, prepaid: r.prepaidCredits, spendCents: r.spendCents };
}

/**
 * Returns a held reservation's credits in full and moves it to `state` (released or expired)
 * with one ledger row of the same name. The account must be the locked, current one.
 */
export async function returnHold(
  account: Account,
  tx: AccountTransaction,
  r: ReservationRecord,
  state: 'released' | 'expired',
  note: string,
  now: Date,
): Promise<{ account: Account; reservation: ReservationRecord }> {
  const settlement = settleHold(holdOf(r), r.prepaidCreditPriceCents, 0, r.periodStart.getTime() === account.periodStart.getTime());
  // A released or expired reservation keeps showing what it held.
  const reservation = await tx.settleReservation(r.id, {
    state,
    credits: r.credits,
    monthlyCredits: r.monthlyCredits,
    prepaidCredits: r.prepaidCredits,
    spendCents: r.spendCents,
    usageSeconds: 0,
    note,
    settledAt: now,
  });
  const updated = await tx.update(
    {
      monthlyRemaining: account.monthlyRemaining + settlement.monthlyReturned,
      prepaidRemaining: account.prepaidRemaining + settlement.prepaidReturned,
      spendCents: account.spendCents - settlement.spendReturnedCents,
      reserved: account.reserved - r.heldCredits,
    },
    now,
  );
  await tx.appendLedger({
    kind: state === 'released' ? 'release' : 'expire',
    monthlyDelta: settlement.monthlyReturned,
    prepaidDelta: settlement.prepaidReturned,
    spendDeltaCents: -settlement.spendReturnedCents,
    reservationId: r.id,
    note: note + lapsedNote(settlement.monthlyLapsed, r),
    createdAt: now,
  });
  return { account: updated, reservation };
}

/**
 * Takes `draw` (a hold of `credits`) out of the locked account's balances — monthly and prepaid
 * down, reserved and this period's spend up — with one ledger row of `kind` (a new hold's
 * `reserve`, or an `extend`): the inverse of {@link returnHold}.
 */
export async function takeHold(
  account: Account,
  tx: AccountTransaction,
  draw: Draw,
  credits: number,
  entry: { kind: 'reserve' | 'extend'; reservationId: string; note: string },
  now: Date,
): Promise<void> {
  await tx.update(
    {
      monthlyRemaining: account.monthlyRemaining - draw.monthly,
      prepaidRemaining: account.prepaidRemaining - draw.prepaid,
      reserved: account.reserved + credits,
      spendCents: account.spendCents + draw.spendCents,
    },
    now,
  );
  await tx.appendLedger({ ...entry, monthlyDelta: -draw.monthly, prepaidDelta: -draw.prepaid, spendDeltaCents: draw.spendCents, createdAt: now });
}

/** Expires this locked account's held reservations past their deadline. */
export async function expireHolds(account: Account, tx: AccountTransaction, now: Date): Promise<{ account: Account; expired: number }> {
  const holds = await tx.expiredHolds(now);
  let current = account;
  for (const r of holds) {
    current = (await returnHold(current, tx, r, 'expired', `hold expired at ${r.expiresAt.toISOString()} without commit or release`, now)).account;
  }
  return { account: current, expired: holds.length };
}
