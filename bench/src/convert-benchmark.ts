/**
 * `npm run bench -- convert`: the local conversion engine in-process ({@link runConvertBench}:
 * time per kind at 1k / 10k / 100k words and the growth exponent), then what the platform adds
 * on top of it — POST /api/v1/convert through the real topology (gateway → auth → billing
 * admission → conversion → billing reserve/commit, each its own process) against the same
 * LocalEngine call made in the bench process, for the same transcript and kind, in one run.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { LocalEngine, renderArtifact } from '@murmur/conversion';
import { CONVERT_READ_FIRST_MAX_BYTES } from '@murmur/contract';
import { newRequestId, runWithContext } from '@murmur/kit';
import { billing, conversion } from '@murmur/proto';
import { machineInfo, type Benchmark, type BenchmarkReport } from './benchmark';
import { benchTranscript, median, runConvertBench } from './convert';
import { createBenchUser, describe, redisNote, startStack, type BenchUser, type Stack } from './stack';

const OVERHEAD_SETTINGS = {
  sizes_words: [1_000, 10_000],
  kind: 'summary' as const,
  /** Timed end-to-end requests per size, one at a time, each followed by one timed in-process run. */
  requests: 20,
  /** Untimed requests (and in-process runs) per size first: JIT, connections, caches. */
  warmup: 3,
  /**
   * Users (one key each) the requests rotate over: the AI rate limit is 10 requests a minute per
   * user, and 2 × (3 + 20) requests plus 2 × 20 direct rounds of two slots (an admission timed
   * alone, a Convert) over 24 users is at most 6 each.
   */
  users: 24,
  /** Autocommitted one-row INSERTs timed on the bench database: what one durable write costs here. */
  postgres_commits: 20,
  /** Monthly credits set on each user (a 10k-word conversion costs 56). */
  monthly_credits: 1_000_000,
  log_level: 'warn',
};

const round = (x: number, digits = 2) => Number(x.toFixed(digits));

interface SizeResult {
  words: number;
  characters: number;
  e2e_ms: { median: number; min: number; max: number; samples: number[] };
  in_process_ms: { median: number; min: number; max: number; samples: number[] };
  /** e2e median − in-process median. */
  overhead_ms: number;
  /** e2e median ÷ in-process median. */
  ratio: number;
  credits_charged: number;
  /** The artifact the API returned equals the in-process one (same reference day). */
  same_output: boolean;
  /** How the gateway admitted these requests: at the reservation, or by AdmitAiRequest first (bodies over 64 KB). */
  admitted: string;
  /**
   * Where the overhead goes, medians of the same iterations: billing.AdmitAiRequest and
   * conversion.Convert called over gRPC from the bench process (what the gateway calls, without
   * the gateway); gateway_rest = e2e − convert (− admit when the gateway admits first).
   */
  breakdown_ms: { admit_rpc: number; convert_rpc: number; convert_rpc_minus_engine: number; gateway_rest: number };
}

/** One POST /api/v1/convert; throws unless 200 with an artifact of the requested kind. */
async function convertOnce(stack: Stack, user: BenchUser, transcript: string, kind: string): Promise<{ ms: number; content: string; credits: number }> {
  const body = JSON.stringify({ transcript, kind });
  const started = performance.now();
  const res = await fetch(`${stack.gateway}/api/v1/convert`, { method: 'POST', headers: { ...user.headers, 'content-type': 'application/json' }, body });
  const text = await res.text();
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`POST /api/v1/convert answered ${res.status}: ${text.slice(0, 300)}`);
  const artifact = JSON.parse(text) as { object?: string; kind?: string; content?: string; credits_charged?: number };
  if (artifact.object !== 'artifact' || artifact.kind !== kind || !artifact.content) throw new Error(`POST /api/v1/convert answered an unexpected body: ${text.slice(0, 300)}`);
  return { ms, content: artifact.content, credits: artifact.credits_charged ?? 0 };
}

/**
 * Median time of an autocommitted one-row INSERT on the bench database: the price of each
 * durable write (WAL flush) on this machine. A paid call makes several (admission, reserve,
 * commit), so on a slow disk they dominate a short conversion.
 */
async function postgresCommitMs(url: string, count: number): Promise<number> {
  const client = new Client({ connectionString: url, application_name: 'murmur-bench' });
  await client.connect();
  try {
    await client.query('CREATE TABLE IF NOT EXISTS public.bench_commit_probe (id serial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())');
    const times: number[] = [];
    for (let i = 0; i < count; i += 1) {
      const started = performance.now();
      await client.query('INSERT INTO public.bench_commit_probe DEFAULT VALUES');
      times.push(performance.now() - started);
    }
    await client.query('DROP TABLE public.bench_commit_probe');
    return round(median(times));
  } finally {
    await client.end();
  }
}

