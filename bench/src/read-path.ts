/**
 * read-path: what the microservice split costs on the hottest read. Load on
 * `GET /api/v1/recordings?limit=20` through the real topology (gateway → auth VerifyKey →
 * library ListRecordings, each its own process, over gRPC, on Postgres), and on a one-process
 * express + pg baseline doing the same work over the same data (baseline-server.ts), in one
 * run, interleaved. Target: gateway req/s ≥ 0.6 × baseline, gateway p99 ≤ 3 × its p50.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { Client } from 'pg';
import { waitForGrpcServing, waitForHttpOk } from '@murmur/kit';
import { admin, closeClients, createClients } from '@murmur/gateway';
import type { ChildSpec } from '@murmur/launcher';
import { freePorts, machineInfo, redactUrl, type Benchmark, type BenchmarkReport } from './benchmark';
import { runLoad, type LoadRun } from './load';
import { cpuPercent, cpuSnapshot, ProcessSet } from './processes';

const ROOT = path.resolve(__dirname, '..', '..');
const BENCH_DATABASE = 'murmur_bench';
const DEFAULT_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
const ROUTE = '/api/v1/recordings?limit=20';
const EMAIL = 'bench@murmur.test';
const CURSOR_SECRET = 'murmur-bench-cursor-secret';

const SETTINGS = {
  connections: 10,
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

const TARGETS = { ratio_min: 0.6, p99_over_p50_max: 3 };
/** Above this much CPU (percent of one core) used by unrelated processes, a run is flagged noisy. */
const NOISE_PERCENT = 25;

type Target = 'gateway' | 'baseline';
const TARGET_ORDER: Target[] = ['gateway', 'baseline'];

const describe = (err: unknown): string => {
  if (err instanceof AggregateError) return err.errors.map(describe).join('; ');
  if (err instanceof Error) return err.message || ((err as NodeJS.ErrnoException).code ?? err.name);
  return String(err);
};

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / (xs.length || 1);
const r3 = (x: number) => Math.round(x * 1000) / 1000;

interface PreparedDatabase {
  url: string;
  serverVersion: string;
}

/**
 * Creates `murmur_bench` when absent and empties it of every Murmur schema, so each run seeds
 * into the same clean state; the services then apply their own migrations.
 */
async function prepareDatabase(adminUrl: string): Promise<PreparedDatabase> {
  const connect = async (url: string) => {
    const client = new Client({ connectionString: url, connectionTimeoutMillis: 5_000, application_name: 'murmur-bench' });
    try {
      await client.connect();
    } catch (err) {
      await client.end().catch(() => undefined);
      throw new Error(
        `Postgres is unreachable at ${redactUrl(url)}: ${describe(err)}. Start Postgres, or set BENCH_DATABASE_URL ` +
          `to a server where this user may create databases (the benchmark uses a database named ${BENCH_DATABASE}).`,
      );
    }
    return client;
  };

  let benchUrl: string;
  try {
    const u = new URL(adminUrl);
    u.pathname = `/${BENCH_DATABASE}`;
    benchUrl = u.toString();
  } catch {
    throw new Error(`BENCH_DATABASE_URL / DATABASE_URL is not a valid URL: ${redactUrl(adminUrl)}`);
  }

  const adminClient = await connect(adminUrl);
  try {
    const { rowCount } = await adminClient.query('SELECT 1 FROM pg_database WHERE datname = $1', [BENCH_DATABASE]);
    if (rowCount === 0) {
      await adminClient.query(`CREATE DATABASE ${BENCH_DATABASE}`).catch((err: unknown) => {
        // Created meanwhile by a concurrent run: fine.
        if ((err as { code?: string }).code !== '42P04') throw new Error(`could not create database ${BENCH_DATABASE}: ${describe(err)}`);
      });
    }
  } finally {
    await adminClient.end();
  }

  const bench = await connect(benchUrl);
  try {
    await bench.query(`SET lock_timeout = '10s'`);
    await bench.query('DROP SCHEMA IF EXISTS auth, billing, library CASCADE');
    const { rows } = await bench.query<{ server_version: string }>('SHOW server_version');
    return { url: benchUrl, serverVersion: rows[0]?.server_version ?? 'unknown' };
  } finally {
    await bench.end();
  }
}

/** ANALYZE of every seeded schema, so both targets run on planned-for-production statistics. */
async function analyze(url: string): Promise<void> {
  const client = new Client({ connectionString: url, application_name: 'murmur-bench' });
  await client.connect();
  try {
    for (const schema of ['auth', 'billing', 'library']) {
      const { rows } = await client.query<{ name: string }>(`SELECT quote_ident(schemaname) || '.' || quote_ident(tablename) AS name FROM pg_tables WHERE schemaname = $1`, [schema]);
      for (const { name } of rows) await client.query(`ANALYZE ${name}`);
    }
  } finally {
    await client.end();
  }
}

