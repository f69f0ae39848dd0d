/**
 * Billing's domain rules (the read side and the support/app operations; charging comes with
 * reserve → commit / release): lazy accounts, the monthly period and its reset, plan changes,
 * prepaid grants, spending caps, support adjustments, the ledger and the rate-limit window.
 * Throws MurmurError only; knows no gRPC and no SQL.
 */
import { type Clock, type CursorCodec, isId, MurmurError, systemClock } from '@murmur/kit';
import type { billing } from '@murmur/proto';
import { isPeriodOver, periodContaining, periodLabel, periodsElapsed, RATE_LIMIT_WINDOW_SECONDS } from './limits';
import { DEFAULT_PLAN_ID, PLANS, planById } from './plans';
import type { RateLimiter, RateLimitState } from './rate-limiter';
import type { Account, AccountTransaction, BillingStore, LedgerEntryRecord, LedgerPosition, NewAccount } from './store';

/** Most prepaid credits one grant may add (a typo guard on an app purchase, not a price limit). */
export const MAX_GRANT_CREDITS = 10_000_000;
/** Largest balance a support adjustment may set. */
export const MAX_ADJUST_CREDITS = 1_000_000_000;
/** Largest monthly spending cap a user may set: $1,000,000. */
export const MAX_SPENDING_CAP_CENTS = 100_000_000;
/** Longest note kept on a ledger row. */
export const MAX_NOTE_LENGTH = 500;
/** Ledger page size when the caller passes 0 (DESIGN §3 paging: default 20). */
export const DEFAULT_PAGE_SIZE = 20;
/** Largest ledger page (DESIGN §3 paging: 1–100). */
export const MAX_PAGE_SIZE = 100;

/** What the domain needs: storage, the rate limiter, page-token signing and time. */
export interface BillingServiceOptions {
  store: BillingStore;
  limiter: RateLimiter;
  cursors: CursorCodec;
  clock?: Clock;
}

/** A support adjustment: the new balances (absent = unchanged) and why. */
export interface AdjustCredits {
  monthlyCredits?: number;
  prepaidCredits?: number;
  note: string;
}

/** One page of a user's ledger; `nextPageToken` is empty on the last page. */
export interface LedgerPage {
  entries: billing.LedgerEntry[];
  nextPageToken: string;
}

interface LedgerCursor extends Record<string, unknown> {
  /** Owner the cursor was issued to: a cursor is not transferable between users. */
  u: string;
  /** created_at of the last row returned, epoch ms. */
  t: number;
  /** seq of the last row returned. */
  s: number;
}

function isLedgerCursor(value: unknown): value is LedgerCursor {
  const v = value as Partial<LedgerCursor> | null;
  return typeof v === 'object' && v !== null && typeof v.u === 'string' && Number.isSafeInteger(v.t) && Number.isSafeInteger(v.s);
}

function checkUserId(userId: string): void {
  if (!isId('usr', userId)) {
    throw new MurmurError('invalid_request', 'user_id must be a user id of the form usr_….', { param: 'user_id' });
  }
}

function checkNote(note: string): void {
  if (note.length > MAX_NOTE_LENGTH) {
    throw new MurmurError('invalid_request', `note must be at most ${MAX_NOTE_LENGTH} characters.`, { param: 'note' });
  }
}

function planOf(account: Account): Readonly<billing.Plan> {
  const plan = planById(account.planId);
  // Plans are only ever added to the config; an account on a removed plan is a deployment bug.
  if (!plan) throw new Error(`account is on plan "${account.planId}", which the plan config does not define`);
  return plan;
}

function toLedgerEntry(row: LedgerEntryRecord): billing.LedgerEntry {
  return {
    id: row.id,
    userId: row.userId,
    kind: row.kind,
    monthlyDelta: row.monthlyDelta,
    prepaidDelta: row.prepaidDelta,
    spendDeltaCents: row.spendDeltaCents,
    reservationId: row.reservationId ?? '',
    note: row.note,
    createdAt: row.createdAt,
  };
}

