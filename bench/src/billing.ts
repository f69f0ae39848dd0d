/**
 * Billing benchmark (issue 3): reserve + commit throughput and latency on a real Postgres with
 * 50 concurrent callers, and what the rate-limit check adds to each AI request — the limiter hit
 * on its own and a whole AdmitAiRequest RPC, Redis vs in-process.
 *
 * Runs billing in-process on a fresh schema of BENCH_DATABASE_URL ?? DATABASE_URL ?? the local
 * default, dropped afterwards. Redis is measured when REDIS_URL (or redis://127.0.0.1:6379)
 * answers; otherwise that part is reported as skipped. BENCH_BILLING_SECONDS overrides the
 * ~10 s of the main run.
 */
import { randomBytes } from 'node:crypto';
import * as net from 'node:net';
import { Client } from 'pg';
import {
  BILLING_MIGRATIONS_DIR,
  MemoryRateLimiter,
  RedisRateLimiter,
  startBillingService,
  type RateLimiter,
  type RateLimitState,
} from '@murmur/billing';
import { connectRedis, createLogger, newId, openDatabase, type Database, type Redis } from '@murmur/kit';
import { createPolicyClient, testAccess } from '@murmur/kit/testing';
import { billing } from '@murmur/proto';
import { machineInfo, redactUrl } from './benchmark';
import { AUDIO_SECONDS, callFromWorker, callInline } from './billing-callers';

const CALLERS = 50;
const POOL_SIZE = 20;
const HOT_ACCOUNT_SECONDS = 5;
const LIMITER_HITS = 5_000;
/** Users the limiter hits rotate over: 10 hits each, so every hit is admitted (the common case). */
const LIMITER_USERS = LIMITER_HITS / 10;
const ADMIT_CALLS = 1_000;


/**
 * Admits everything, at no cost: the reserve + commit figures measure the charging path itself
 * (the real limit would allow each user 10 calls a minute). The limiter is measured on its own.
 */
class UnlimitedRateLimiter implements RateLimiter {
  async hit(_userId: string, limit: number, windowSeconds: number): Promise<RateLimitState & { allowed: boolean }> {
    return { limit, remaining: limit, windowSeconds, resetSeconds: 0, allowed: true };
  }
  async peek(_userId: string, limit: number, windowSeconds: number): Promise<RateLimitState> {
    return { limit, remaining: limit, windowSeconds, resetSeconds: 0 };
  }
}

/** Nearest-rank percentiles and the mean of `samples`, rounded to `digits`. */
function summarize(samples: number[], digits = 2): Record<string, number> {
  if (samples.length === 0) return { count: 0 };
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
  const round = (x: number) => Math.round(x * 10 ** digits) / 10 ** digits;
  const mean = sorted.reduce((s, x) => s + x, 0) / sorted.length;
  return { count: sorted.length, p50: round(at(50)), p90: round(at(90)), p99: round(at(99)), max: round(sorted[sorted.length - 1]!), mean: round(mean) };
}

const elapsedMs = (from: bigint) => Number(process.hrtime.bigint() - from) / 1e6;