interface TargetRun extends LoadRun {
  round: number;
  /** Percent of one core per process during the measured seconds. */
  cpu_percent: Record<string, number>;
  /** CPU milliseconds per request of each process of the bench (load generator and Postgres included). */
  cpu_ms_per_request: Record<string, number>;
  /** Percent of one core used by processes that are not part of the benchmark: noise. */
  other_cpu_percent: number;
}

interface TargetSummary {
  requests_per_second: number;
  latency_ms: { p50: number; p99: number };
  p99_over_p50: number;
  /** Sum over every process of the bench, mean of the rounds. */
  cpu_ms_per_request: number;
  rounds: TargetRun[];
}

const MACHINE_KEYS = new Set(['machine_busy', 'machine_idle', 'machine_steal']);

/** A measured run with its CPU split per request, and how much of the machine others used. */
function withCpu(round: number, run: LoadRun, cpu: Record<string, number>): TargetRun {
  const ours = Object.entries(cpu).filter(([name]) => !MACHINE_KEYS.has(name));
  const perRequest: Record<string, number> = {};
  for (const [name, percent] of ours) {
    if (percent > 0.5 && run.requests_per_second > 0) perRequest[name] = r3((percent * 10) / run.requests_per_second);
  }
  const busy = cpu.machine_busy;
  const other = busy === undefined ? 0 : Math.max(0, Math.round((busy - ours.reduce((a, [, v]) => a + v, 0)) * 10) / 10);
  return { round, ...run, cpu_percent: cpu, cpu_ms_per_request: perRequest, other_cpu_percent: other };
}

function summarize(runs: TargetRun[]): TargetSummary {
  const p50 = r3(mean(runs.map((r) => r.latency_ms.p50)));
  const p99 = r3(mean(runs.map((r) => r.latency_ms.p99)));
  return {
    requests_per_second: Math.round(mean(runs.map((r) => r.requests_per_second)) * 10) / 10,
    latency_ms: { p50, p99 },
    p99_over_p50: p50 > 0 ? r3(p99 / p50) : 0,
    cpu_ms_per_request: r3(mean(runs.map((r) => Object.values(r.cpu_ms_per_request).reduce((a, b) => a + b, 0)))),
    rounds: runs,
  };
}

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
export interface ReadPathStack {
  db: PreparedDatabase;
  addrs: Record<'AUTH_ADDR' | 'BILLING_ADDR' | 'LIBRARY_ADDR' | 'TRANSCRIPTION_ADDR' | 'CONVERSION_ADDR', string>;
  urls: Record<Target, string>;
  headers: Record<string, string>;
  procs: ProcessSet;
  /** Whether the auth service's verification cache is Redis (REDIS_URL set) or in-process. */
  redis: boolean;
  /** The answers of both targets are byte-identical (next_cursor included). */
  identical: boolean;
}

/**
 * Cleans the bench database, starts auth, billing, library and the gateway under the
 * Supervisor plus the baseline, seeds one user with a key through the real RPCs, and checks
 * both targets answer the benchmarked request alike. Stop it with `stack.procs.stopAll()`.
 */