/** The billing domain. One instance per process; stateless apart from its dependencies. */
export class BillingService {
  private readonly store: BillingStore;
  private readonly limiter: RateLimiter;
  private readonly cursors: CursorCodec;
  private readonly clock: Clock;

  constructor(deps: BillingServiceOptions) {
    this.store = deps.store;
    this.limiter = deps.limiter;
    this.cursors = deps.cursors;
    this.clock = deps.clock ?? systemClock;
  }

  /** Every plan of the config, cheapest first. */
  listPlans(): billing.Plan[] {
    return PLANS.map((plan) => ({ ...plan }));
  }

  /** Plan, balances, period, counters and rate-limit window; opens or rolls the account as needed. */
  async getUsage(userId: string): Promise<billing.Usage> {
    checkUserId(userId);
    return this.usageOf(await this.currentAccount(userId));
  }

  /**
   * Moves the user to `planId`. Limits (rate, sizes, costs) apply at once; the new monthly
   * allowance applies from the next reset, so the current period's balance is neither topped
   * up on an upgrade nor clawed back on a downgrade. A spending cap still at the old plan's
   * default follows to the new plan's default; a cap the user chose is kept. A user with no
   * account yet is opened directly on `planId` with its full allowance (signing up on a plan).
   */
  async changePlan(userId: string, planId: string): Promise<billing.Usage> {
    checkUserId(userId);
    const plan = planById(planId);
    if (!plan) {
      throw new MurmurError('invalid_request', `Unknown plan "${planId.slice(0, 64)}". Use an id from ListPlans: ${PLANS.map((p) => p.id).join(', ')}.`, {
        param: 'plan_id',
      });
    }
    const account = await this.mutate(userId, async (account, tx, now) => {
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
    }, plan.id);
    return this.usageOf(account);
  }

  /** Adds prepaid credits (an in-app purchase). */
  async grantPrepaidCredits(userId: string, credits: number, note: string): Promise<billing.Usage> {
    checkUserId(userId);
    if (!Number.isSafeInteger(credits) || credits <= 0 || credits > MAX_GRANT_CREDITS) {
      throw new MurmurError('invalid_request', `credits must be a whole number from 1 to ${MAX_GRANT_CREDITS.toLocaleString('en-US')}.`, {
        param: 'credits',
      });
    }
    checkNote(note);
    const account = await this.mutate(userId, async (account, tx, now) => {
      const updated = await tx.update({ prepaidRemaining: account.prepaidRemaining + credits }, now);
      await tx.appendLedger({ kind: 'grant', prepaidDelta: credits, note, createdAt: now });
      return updated;
    });
    return this.usageOf(account);
  }

  /** Sets the monthly cap on spending (drawing prepaid credits); 0 forbids drawing them at all. */
  async setSpendingCap(userId: string, capCents: number): Promise<billing.Usage> {
    checkUserId(userId);
    if (!Number.isSafeInteger(capCents) || capCents < 0 || capCents > MAX_SPENDING_CAP_CENTS) {
      throw new MurmurError('invalid_request', `cap_cents must be a whole number of cents from 0 to ${MAX_SPENDING_CAP_CENTS}.`, {
        param: 'cap_cents',
      });
    }
    // The cap is a limit, not a movement of credits or money, so it writes no ledger row.
    const account = await this.mutate(userId, (account, tx, now) =>
      account.spendingCapCents === capCents ? Promise.resolve(account) : tx.update({ spendingCapCents: capCents }, now),
    );
    return this.usageOf(account);
  }

