/**
 * An account's life: opened lazily on first use, reset at each period boundary, its overdue
 * holds expired — always under the row lock, before the change a caller asked for, so every
 * other part of the domain (accounts, charging, ledger) sees a current account.
 */
import type { Clock } from '@murmur/kit';
import type { billing } from '@murmur/proto';
import { expireHolds } from './holds';
import { isPeriodOver, periodContaining, periodLabel, periodsElapsed } from './limits';
import { DEFAULT_PLAN_ID, planById } from './plans';
import type { Account, AccountTransaction, BillingStore, LockReadAhead, NewAccount } from './store';

/** The plan the account is on. */
export function planOf(account: Account): Readonly<billing.Plan> {
  const plan = planById(account.planId);
  // Plans are only ever added to the config; an account on a removed plan is a deployment bug.
  if (!plan) throw new Error(`account is on plan "${account.planId}", which the plan config does not define`);
  return plan;
}

/** Opens, rolls over and locks accounts for the rest of the domain. */
export class AccountLifecycle {
  constructor(private readonly store: BillingStore, private readonly clock: Clock) {}

  /**
   * The account as of now: read without locking when it exists and its period is current (the
   * common case), otherwise opened or rolled over under the row lock.
   */
  async current(userId: string): Promise<Account> {
    const now = this.clock.now();
    const found = await this.store.findAccount(userId, now);
    if (found && !found.hasExpiredHolds && !isPeriodOver(found.account.periodEnd, now)) return found.account;
    return this.mutate(userId, async (account) => account);
  }

  /**
   * Runs `change` on the locked, current account: opens it on first use (free plan, full
   * allowance, plan default cap), resets it first when its period is over, and expires its
   * holds past their deadline — all in one transaction with the change itself. `openOnPlan`:
   * the plan a first-use account opens on; the rest of `options` names the reservation or
   * admission `change` reads first (store.ts, LockReadAhead).
   */
  async mutate<T>(
    userId: string,
    change: (account: Account, tx: AccountTransaction, now: Date) => Promise<T>,
    options: Omit<LockReadAhead, 'now'> & { openOnPlan?: string } = {},
  ): Promise<T> {
    const { openOnPlan, ...ahead } = options;
    const now = this.clock.now();
    return this.store.withAccount(userId, this.newAccount(userId, now, openOnPlan), async (account, tx, created) => {
      if (created) {
        await tx.appendLedger({
          kind: 'reset',
          monthlyDelta: account.monthlyRemaining,
          note: `account opened on the ${account.planId} plan; period ${periodLabel(account.periodStart)}`,
          createdAt: now,
        });
      }
      const rolled = await this.rollPeriod(account, tx, now);
      const { account: current } = await expireHolds(rolled, tx, now);
      return change(current, tx, now);
    }, { ...ahead, now });
  }

  /**
   * When `now` is past the account's period: monthly credits back to the plan allowance (no
   * rollover), spend and counters to zero, period moved to the month containing `now` — one
   * "reset" row however many months were skipped. Prepaid credits and reservations are kept.
   */
  async rollPeriod(account: Account, tx: AccountTransaction, now: Date): Promise<Account> {
    if (!isPeriodOver(account.periodEnd, now)) return account;
    const plan = planOf(account);
    const period = periodContaining(now);
    const skipped = periodsElapsed(account.periodStart, now);
    const updated = await tx.update(
      {
        monthlyRemaining: plan.monthlyCredits,
        spendCents: 0,
        creditsUsed: 0,
        transcriptions: 0,
        transcriptionSeconds: 0,
        conversions: 0,
        periodStart: period.start,
        periodEnd: period.end,
      },
      now,
    );
    await tx.appendLedger({
      kind: 'reset',
      monthlyDelta: plan.monthlyCredits - account.monthlyRemaining,
      spendDeltaCents: -account.spendCents,
      note: `period ${periodLabel(period.start)}: ${plan.monthlyCredits} monthly credits on the ${plan.id} plan` +
        (skipped > 1 ? ` (${skipped - 1} idle month${skipped > 2 ? 's' : ''} skipped, no rollover)` : ''),
      createdAt: now,
    });
    return updated;
  }

  private newAccount(userId: string, now: Date, planId = DEFAULT_PLAN_ID): NewAccount {
    const plan = planById(planId)!;
    const period = periodContaining(now);
    return {
      userId,
      planId: plan.id,
      monthlyRemaining: plan.monthlyCredits,
      prepaidRemaining: 0,
      reserved: 0,
      periodStart: period.start,
      periodEnd: period.end,
      spendingCapCents: plan.defaultSpendingCapCents,
      spendCents: 0,
      creditsUsed: 0,
      transcriptions: 0,
      transcriptionSeconds: 0,
      conversions: 0,
      createdAt: now,
    };
  }
}
