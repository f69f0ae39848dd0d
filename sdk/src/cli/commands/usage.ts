/** `murmur usage`: plan, credits, spending and the rate-limit window. */
import type { Usage } from '../../client.js';
import type { Command } from '../command.js';
import { duration, fields, plural, when } from '../output.js';

const money = (cents: number) => `$${(cents / 100).toFixed(2)}`;

export function usageText(u: Usage): string {
  const c = u.credits;
  return fields([
    ['Plan', u.plan ? `${u.plan.name} (${plural(u.plan.monthly_credits, 'credit')} a month)` : 'none'],
    ['Credits', `${c.monthly_remaining.toLocaleString('en-US')} of ${c.monthly_allowance.toLocaleString('en-US')} monthly left, ${c.prepaid_remaining.toLocaleString('en-US')} prepaid, ${c.reserved.toLocaleString('en-US')} reserved`],
    ['Resets', when(c.resets_at)],
    ['Spending', u.spending.cap_cents > 0 ? `${money(u.spending.spent_cents)} of a ${money(u.spending.cap_cents)} cap` : money(u.spending.spent_cents)],
    ['Rate limit', `${u.rate_limit.remaining} of ${u.rate_limit.limit} AI calls left in this ${u.rate_limit.window_seconds} s window`],
    [
      'This period',
      `${plural(u.counters.transcriptions, 'transcription')} (${duration(u.counters.transcription_seconds)}), ${plural(u.counters.conversions, 'conversion')}, ${plural(u.counters.credits_used, 'credit')} used`,
    ],
  ]);
}

export const usage: Command = {
  name: 'usage',
  summary: 'Show your plan, credits left, spending and rate limit',
  arity: [0, 0],
  options: {},
  example: 'murmur usage --json | jq .credits.monthly_remaining',
  async run(ctx) {
    const u = await (await ctx.client()).usage();
    if (ctx.out.json) return ctx.out.data(u);
    ctx.out.text(usageText(u));
  },
};