export async function startReadPathStack(log: (line: string) => void): Promise<ReadPathStack> {
  const adminUrl = process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL || DEFAULT_ADMIN_URL;
  for (const script of ['services/auth/dist/main.js', 'services/billing/dist/main.js', 'services/library/dist/main.js', 'gateway/dist/main.js', 'bench/dist/baseline-server.js']) {
    if (!fs.existsSync(path.join(ROOT, script))) throw new Error(`${script} is missing: build first (npm run build).`);
  }

  log(`database: ${redactUrl(adminUrl)} → ${BENCH_DATABASE} (schemas auth, billing, library dropped first)`);
  const db = await prepareDatabase(adminUrl);

  const [authPort, billingPort, libraryPort, transcriptionPort, conversionPort, gatewayPort, baselinePort] = (await freePorts(7)) as number[] as [
    number, number, number, number, number, number, number,
  ];
  // Transcription and conversion are not on this path and not started; their addresses only
  // keep the gateway's (lazy) clients off the default ports another `npm start` may be using.
  const addrs = {
    AUTH_ADDR: `127.0.0.1:${authPort}`,
    BILLING_ADDR: `127.0.0.1:${billingPort}`,
    LIBRARY_ADDR: `127.0.0.1:${libraryPort}`,
    TRANSCRIPTION_ADDR: `127.0.0.1:${transcriptionPort}`,
    CONVERSION_ADDR: `127.0.0.1:${conversionPort}`,
  };
  const serving = [addrs.AUTH_ADDR, addrs.BILLING_ADDR, addrs.LIBRARY_ADDR];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...addrs,
    DATABASE_URL: db.url,
    PORT: String(gatewayPort),
    HOST: '127.0.0.1',
    LOG_LEVEL: SETTINGS.log_level,
    MURMUR_CURSOR_SECRET: CURSOR_SECRET,
    // Each service listens on its own *_ADDR, whatever the caller's shell says.
    GRPC_LISTEN_ADDR: '',
  };
  const redis = Boolean(process.env.REDIS_URL);
  const node = (name: string, script: string): ChildSpec => ({
    name,
    command: process.execPath,
    args: ['--enable-source-maps', path.join(ROOT, script)],
    env,
  });
  const services = ['auth', 'billing', 'library'];
  const procs = new ProcessSet(
    [...services.map((s) => node(s, `services/${s}/dist/main.js`)), node('gateway', 'gateway/dist/main.js')],
    log,
  );

  try {
    log(`starting auth, billing, library, gateway (Postgres ${db.serverVersion}, ${redis ? 'Redis at REDIS_URL' : 'in-process caches'}) and the baseline`);
    for (const s of services) procs.start(s);
    procs.spawnPlain({
      name: 'baseline',
      command: process.execPath,
      args: ['--enable-source-maps', path.join(ROOT, 'bench/dist/baseline-server.js')],
      env: { ...env, PORT: String(baselinePort), BASELINE_POOL_SIZE: String(SETTINGS.pool_size) },
    });
    await procs.whileAlive(Promise.all(serving.map((a) => waitForGrpcServing(a, 60_000))));
    procs.start('gateway');
    const urls: Record<Target, string> = {
      gateway: `http://127.0.0.1:${gatewayPort}${ROUTE}`,
      baseline: `http://127.0.0.1:${baselinePort}${ROUTE}`,
    };
    await procs.whileAlive(
      Promise.all([waitForHttpOk(`http://127.0.0.1:${gatewayPort}/healthz`, 60_000), waitForHttpOk(`http://127.0.0.1:${baselinePort}/healthz`, 60_000)]),
    );

    log(`seeding ${SETTINGS.seeded_recordings} recordings through the services' RPCs`);
    const clients = createClients(addrs, 30_000);
    let key: string;
    try {
      await procs.whileAlive(admin.createUser(clients, EMAIL, 'Bench', undefined));
      await procs.whileAlive(admin.seed(clients, EMAIL, SETTINGS.seeded_recordings));
      key = (await procs.whileAlive(admin.createKey(clients, EMAIL, '90', 'bench'))).key;
    } finally {
      closeClients(clients);
    }
    // A production database has statistics (autovacuum analyzes within a minute of a bulk
    // load); without them the list query sorts every row of the owner instead of walking the
    // (owner_id, created_at, id) index, and the result would depend on when autovacuum wakes.
    await analyze(db.url);
    const headers = { authorization: `Bearer ${key}` };
    const { identical } = await checkSameAnswer(urls, headers);
    return { db, addrs, urls, headers, procs, redis, identical };
  } catch (err) {
    await procs.stopAll();
    throw err;
  }
}

/**
 * The interleaved rounds: per target a warm-up (discarded) then a measured run, with the CPU
 * every process used meanwhile. Non-200 responses and errors, warm-up included, are failures.
 */
async function measure(stack: ReadPathStack, log: (line: string) => void): Promise<{ runs: Record<Target, TargetRun[]>; failures: string[] }> {
  const { db, urls, headers, procs } = stack;
  // Postgres backends of the bench database, for CPU accounting (the server may be shared).
  const monitor = new Client({ connectionString: db.url, application_name: 'murmur-bench-monitor' });
  await monitor.connect();
  try {
    const backends = async () =>
      (await monitor.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [BENCH_DATABASE])).rows.map(
        (r) => r.pid,
      );
    const runs: Record<Target, TargetRun[]> = { gateway: [], baseline: [] };
    const failures: string[] = [];
    let warmupBad = 0;
    for (let round = 1; round <= SETTINGS.rounds; round += 1) {
      for (const target of TARGET_ORDER) {
        const load = (durationSeconds: number) =>
          procs.whileAlive(runLoad({ url: urls[target], headers, connections: SETTINGS.connections, pipelining: SETTINGS.pipelining, durationSeconds }));
        const warm = await load(SETTINGS.warmup_seconds);
        warmupBad += warm.non_200 + warm.errors;
        const before = cpuSnapshot(procs.pids(), await backends());
        const run = await load(SETTINGS.duration_seconds);
        const cpu = cpuPercent(before, cpuSnapshot(procs.pids(), await backends()));
        runs[target].push(withCpu(round, run, cpu));
        log(
          `round ${round}/${SETTINGS.rounds} ${target.padEnd(8)} ${run.requests_per_second.toFixed(0).padStart(6)} req/s  ` +
            `p50 ${run.latency_ms.p50.toFixed(2)} ms  p99 ${run.latency_ms.p99.toFixed(2)} ms  non-200 ${run.non_200}  errors ${run.errors}`,
        );
        if (run.non_200 + run.errors > 0) failures.push(`${target} round ${round}: ${run.non_200} non-200 responses and ${run.errors} errors (${run.timeouts} timeouts)`);
      }
    }
    if (warmupBad > 0) failures.push(`${warmupBad} non-200 responses or errors during warm-up`);
    return { runs, failures };
  } finally {
    await monitor.end().catch(() => undefined);
  }
}

