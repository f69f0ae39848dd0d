/** `npm run bench -- billing`: the Benchmark wrapper of {@link runBillingBench}. */
import type { Benchmark } from './benchmark';
import { runBillingBench } from './billing';

type Stat = Record<string, any> | undefined;

const fmt = (v: unknown) => (typeof v === 'number' ? String(Math.round(v * 100) / 100) : String(v ?? '—'));

export const billingBench: Benchmark = {
  name: 'billing',
  description: 'reserve+commit throughput and p99 (50 callers, real Postgres); rate-limit check latency, Redis vs in-process',
  async run(log) {
    log('billing: reserve+commit with 50 concurrent callers, then limiter latency…');
    const result = await runBillingBench();
    const rc = result.reserve_commit as Record<string, any>;
    const rl = result.rate_limit_check as Record<string, Record<string, Stat> | undefined>;
    const spread = rc.spread_accounts ?? {};
    const inline = rc.spread_accounts_callers_inline ?? {};
    const hot = rc.one_hot_account ?? {};
    // Issue 18's targets, with the callers on their own thread as other services would be.
    const targets = { pairs_per_second: 800, p99_over_p50: 2 };
    result.targets = targets;
    result.targets_met = {
      pairs_per_second: spread.pairs_per_second >= targets.pairs_per_second,
      p99_over_p50: spread.pair_ms?.p99 <= targets.p99_over_p50 * spread.pair_ms?.p50,
    };
    const rows: string[][] = [
      ['reserve+commit ms, 50 accounts', fmt(spread.pairs_per_second), fmt(spread.pair_ms?.p50), fmt(spread.pair_ms?.p99)],
      ['  same, callers in the service thread', fmt(inline.pairs_per_second), fmt(inline.pair_ms?.p50), fmt(inline.pair_ms?.p99)],
      ['reserve+commit ms, one hot account', fmt(hot.pairs_per_second), fmt(hot.pair_ms?.p50), fmt(hot.pair_ms?.p99)],
      ['limiter hit µs, in-process', '—', fmt(rl.in_process?.limiter?.hit_us?.p50), fmt(rl.in_process?.limiter?.hit_us?.p99)],
      ['limiter hit µs, Redis', '—', fmt(rl.redis?.limiter?.hit_us?.p50), fmt(rl.redis?.limiter?.hit_us?.p99)],
    ];
    return {
      result,
      table: { headers: ['measure', 'ops/s', 'p50', 'p99'], rows },
      notes: [
        `targets (50 accounts, callers on their own thread): ≥ ${800} pairs/s, p99 ≤ 2 × p50; met: ${JSON.stringify(result.targets_met)}`,
        'Figures as measured on this machine; see bench/results/billing.json for every field.',
      ],
      failures: rc.ledger_reconciled === false ? ['the ledger did not reconcile with the balances'] : [],
    };
  },
};
