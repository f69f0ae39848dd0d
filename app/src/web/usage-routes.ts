/**
 * Settings → Usage: the plan, monthly and prepaid credits, the spending cap, a chart of credits
 * used per day this period and the recent AI calls — from billing (GetUsage, GetUsageHistory).
 */
import { Router } from 'express';
import type { ServiceClients } from '@murmur/kit';
import { render, signedIn, signedInOf, type GuardOptions } from './pages';
import { count, dollars, operationName, shownDate } from './present';

/** Recent AI calls shown. */
export const RECENT_CALLS = 20;

export function usageRoutes(opts: GuardOptions & { clients: ServiceClients }): Router {
  const router = Router();
  router.get('/settings/usage', signedIn(opts, 'usage'), async (_req, res) => {
    const userId = signedInOf(res).userId;
    const [{ usage }, history] = await Promise.all([opts.clients.billing.getUsage({ userId }), opts.clients.billing.getUsageHistory({ userId, recentLimit: RECENT_CALLS })]);
    if (!usage?.plan || !usage.periodStart || !usage.periodEnd) throw new Error('billing answered GetUsage without a plan or period');
    const days = history.days;
    const sum = (pick: (d: (typeof days)[number]) => number) => days.reduce((s, d) => s + pick(d), 0);
    render(res, 200, 'usage', {
      title: 'Usage',
      period: { start: shownDate(usage.periodStart), end: shownDate(usage.periodEnd) },
      plan: { name: usage.plan.name || usage.plan.id, monthly: count(usage.plan.monthlyCredits), rate: count(usage.plan.rateLimitPerMinute) },
      monthly: { remaining: count(usage.monthlyCreditsRemaining), total: count(usage.plan.monthlyCredits), remainingRaw: usage.monthlyCreditsRemaining, totalRaw: usage.plan.monthlyCredits },
      prepaid: count(usage.prepaidCreditsRemaining),
      reserved: usage.creditsReserved > 0 ? count(usage.creditsReserved) : '',
      spend: dollars(usage.spendCents),
      cap: dollars(usage.spendingCapCents),
      used: count(sum((d) => d.credits)),
      transcriptions: count(sum((d) => d.transcriptions)),
      conversions: count(sum((d) => d.conversions)),
      days,
      series: JSON.stringify({ labels: days.map((d) => d.date), credits: days.map((d) => d.credits) }),
      recent: history.recent.map((c) => ({
        at: shownDate(c.chargedAt ?? new Date(0)),
        kind: operationName(c.operation),
        credits: count(c.credits),
        cost: c.spendCents > 0 ? dollars(c.spendCents) : 'included',
      })),
    });
  });
  return router;
}