/** Sequential end-to-end requests vs in-process LocalEngine runs, interleaved, per size. */
async function measureOverhead(log: (line: string) => void): Promise<{ result: Record<string, unknown>; failures: string[] }> {
  const stack = await startStack(log, { services: ['auth', 'billing', 'library', 'conversion'], logLevel: OVERHEAD_SETTINGS.log_level });
  const failures: string[] = [];
  try {
    const users: BenchUser[] = [];
    for (let i = 0; i < OVERHEAD_SETTINGS.users; i += 1) {
      users.push(await createBenchUser(stack, `bench-convert-${i}@murmur.test`, { monthlyCredits: OVERHEAD_SETTINGS.monthly_credits }));
    }
    // One cheap authenticated read per key: with Redis its verification is then cached, as for a busy key.
    for (const u of users) {
      const res = await fetch(`${stack.gateway}/api/v1/me`, { headers: u.headers });
      await res.text();
      if (res.status !== 200) throw new Error(`GET /api/v1/me answered ${res.status}`);
    }

    const engine = new LocalEngine();
    const signal = new AbortController().signal;
    const { kind } = OVERHEAD_SETTINGS;
    let turn = 0;
    const nextUser = () => users[turn++ % users.length]!;
    const sizes: Record<string, SizeResult> = {};
    for (const words of OVERHEAD_SETTINGS.sizes_words) {
      const transcript = benchTranscript(words);
      // What the service does: relative dates are read against "now".
      const inProcess = async () => {
        const started = performance.now();
        const content = renderArtifact(await engine.convert({ transcript, kind, instructions: '', referenceTime: new Date(), signal }), 'markdown');
        return { ms: performance.now() - started, content };
      };
      for (let i = 0; i < OVERHEAD_SETTINGS.warmup; i += 1) {
        await stack.procs.whileAlive(convertOnce(stack, nextUser(), transcript, kind));
        await inProcess();
      }
      const admitTimes: number[] = [];
      const convertTimes: number[] = [];
      // What the gateway does for one request, called directly, as it calls them (its workload
      // token and a principal assertion for the user): a body of at most
      // CONVERT_READ_FIRST_MAX_BYTES goes straight to Convert, billing admitting it at the
      // reservation; a larger one is admitted first. The admission is timed either way (admit_rpc:
      // what the larger body's extra hop costs).
      const readFirst = Buffer.byteLength(JSON.stringify({ transcript, kind })) <= CONVERT_READ_FIRST_MAX_BYTES;
      const direct = (user: BenchUser) => runWithContext({ requestId: newRequestId(), principal: { userId: user.userId, keyId: 'key_bench' } }, () => directCalls(user));
      const directCalls = async (user: BenchUser) => {
        let started = performance.now();
        const admission = await stack.gatewayClients.billing.admitAiRequest({ userId: user.userId, operation: billing.Operation.OPERATION_CONVERT });
        admitTimes.push(performance.now() - started);
        started = performance.now();
        const res = await stack.gatewayClients.conversion.convert({
          userId: user.userId,
          source: { $case: 'transcript', value: transcript },
          kind,
          outputFormat: conversion.OutputFormat.OUTPUT_FORMAT_MARKDOWN,
          instructions: '',
          idempotencyKey: `bench_${randomUUID()}`,
          referenceTime: undefined,
          admissionId: readFirst ? '' : admission.admissionId,
        });
        convertTimes.push(performance.now() - started);
        if (!res.content) throw new Error('conversion.Convert returned no content');
      };
      const e2e: number[] = [];
      const local: number[] = [];
      let credits = 0;
      let same = true;
      for (let i = 0; i < OVERHEAD_SETTINGS.requests; i += 1) {
        try {
          const r = await stack.procs.whileAlive(convertOnce(stack, nextUser(), transcript, kind));
          e2e.push(r.ms);
          credits = r.credits;
          const l = await inProcess();
          local.push(l.ms);
          if (l.content !== r.content) same = false;
          await stack.procs.whileAlive(direct(nextUser()));
        } catch (err) {
          failures.push(`${words} words, request ${i + 1}: ${describe(err)}`);
          break;
        }
      }
      const stats = (xs: number[]) => ({ median: round(median(xs)), min: round(Math.min(...xs)), max: round(Math.max(...xs)), samples: xs.map((x) => round(x)) });
      const e = stats(e2e);
      const l = stats(local);
      sizes[String(words)] = {
        words: transcript.split(/\s+/).length,
        characters: transcript.length,
        e2e_ms: e,
        in_process_ms: l,
        overhead_ms: round(e.median - l.median),
        ratio: l.median > 0 ? round(e.median / l.median, 3) : 0,
        credits_charged: credits,
        same_output: same,
        admitted: readFirst ? 'at the reservation (body ≤ CONVERT_READ_FIRST_MAX_BYTES)' : 'by AdmitAiRequest before the body is read',
        breakdown_ms: {
          admit_rpc: round(median(admitTimes)),
          convert_rpc: round(median(convertTimes)),
          convert_rpc_minus_engine: round(median(convertTimes) - l.median),
          gateway_rest: round(e.median - (readFirst ? 0 : median(admitTimes)) - median(convertTimes)),
        },
      };
      const b = sizes[String(words)]!.breakdown_ms;
      log(
        `${words} words, ${kind}: e2e median ${e.median} ms, in-process ${l.median} ms → overhead ${round(e.median - l.median)} ms (×${sizes[String(words)]!.ratio}); ` +
          `direct RPCs: AdmitAiRequest ${b.admit_rpc} ms, Convert ${b.convert_rpc} ms`,
      );
    }
    stack.procs.assertAlive();
    const commitMs = await postgresCommitMs(stack.db.url, OVERHEAD_SETTINGS.postgres_commits);
    log(`one durable Postgres commit (autocommitted INSERT) here: median ${commitMs} ms`);
    return {
      failures,
      result: {
        kind,
        sizes,
        postgres_commit_ms: commitMs,
        redis_used: stack.redis,
        caches: redisNote(stack.redis),
        settings: OVERHEAD_SETTINGS,
        path:
          'POST /api/v1/convert {transcript, kind}: gateway (key check; billing.AdmitAiRequest only for a body over CONVERT_READ_FIRST_MAX_BYTES) → ' +
          'conversion.Convert (billing.Reserve: plan limit, credits, rate limit unless admitted; LocalEngine; billing.Commit) → JSON',
        method:
          'Per size: 3 untimed warm-ups, then 20 rounds of one end-to-end request (client-side wall time from fetch to the last body byte, keep-alive connection, keys rotated over 8 users for the rate limit) followed by one in-process LocalEngine.convert of the same transcript and kind in the bench process, then billing.AdmitAiRequest + conversion.Convert called directly over gRPC (breakdown_ms). overhead_ms = median e2e − median in-process; ratio = median e2e ÷ median in-process.',
      },
    };
  } finally {
    await stack.stop();
  }
}

