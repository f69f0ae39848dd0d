/**
 * A user's account as the user and support see it: plans, balances and counters, plan changes,
 * prepaid grants, the spending cap, support adjustments and the rate-limit window. Throws
 * MurmurError only; knows no gRPC and no SQL.
 */
import { MurmurError } from '@murmur/contract';
import type { billing } from '@murmur/proto';
import { checkNote, checkUserId } from './checks';
import { type AccountLifecycle, planOf } from './lifecycle';
import { MAX_ADJUST_CREDITS, MAX_GRANT_CREDITS, MAX_SPENDING_CAP_CENTS, RATE_LIMIT_WINDOW_SECONDS } from './limits';
import { PLANS, planById } from './plans';
import type { RateLimiter, RateLimitState } from './rate-limiter';
import type { Account } from './store';

/** A support adjustment: the new balances (absent = unchanged) and why. */
export interface AdjustCredits {
  monthlyCredits?: number;
  prepaidCredits?: number;
  note: string;
}

/** An account as of now, with its plan and rate-limit window (what GetUsage answers). */
export interface Usage {
  account: Account;
  plan: Readonly<billing.Plan>;
  rateLimit: RateLimitState;
}

/** See the module comment. One instance per process; stateless apart from its dependencies. */
export class Accounts {
  constructor(private readonly lifecycle: AccountLifecycle, private readonly limiter: RateLimiter) {}

  /** Every plan of the config, cheapest first. */
  listPlans(): readonly Readonly<billing.Plan>[] {
    return PLANS;
  }

  /** Plan, balances, period, counters and rate-limit window; opens or rolls the account as needed. */
  async getUsage(userId: string): Promise<Usage> {
    checkUserId(userId);
    return this.usageOf(await this.lifecycle.current(userId));
  }

  /**
   * Moves the user to `planId`. Limits (rate, sizes, costs) apply at once; the new monthly
   * allowance applies from the next reset, so the current period's balance is neither topped
   * up on an upgrade nor clawed back on a downgrade. A spending cap still at the old plan's
   * default follows to the new plan's default; a cap the user chose is kept. A user with no
   * account yet is opened directly on `planId` with its full allowance (signing up on a plan).
   */
  async changePlan(userId: string, planId: string): Promise<Usage> {
    checkUserId(userId);
    const plan = planById(planId);
    if (!plan) {
      throw new MurmurError('invalid_request', `Unknown plan "${planId.slice(0, 64)}". Use an id from ListPlans: ${PLANS.map((p) => p.id).join(', ')}.`, {
        param: 'plan_id',
      });
    }
    const account = await this.lifecycle.mutate(userId, async (account, tx, now) => {
      if (account.planId === plan.id) return account;
      const old = planOf(account);
      const capFollows = account.spendingCapCents === old.defaultSpendingCapCents;
      const updated = await tx.update(
        { planId: plan.id, ...(capFollows ? { spendingCapCents: plan.defaultSpendingCapCents } : {}) },
        now,
      );
      await tx.appendLedger({
        kind: 'adjust',
        note: `plan changed from ${old.id} to ${plan.id}; the ${plan.monthlyCredits}-credit monthly allowance applies from the next reset`,
        createdAt: now,
      });
      return updated;
    }, { openOnPlan: plan.id });
    return this.usageOf(account);
  }

  /** Adds prepaid credits (an in-app purchase). */
  async grantPrepaidCredits(userId: string, credits: number, note: string): Promise<Usage> {
    checkUserId(userId);
    if (!Number.isSafeInteger(credits) || credits <= 0 || credits > MAX_GRANT_CREDITS) {
      throw new MurmurError('invalid_request', `credits must be a whole number from 1 to ${MAX_GRANT_CREDITS.toLocaleString('en-US')}.`, {
        param: 'credits',
      });
    }
    checkNote(note);
    const account = await this.lifecycle.mutate(userId, async (account, tx, now) => {
      const updated = await tx.update({ prepaidRemaining: account.prepaidRemaining + credits }, now);
      await tx.appendLedger({ kind: 'grant', prepaidDelta: credits, note, createdAt: now });
      return updated;
    });
    return this.usageOf(account);
  }

  /** Sets the monthly cap on spending (drawing prepaid credits); 0 forbids drawing them at all. */
  async setSpendingCap(userId: string, capCents: number): Promise<Usage> {
    checkUserId(userId);
    if (!Number.isSafeInteger(capCents) || capCents < 0 || capCents > MAX_SPENDING_CAP_CENTS) {
      throw new MurmurError('invalid_request', `cap_cents must be a whole number of cents from 0 to ${MAX_SPENDING_CAP_CENTS}.`, {
        param: 'cap_cents',
      });
    }
    // The cap is a limit, not a movement of credits or money, so it writes no ledger row.
    const account = await this.lifecycle.mutate(userId, (account, tx, now) =>
      account.spendingCapCents === capCents ? Promise.resolve(account) : tx.update({ spendingCapCents: capCents }, now),
    );
    return this.usageOf(account);
  }

  /** Support adjustment: sets the monthly and/or prepaid balance; one "adjust" ledger row with the deltas. */
  async adjustCredits(userId: string, adjust: AdjustCredits): Promise<Usage> {
    checkUserId(userId);
    const { monthlyCredits, prepaidCredits, note } = adjust;
    if (monthlyCredits === undefined && prepaidCredits === undefined) {
      throw new MurmurError('invalid_request', 'Set monthly_credits, prepaid_credits or both to the new balance.', { param: 'monthly_credits' });
    }
    for (const [param, value] of [['monthly_credits', monthlyCredits], ['prepaid_credits', prepaidCredits]] as const) {
      if (value !== undefined && (!Number.isSafeInteger(value) || value < 0 || value > MAX_ADJUST_CREDITS)) {
        throw new MurmurError('invalid_request', `${param} must be a whole number from 0 to ${MAX_ADJUST_CREDITS}.`, { param });
      }
    }
    checkNote(note);
    const account = await this.lifecycle.mutate(userId, async (account, tx, now) => {
      const updated = await tx.update({ monthlyRemaining: monthlyCredits, prepaidRemaining: prepaidCredits }, now);
      await tx.appendLedger({
        kind: 'adjust',
        monthlyDelta: updated.monthlyRemaining - account.monthlyRemaining,
        prepaidDelta: updated.prepaidRemaining - account.prepaidRemaining,
        note,
        createdAt: now,
      });
      return updated;
    });
    return this.usageOf(account);
  }

  /** The user's AI rate-limit window, without taking a slot. */
  async getRateLimit(userId: string): Promise<RateLimitState> {
    checkUserId(userId);
    const account = await this.lifecycle.current(userId);
    return this.limiter.peek(userId, planOf(account).rateLimitPerMinute, RATE_LIMIT_WINDOW_SECONDS);
  }

  private async usageOf(account: Account): Promise<Usage> {
    const plan = planOf(account);
    const rateLimit = await this.limiter.peek(account.userId, plan.rateLimitPerMinute, RATE_LIMIT_WINDOW_SECONDS);
    return { account, plan, rateLimit };
  }
}