/** True when something accepts TCP connections at the URL's host and port within a second. */
async function reachable(url: string): Promise<boolean> {
  let host: string;
  let port: number;
  try {
    const u = new URL(url);
    host = u.hostname || '127.0.0.1';
    port = Number(u.port || 6379);
  } catch {
    return false;
  }
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * `callers` concurrent loops of reserve + commit for `seconds`, the callers in this thread (beside
 * the service) or in a worker thread of their own; CPU per thread as a share of one core.
 */
async function reserveCommitRun(address: string, userIds: string[], callers: number, seconds: number, where: 'inline' | 'worker') {
  const serviceCpuBefore = process.threadCpuUsage();
  const run = { address, userIds, callers, seconds };
  const s = where === 'inline' ? await callInline(run) : await callFromWorker(run);
  const serviceCpu = process.threadCpuUsage(serviceCpuBefore);
  const percent = (ms: number) => Math.round((ms / 10 / s.wallSeconds) * 10) / 10;
  const mainThreadMs = (serviceCpu.user + serviceCpu.system) / 1e3;
  return {
    callers,
    accounts: userIds.length,
    callers_thread: where === 'inline' ? 'the service\'s own thread' : 'a worker thread',
    seconds: Math.round(s.wallSeconds * 100) / 100,
    reserve_commit_pairs: s.pair.length,
    pairs_per_second: Math.round(s.pair.length / s.wallSeconds),
    errors: s.errors,
    pair_ms: summarize(s.pair),
    reserve_ms: summarize(s.reserve),
    commit_ms: summarize(s.commit),
    // Near 100 % on the service's thread means the figures are bounded by that thread's CPU
    // (gRPC server + pg driver, and with inline callers their gRPC client too), not by Postgres.
    service_thread_cpu_percent: percent(mainThreadMs),
    callers_thread_cpu_percent: where === 'inline' ? null : percent(s.callerThreadCpuMs),
  };
}

/** `LIMITER_HITS` sequential limiter hits, each timed (µs). */
async function limiterHits(limiter: RateLimiter, tag: string) {
  const samples: number[] = [];
  let refused = 0;
  const users = Array.from({ length: LIMITER_USERS }, (_, i) => `usr_bench${tag}${i}`);
  for (let i = 0; i < LIMITER_HITS; i++) {
    const t0 = process.hrtime.bigint();
    const { allowed } = await limiter.hit(users[i % users.length]!, 10, 60);
    samples.push(Number(process.hrtime.bigint() - t0) / 1e3);
    if (!allowed) refused += 1;
  }
  return { hits: LIMITER_HITS, users: LIMITER_USERS, refused, hit_us: summarize(samples, 1) };
}

/** `ADMIT_CALLS` sequential AdmitAiRequest RPCs over accounts opened beforehand (ms). */
async function admitCalls(db: Database, limiter: RateLimiter) {
  const log = createLogger('bench-billing', 'silent');
  const service = await startBillingService({ access: testAccess('billing'), db, log, address: '127.0.0.1:0', rateLimiter: limiter, sweepIntervalMs: 0 });
  const client = createPolicyClient(billing.BillingServiceClient, `127.0.0.1:${service.port}`, { deadlineMs: 30_000 });
  try {
    const users = Array.from({ length: ADMIT_CALLS / 10 }, () => newId('usr'));
    for (const userId of users) await client.getUsage({ userId }); // open the accounts outside the timing
    const samples: number[] = [];
    for (let i = 0; i < ADMIT_CALLS; i++) {
      const t0 = process.hrtime.bigint();
      await client.admitAiRequest({ userId: users[i % users.length]!, operation: billing.Operation.OPERATION_CONVERT });
      samples.push(elapsedMs(t0));
    }
    return { calls: ADMIT_CALLS, rpc_ms: summarize(samples, 3) };
  } finally {
    client.close();
    await service.stop();
  }
}

/** Runs the billing benchmark and returns its JSON-able result. */
export async function runBillingBench(): Promise<Record<string, unknown>> {
  const url = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const seconds = Number(process.env.BENCH_BILLING_SECONDS ?? 10);
  const schema = `billing_bench_${randomBytes(5).toString('hex')}`;
  const keyPrefix = `murmur-bench:billing:${randomBytes(5).toString('hex')}:`;
  const log = createLogger('bench-billing', 'silent');
  const started = new Date();

  const db = await openDatabase({ schema, migrationsDir: BILLING_MIGRATIONS_DIR, url, poolSize: POOL_SIZE });
  let redis: Redis | undefined;
  try {
    // Reserve + commit: 50 callers, each on its own account, then all 50 on one hot account.
    const service = await startBillingService({ access: testAccess('billing'), db, log, address: '127.0.0.1:0', rateLimiter: new UnlimitedRateLimiter(), sweepIntervalMs: 0 });
    const address = `127.0.0.1:${service.port}`;
    const client = createPolicyClient(billing.BillingServiceClient, address, { deadlineMs: 30_000 });
    let spreadInline: Awaited<ReturnType<typeof reserveCommitRun>>;
    let spread: Awaited<ReturnType<typeof reserveCommitRun>>;
    let hot: Awaited<ReturnType<typeof reserveCommitRun>>;
    let ledgerExact: boolean;
    try {
      const users = Array.from({ length: CALLERS }, () => newId('usr'));
      const hotUser = newId('usr');
      for (const userId of [...users, hotUser]) {
        await client.adjustCredits({ userId, monthlyCredits: 1_000_000_000, note: 'benchmark' });
      }
      // A short warm-up (connections, JIT) outside the figures.
      await reserveCommitRun(address, users, CALLERS, 1, 'worker');
      spread = await reserveCommitRun(address, users, CALLERS, seconds, 'worker');
      spreadInline = await reserveCommitRun(address, users, CALLERS, seconds, 'inline');
      hot = await reserveCommitRun(address, [hotUser], CALLERS, HOT_ACCOUNT_SECONDS, 'worker');
      // Sanity: every pair left one reserve and one commit row, and the ledger sums to the balances.
      const [check] = await db.query<{ off: string }>(
        `SELECT count(*) AS off FROM accounts a
         JOIN (SELECT user_id, sum(monthly_delta) AS m FROM ledger_entries GROUP BY user_id) l USING (user_id)
         WHERE l.m <> a.monthly_remaining OR a.reserved <> 0`,
      );
      ledgerExact = Number(check?.off) === 0;
    } finally {
      client.close();
      await service.stop();
    }

    // The rate-limit check: the limiter hit alone, then a whole AdmitAiRequest RPC.
    const inProcess = await limiterHits(new MemoryRateLimiter(), `m${randomBytes(3).toString('hex')}`);
    const admitInProcess = await admitCalls(db, new MemoryRateLimiter());
    let redisResult: Record<string, unknown>;
    if (await reachable(redisUrl)) {
      redis = await connectRedis(redisUrl);
      const limiter = new RedisRateLimiter(redis, { keyPrefix });
      await limiter.hit('usr_benchwarmup', 10, 60); // loads the script
      redisResult = { url: redactUrl(redisUrl), limiter: await limiterHits(limiter, 'r'), admit: await admitCalls(db, new RedisRateLimiter(redis, { keyPrefix })) };
    } else {
      redisResult = { skipped: `no Redis answering at ${redactUrl(redisUrl)}` };
    }

    return {
      benchmark: 'billing',
      timestamp: started.toISOString(),
      machine: machineInfo(),
      settings: {
        database: redactUrl(url),
        schema,
        pool_size: POOL_SIZE,
        callers: CALLERS,
        seconds,
        hot_account_seconds: HOT_ACCOUNT_SECONDS,
        operation: `transcribe, ${AUDIO_SECONDS} s of audio priced by the plan (2 credits), committed in full`,
        rate_limiter_in_reserve_commit: 'none (admits all; measured separately below)',
        limiter_hits: LIMITER_HITS,
        admit_calls: ADMIT_CALLS,
      },
      reserve_commit: { spread_accounts: spread, spread_accounts_callers_inline: spreadInline, one_hot_account: hot, ledger_reconciled: ledgerExact },
      rate_limit_check: {
        in_process: { limiter: inProcess, admit: admitInProcess },
        redis: redisResult,
      },
    };
  } finally {
    if (redis) {
      for await (const keys of redis.scanIterator({ MATCH: `${keyPrefix}*`, COUNT: 500 })) if (keys.length) await redis.del(keys);
      await redis.close();
    }
    await db.close();
    const admin = new Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    } finally {
      await admin.end();
    }
  }
}