async function runConvert(log: (line: string) => void): Promise<BenchmarkReport> {
  const machine = machineInfo();
  log('in-process LocalEngine: every kind at 1k / 10k / 100k words…');
  const engineResult = await runConvertBench();
  log('gateway overhead: POST /api/v1/convert through the real topology vs in-process…');
  const overhead = await measureOverhead(log);

  const ms = engineResult.median_ms as Record<string, Record<string, number>>;
  const exponents = engineResult.log_log_exponent as Record<string, number>;
  const sizes = (overhead.result.sizes ?? {}) as Record<string, SizeResult>;
  const result = {
    ...engineResult,
    ok: overhead.failures.length === 0,
    failures: overhead.failures,
    machine: { ...machine, ...(engineResult.machine as object) },
    gateway_overhead: overhead.result,
    notes: [
      'median_ms / log_log_exponent: the engine alone, in-process (no gRPC, no billing).',
      'gateway_overhead: the same engine behind the whole platform, sequential requests; everything shares the same cores, and the in-process runs happen in the bench process between requests.',
      'A missed target does not fail the run.',
    ],
  };
  const f = (x: number | undefined) => (x === undefined ? '—' : x.toFixed(1));
  return {
    result,
    failures: overhead.failures,
    table: {
      headers: ['kind / path', '1k words ms', '10k words ms', '100k words ms', 'exponent'],
      rows: [
        ...Object.keys(ms).map((kind) => [kind, f(ms[kind]!['1000']), f(ms[kind]!['10000']), f(ms[kind]!['100000']), String(exponents[kind] ?? '—')]),
        ['summary via POST /convert (median)', f(sizes['1000']?.e2e_ms.median), f(sizes['10000']?.e2e_ms.median), '—', '—'],
        ['summary in-process, same run (median)', f(sizes['1000']?.in_process_ms.median), f(sizes['10000']?.in_process_ms.median), '—', '—'],
        ['overhead ms', f(sizes['1000']?.overhead_ms), f(sizes['10000']?.overhead_ms), '—', '—'],
        ['e2e ÷ in-process', sizes['1000']?.ratio.toFixed(2) ?? '—', sizes['10000']?.ratio.toFixed(2) ?? '—', '—', '—'],
      ],
    },
    notes: [
      `engine growth: max exponent ${String(engineResult.max_exponent)} (roughly linear ≤ 1.2: ${(engineResult.targets_met as { roughly_linear: boolean }).roughly_linear ? 'met' : 'MISSED'})`,
      `gateway overhead measured ${overhead.result.redis_used ? 'with' : 'without'} Redis`,
    ],
  };
}

export const convertBench: Benchmark = {
  name: 'convert',
  description: 'local conversion engine time per kind at 1k/10k/100k words; POST /convert end to end vs the engine in-process',
  run: runConvert,
};
