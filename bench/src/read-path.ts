/**
 * read-path: what the microservice split costs on the hottest read. Load on
 * `GET /api/v1/recordings?limit=20` through the real topology (gateway → auth VerifyKey →
 * library ListRecordings, each its own process, over gRPC, on Postgres; with REDIS_URL the
 * gateway's verified-key cache answers most requests without the auth hop), and on a one-process
 * express + pg baseline doing the same work over the same data (baseline-server.ts), in one
 * run, interleaved. Targets (issue 18): gateway req/s ≥ 0.75 × baseline, gateway p99 ≤ 3 × its p50.
 * A second gateway with the request log off (MURMUR_REQUEST_LOG=off) runs the same load in the
 * same rounds: the log's cost is the CPU per request of every process (auth's batched inserts and
 * Postgres included) with it on ÷ with it off (issue 36: at most 5 % more).
 */
import { isDeepStrictEqual } from 'node:util';
import { machineInfo, redactUrl, type Benchmark, type BenchmarkReport } from './benchmark';
import { loadConnections } from './load';
import { interleavedRounds, maxOtherCpu, NOISE_PERCENT, r3, summarize } from './rounds';
import { analyze, BENCH_DATABASE, createBenchUser, redisNote, startStack, type Stack } from './stack';

const ROUTE = '/api/v1/recordings?limit=20';
const EMAIL = 'bench@murmur.test';

const SETTINGS = {
  connections: loadConnections(),
  pipelining: 1,
  warmup_seconds: 3,
  duration_seconds: 10,
  rounds: 2,
  seeded_recordings: 200,
  /** ANALYZE runs after seeding (see analyze()). */
  analyzed_after_seeding: true,
  /** kit/db.ts default pool size: what auth and library each open, and what the baseline opens. */
  pool_size: 10,
  log_level: 'warn',
};

const TARGETS = { ratio_min: 0.75, p99_over_p50_max: 3, request_log_cpu_overhead_max: 0.05 };

type Target = 'gateway' | 'gateway_no_log' | 'baseline';
const TARGET_ORDER: Target[] = ['gateway', 'gateway_no_log', 'baseline'];
/** The gateway process with the request log off. */
const NO_LOG = 'gateway_no_log';

/** Both servers must answer the benchmarked request with the same body, or the race is unfair. */
async function checkSameAnswer(urls: Record<Target, string>, headers: Record<string, string>): Promise<{ identical: boolean }> {
  const bodies = {} as Record<Target, { object?: unknown; data?: unknown; has_more?: unknown; next_cursor?: unknown }>;
  for (const target of TARGET_ORDER) {
    const res = await fetch(urls[target], { headers });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${target} answered ${res.status} to GET ${ROUTE}: ${text.slice(0, 300)}`);
    bodies[target] = JSON.parse(text) as (typeof bodies)[Target];
  }
  const g = bodies.gateway;
  const b = bodies.baseline;
  if (!isDeepStrictEqual({ ...g, next_cursor: null }, { ...bodies.gateway_no_log, next_cursor: null })) throw new Error('the two gateways answer differently');
  if (!Array.isArray(g.data) || g.data.length !== 20 || g.has_more !== true) {
    throw new Error(`the gateway's first page should hold 20 of ${SETTINGS.seeded_recordings} recordings with has_more: true; got ${JSON.stringify(g).slice(0, 300)}`);
  }
  if (!isDeepStrictEqual({ ...g, next_cursor: typeof g.next_cursor }, { ...b, next_cursor: typeof b.next_cursor })) {
    throw new Error(
      `the baseline does not answer what the gateway answers, so the comparison would be unfair; update bench/src/baseline-server.ts.\n` +
        `gateway:  ${JSON.stringify(g).slice(0, 600)}\nbaseline: ${JSON.stringify(b).slice(0, 600)}`,
    );
  }
  return { identical: isDeepStrictEqual(g, b) };
}

/** The running topology of the benchmark, seeded and analyzed, ready for load. */
interface ReadPathStack {
  stack: Stack;
  urls: Record<Target, string>;
  headers: Record<string, string>;
  /** The answers of both targets are byte-identical (next_cursor included). */
  identical: boolean;
}

/**
 * Starts auth, billing, library and the gateway plus the baseline, seeds one user with a key
 * through the real RPCs, and checks both targets answer the benchmarked request alike. Stop it
 * with `stack.stop()`.
 */