async function runReadPath(log: (line: string) => void): Promise<BenchmarkReport> {
  const timestamp = new Date().toISOString();
  const machine = machineInfo();
  const stack = await startReadPathStack(log);
  const { db, procs, redis } = stack;
  try {
    const { runs, failures } = await measure(stack, log);
    procs.assertAlive();

    const gateway = summarize(runs.gateway);
    const baseline = summarize(runs.baseline);
    const ratio = baseline.requests_per_second > 0 ? r3(gateway.requests_per_second / baseline.requests_per_second) : 0;
    const cpuRatio = gateway.cpu_ms_per_request > 0 ? r3(baseline.cpu_ms_per_request / gateway.cpu_ms_per_request) : 0;
    const otherCpu = Math.max(...[...runs.gateway, ...runs.baseline].map((r) => r.other_cpu_percent));
    const noisy = otherCpu > NOISE_PERCENT;
    const targetsMet = {
      ratio: ratio >= TARGETS.ratio_min,
      p99_over_p50: gateway.p99_over_p50 <= TARGETS.p99_over_p50_max,
      all: false,
    };
    targetsMet.all = targetsMet.ratio && targetsMet.p99_over_p50;

    const result = {
      benchmark: 'read-path',
      ok: failures.length === 0,
      failures,
      timestamp,
      request: `GET ${ROUTE} with a valid bearer key (200 recordings seeded for one user)`,
      gateway: { path: 'gateway → auth.VerifyKey → library.ListRecordings (gRPC, 4 processes)', ...gateway },
      baseline: { path: 'one express + pg process (bench/src/baseline-server.ts), same queries, same JSON', ...baseline },
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
      responses_identical: stack.identical,
      settings: {
        ...SETTINGS,
        order: Array.from({ length: SETTINGS.rounds }, () => TARGET_ORDER).flat(),
        aggregation:
          'each target is measured in every round (warm-up discarded); requests_per_second, p50 and p99 are the means of the rounds; ' +
          'percentiles per round are nearest-rank over every 2xx response time (ms, sub-millisecond precision)',
        verification_cache: redis
          ? 'auth service: Redis (REDIS_URL was set); baseline: in-process Map, 60 s TTL'
          : 'auth service: in-process (REDIS_URL unset); baseline: in-process Map, 60 s TTL',
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
          ['baseline', fmt(baseline.requests_per_second, 0), fmt(baseline.latency_ms.p50), fmt(baseline.latency_ms.p99), fmt(baseline.p99_over_p50)],
        ],
      },
      notes: [
        `ratio gateway/baseline req/s = ${fmt(ratio, 3)} (target ≥ ${TARGETS.ratio_min}: ${targetsMet.ratio ? 'met' : 'MISSED'})`,
        `gateway p99/p50 = ${fmt(gateway.p99_over_p50)} (target ≤ ${TARGETS.p99_over_p50_max}: ${targetsMet.p99_over_p50 ? 'met' : 'MISSED'})`,
        `CPU per request: gateway path ${fmt(gateway.cpu_ms_per_request)} ms, baseline ${fmt(baseline.cpu_ms_per_request)} ms (cpu ratio ${fmt(cpuRatio, 3)})`,
        ...(noisy ? [`NOISY: other processes used up to ${otherCpu.toFixed(0)}% of a core during a measurement; repeat before trusting req/s and p99`] : []),
        `${machine.cpus} CPU(s) shared by load generator, every process and Postgres; means of ${SETTINGS.rounds} interleaved rounds of ${SETTINGS.duration_seconds} s`,
      ],
    };
  } finally {
    await procs.stopAll();
  }
}

export const readPath: Benchmark = {
  name: 'read-path',
  description: 'GET /api/v1/recordings?limit=20 through gateway → auth → library vs a one-process express + pg baseline',
  run: runReadPath,
};