  /** Support adjustment: sets the monthly and/or prepaid balance; one "adjust" ledger row with the deltas. */
  async adjustCredits(userId: string, adjust: AdjustCredits): Promise<billing.Usage> {
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
    const account = await this.mutate(userId, async (account, tx, now) => {
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
    const account = await this.currentAccount(userId);
    return this.limiter.peek(userId, planOf(account).rateLimitPerMinute, RATE_LIMIT_WINDOW_SECONDS);
  }

  /** One page of the user's ledger, newest first. */
  async listLedgerEntries(userId: string, pageSize: number, pageToken: string): Promise<LedgerPage> {
    checkUserId(userId);
    if (!Number.isInteger(pageSize) || pageSize < 0 || pageSize > MAX_PAGE_SIZE) {
      throw new MurmurError('invalid_request', `page_size must be from 1 to ${MAX_PAGE_SIZE} (0 means ${DEFAULT_PAGE_SIZE}).`, { param: 'page_size' });
    }
    const limit = pageSize === 0 ? DEFAULT_PAGE_SIZE : pageSize;
    let after: LedgerPosition | undefined;
    if (pageToken !== '') {
      const badToken = new MurmurError('invalid_request', 'page_token is not valid. Pass next_page_token from the previous page unchanged.', {
        param: 'page_token',
      });
      let cursor: LedgerCursor;
      try {
        cursor = this.cursors.decode(pageToken, isLedgerCursor);
      } catch {
        throw badToken;
      }
      if (cursor.u !== userId) throw badToken;
      after = { createdAt: new Date(cursor.t), seq: cursor.s };
    }
    // Roll the period first, so a reset that is due shows up on the first page.
    await this.currentAccount(userId);
    const rows = await this.store.listLedgerEntries(userId, limit + 1, after);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    const nextPageToken =
      rows.length > limit && last ? this.cursors.encode({ u: userId, t: last.createdAt.getTime(), s: last.seq } satisfies LedgerCursor) : '';
    return { entries: page.map(toLedgerEntry), nextPageToken };
  }

  /**
   * The account as of now: read without locking when it exists and its period is current (the
   * common case), otherwise opened or rolled over under the row lock.
   */
  private async currentAccount(userId: string): Promise<Account> {
    const found = await this.store.findAccount(userId);
    if (found && !isPeriodOver(found.periodEnd, this.clock.now())) return found;
    return this.mutate(userId, async (account) => account);
  }

  /**
   * Runs `change` on the locked, current account: opens it on first use (free plan, full
   * allowance, plan default cap) and, when its period is over, resets it first — all in one
   * transaction with the change itself.
   */
  private async mutate(
    userId: string,
    change: (account: Account, tx: AccountTransaction, now: Date) => Promise<Account>,
    openOnPlan?: string,
  ): Promise<Account> {
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
      const current = await this.rollPeriod(account, tx, now);
      return change(current, tx, now);
    });
  }

  /**
   * When `now` is past the account's period: monthly credits back to the plan allowance (no
   * rollover), spend and counters to zero, period moved to the month containing `now` — one
   * "reset" row however many months were skipped. Prepaid credits and reservations are kept.
   */
  private async rollPeriod(account: Account, tx: AccountTransaction, now: Date): Promise<Account> {
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

  private async usageOf(account: Account): Promise<billing.Usage> {
    const plan = planOf(account);
    const rateLimit = await this.limiter.peek(account.userId, plan.rateLimitPerMinute, RATE_LIMIT_WINDOW_SECONDS);
    return {
      userId: account.userId,
      plan: { ...plan },
      monthlyCreditsRemaining: account.monthlyRemaining,
      prepaidCreditsRemaining: account.prepaidRemaining,
      periodStart: account.periodStart,
      periodEnd: account.periodEnd,
      spendingCapCents: account.spendingCapCents,
      spendCents: account.spendCents,
      rateLimit,
      creditsUsed: account.creditsUsed,
      transcriptions: account.transcriptions,
      transcriptionSeconds: account.transcriptionSeconds,
      conversions: account.conversions,
      creditsReserved: account.reserved,
    };
  }
}