async function startReadPathStack(log: (line: string) => void): Promise<ReadPathStack> {
  const stack = await startStack(log, {
    services: ['auth', 'billing', 'library'],
    extras: [{ name: 'baseline', script: 'bench/dist/baseline-server.js', env: { BASELINE_POOL_SIZE: String(SETTINGS.pool_size) } }],
    gateways: [{ name: NO_LOG, env: { MURMUR_REQUEST_LOG: 'off' } }],
    logLevel: SETTINGS.log_level,
  });
  try {
    log(`seeding ${SETTINGS.seeded_recordings} recordings through the services' RPCs`);
    const user = await createBenchUser(stack, EMAIL, { recordings: SETTINGS.seeded_recordings });
    await analyze(stack.db.url);
    const urls: Record<Target, string> = { gateway: `${stack.gateway}${ROUTE}`, gateway_no_log: `${stack.extras[NO_LOG]!}${ROUTE}`, baseline: `${stack.extras.baseline!}${ROUTE}` };
    const { identical } = await checkSameAnswer(urls, user.headers);
    return { stack, urls, headers: user.headers, identical };
  } catch (err) {
    await stack.stop();
    throw err;
  }
}

async function runReadPath(log: (line: string) => void): Promise<BenchmarkReport> {
  const timestamp = new Date().toISOString();
  const machine = machineInfo();
  const rp = await startReadPathStack(log);
  const { db, procs, redis } = rp.stack;
  try {
    const { runs, failures } = await interleavedRounds({
      targets: TARGET_ORDER.map((name) => ({ name, load: { url: rp.urls[name], headers: rp.headers } })),
      settings: SETTINGS,
      procs,
      db: { url: db.url, name: BENCH_DATABASE },
      log,
    });
    procs.assertAlive();

    const gateway = summarize(runs.gateway!);
    const noLog = summarize(runs[NO_LOG]!);
    const baseline = summarize(runs.baseline!);
    // What the request log adds to each request's CPU, every process counted (the gateway's queue, auth's inserts, Postgres).
    const logOverhead = noLog.cpu_ms_per_request > 0 ? r3(gateway.cpu_ms_per_request / noLog.cpu_ms_per_request - 1) : 0;
    const ratio = baseline.requests_per_second > 0 ? r3(gateway.requests_per_second / baseline.requests_per_second) : 0;
    const cpuRatio = gateway.cpu_ms_per_request > 0 ? r3(baseline.cpu_ms_per_request / gateway.cpu_ms_per_request) : 0;
    const otherCpu = maxOtherCpu(runs);
    const noisy = otherCpu > NOISE_PERCENT;
    const targetsMet = {
      ratio: ratio >= TARGETS.ratio_min,
      p99_over_p50: gateway.p99_over_p50 <= TARGETS.p99_over_p50_max,
      request_log_cpu_overhead: logOverhead <= TARGETS.request_log_cpu_overhead_max,
      all: false,
    };
    targetsMet.all = targetsMet.ratio && targetsMet.p99_over_p50 && targetsMet.request_log_cpu_overhead;

    const result = {
      benchmark: 'read-path',
      ok: failures.length === 0,
      failures,
      timestamp,
      request: `GET ${ROUTE} with a valid bearer key (200 recordings seeded for one user)`,
      gateway: {
        path: redis
          ? 'gateway (verified-key cache; auth.VerifyKey only on a miss, every 30 s per key) → library.ListRecordings (gRPC, 4 processes)'
          : 'gateway → auth.VerifyKey → library.ListRecordings (gRPC, 4 processes)',
        ...gateway,
      },
      gateway_no_log: { path: 'the same, through a second gateway process with MURMUR_REQUEST_LOG=off', ...noLog },
      baseline: { path: 'one express + pg process (bench/src/baseline-server.ts), same queries, same JSON', ...baseline },
      /** gateway CPU per request ÷ gateway_no_log CPU per request − 1: what the request log costs (all processes). */
      request_log_cpu_overhead: logOverhead,
      ratio,
      gateway_p99_over_p50: gateway.p99_over_p50,
      /**
       * Baseline CPU per request ÷ gateway-path CPU per request, every process counted: the
       * ratio a CPU-bound machine with nothing else on it would show; robust to noise.
       */
      cpu_ratio: cpuRatio,
      max_other_cpu_percent: otherCpu,
      noisy,
      targets: TARGETS,
      targets_met: targetsMet,
      responses_identical: rp.identical,
      redis_used: redis,
      settings: {
        ...SETTINGS,
        order: Array.from({ length: SETTINGS.rounds }, () => TARGET_ORDER).flat(),
        aggregation:
          'each target is measured in every round (warm-up discarded); requests_per_second, p50 and p99 are the means of the rounds; ' +
          'percentiles per round are nearest-rank over every 2xx response time (ms, sub-millisecond precision)',
        verification_cache: `${redisNote(redis)}; baseline: in-process Map, 60 s TTL`,
      },
      machine,
      postgres: { server_version: db.serverVersion, url: redactUrl(db.url) },
      notes: [
        `The load generator (autocannon, inside the bench process), the four Murmur processes, the baseline and Postgres all share the same ${machine.cpus} CPU core(s) of this machine: absolute numbers are lower than on separate machines, and the ratio also measures CPU contention (the gateway path burns CPU in more processes per request).`,
        `cpu_ratio = baseline cpu_ms_per_request ÷ gateway cpu_ms_per_request (all processes of the bench, Postgres and load generator included): what the req/s ratio tends to on a CPU-bound machine with nothing else running. noisy = some measurement had more than ${NOISE_PERCENT}% of a core used by processes outside the benchmark (other_cpu_percent per round).`,
        'cpu_percent in each round is percent of ONE core used by each process during the measured seconds (postgres = the backends connected to the bench database; load_generator = the bench process; machine_busy / machine_idle / machine_steal = all cores together, so machine_busy minus the processes listed is whatever else ran on the machine).',
        'A missed target does not fail the run; failures lists what makes a run invalid (non-200 responses, connection errors, crashed processes).',
      ],
    };

    const fmt = (x: number, d = 2) => x.toFixed(d);
    return {
      result,
      failures,
      table: {
        headers: ['target', 'req/s', 'p50 ms', 'p99 ms', 'p99/p50'],
        rows: [
          ['gateway', fmt(gateway.requests_per_second, 0), fmt(gateway.latency_ms.p50), fmt(gateway.latency_ms.p99), fmt(gateway.p99_over_p50)],
          [NO_LOG, fmt(noLog.requests_per_second, 0), fmt(noLog.latency_ms.p50), fmt(noLog.latency_ms.p99), fmt(noLog.p99_over_p50)],
          ['baseline', fmt(baseline.requests_per_second, 0), fmt(baseline.latency_ms.p50), fmt(baseline.latency_ms.p99), fmt(baseline.p99_over_p50)],
        ],
      },
      notes: [
        `ratio gateway/baseline req/s = ${fmt(ratio, 3)} (target ≥ ${TARGETS.ratio_min}: ${targetsMet.ratio ? 'met' : 'MISSED'})`,
        `gateway p99/p50 = ${fmt(gateway.p99_over_p50)} (target ≤ ${TARGETS.p99_over_p50_max}: ${targetsMet.p99_over_p50 ? 'met' : 'MISSED'})`,
        `CPU per request: gateway path ${fmt(gateway.cpu_ms_per_request)} ms, baseline ${fmt(baseline.cpu_ms_per_request)} ms (cpu ratio ${fmt(cpuRatio, 3)})`,
        `request log: ${fmt(gateway.cpu_ms_per_request)} ms of CPU per request with it, ${fmt(noLog.cpu_ms_per_request)} ms without: ${fmt(logOverhead * 100, 1)} % (target ≤ ${TARGETS.request_log_cpu_overhead_max * 100} %: ${targetsMet.request_log_cpu_overhead ? 'met' : 'MISSED'})`,
        ...(noisy ? [`NOISY: other processes used up to ${otherCpu.toFixed(0)}% of a core during a measurement; repeat before trusting req/s and p99`] : []),
        `${machine.cpus} CPU(s) shared by load generator, every process and Postgres; means of ${SETTINGS.rounds} interleaved rounds of ${SETTINGS.duration_seconds} s`,
      ],
    };
  } finally {
    await rp.stack.stop();
  }
}

export const readPath: Benchmark = {
  name: 'read-path',
  description: 'GET /api/v1/recordings?limit=20 through gateway → auth → library vs a one-process express + pg baseline',
  run: runReadPath,
};
