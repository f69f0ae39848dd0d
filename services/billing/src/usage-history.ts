/**
 * What a user's AI calls cost, for the app's Usage page: credits per UTC day of the current
 * period (every day so far, the quiet ones as zeros) and the most recent charged calls. Only
 * committed reservations are charges: a released or expired hold cost nothing. Throws
 * MurmurError only; knows no gRPC and no SQL.
 */
import { pageSizeOf } from '@murmur/contract';
import type { Clock } from '@murmur/kit';
import { checkUserId } from './checks';
import type { AccountLifecycle } from './lifecycle';
import { startOfNextUtcDay, utcDays } from './limits';
import type { BillingStore, ChargeRecord, DailyUsageRecord } from './store';

/** The current period's usage, day by day, and the latest charges. */
export interface UsageHistoryReport {
  /** The period exactly as GetUsage reports it. */
  periodStart: Date;
  periodEnd: Date;
  /** One entry per UTC day from the period's first day through today, oldest first. */
  days: DailyUsageRecord[];
  /** Newest first; not bounded by the period, so the table is never empty on the 1st. */
  recent: ChargeRecord[];
}

/** See the module comment. */
export class UsageHistory {
  constructor(private readonly store: BillingStore, private readonly lifecycle: AccountLifecycle, private readonly clock: Clock) {}

  /**
   * The user's usage this period and up to `recentLimit` (0 → the default) latest charges.
   * Opens the account of a user who has none, as GetUsage does, and rolls a period that is
   * over first, so the days start where GetUsage says the period starts.
   */
  async getUsageHistory(userId: string, recentLimit: number): Promise<UsageHistoryReport> {
    checkUserId(userId);
    const limit = pageSizeOf(recentLimit, 'recent_limit', { zeroMeansDefault: true });
    const account = await this.lifecycle.current(userId);
    // Today, kept inside the period: a clock that crossed the period's end since the roll
    // above must not chart days of the next period.
    const today = new Date(Math.min(this.clock.now().getTime(), account.periodEnd.getTime() - 1));
    const [charged, recent] = await Promise.all([
      this.store.dailyUsage(userId, account.periodStart, startOfNextUtcDay(today)),
      this.store.recentCharges(userId, limit),
    ]);
    const byDate = new Map(charged.map((day) => [day.date, day]));
    const days = utcDays(account.periodStart, today).map((date) => byDate.get(date) ?? { date, credits: 0, transcriptions: 0, conversions: 0 });
    return { periodStart: account.periodStart, periodEnd: account.periodEnd, days, recent };
  }
}
