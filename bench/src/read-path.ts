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
}

interface TargetSummary {
  requests_per_second: number;
  latency_ms: { p50: number; p99: number };
  p99_over_p50: number;
  rounds: TargetRun[];
}

function summarize(runs: TargetRun[]): TargetSummary {
  const p50 = r3(mean(runs.map((r) => r.latency_ms.p50)));
  const p99 = r3(mean(runs.map((r) => r.latency_ms.p99)));
  return {
    requests_per_second: Math.round(mean(runs.map((r) => r.requests_per_second)) * 10) / 10,
    latency_ms: { p50, p99 },
    p99_over_p50: p50 > 0 ? r3(p99 / p50) : 0,
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
  addrs: { AUTH_ADDR: string; BILLING_ADDR: string; LIBRARY_ADDR: string };
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

  const [authPort, billingPort, libraryPort, gatewayPort, baselinePort] = (await freePorts(5)) as [number, number, number, number, number];
  const addrs = { AUTH_ADDR: `127.0.0.1:${authPort}`, BILLING_ADDR: `127.0.0.1:${billingPort}`, LIBRARY_ADDR: `127.0.0.1:${libraryPort}` };
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
    await procs.whileAlive(Promise.all(Object.values(addrs).map((a) => waitForGrpcServing(a, 60_000))));
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

async function runReadPath(log: (line: string) => void): Promise<BenchmarkReport> {
  const timestamp = new Date().toISOString();
  const machine = machineInfo();
  const stack = await startReadPathStack(log);
  const { db, urls, headers, procs, redis } = stack;
  try {
    const runs: Record<Target, TargetRun[]> = { gateway: [], baseline: [] };
    const failures: string[] = [];
    let warmupBad = 0;
    for (let round = 1; round <= SETTINGS.rounds; round += 1) {
      for (const target of TARGET_ORDER) {
        const load = (durationSeconds: number) =>
          procs.whileAlive(runLoad({ url: urls[target], headers, connections: SETTINGS.connections, pipelining: SETTINGS.pipelining, durationSeconds }));
        const warm = await load(SETTINGS.warmup_seconds);
        warmupBad += warm.non_2xx + warm.errors;
        const before = cpuSnapshot(procs.pids());
        const run = await load(SETTINGS.duration_seconds);
        const cpu = cpuPercent(before, cpuSnapshot(procs.pids()));
        runs[target].push({ round, ...run, cpu_percent: cpu });
        log(
          `round ${round}/${SETTINGS.rounds} ${target.padEnd(8)} ${run.requests_per_second.toFixed(0).padStart(6)} req/s  ` +
            `p50 ${run.latency_ms.p50.toFixed(2)} ms  p99 ${run.latency_ms.p99.toFixed(2)} ms  non-2xx ${run.non_2xx}  errors ${run.errors}`,
        );
        if (run.non_2xx + run.errors > 0) failures.push(`${target} round ${round}: ${run.non_2xx} non-2xx responses and ${run.errors} errors (${run.timeouts} timeouts)`);
      }
    }
    if (warmupBad > 0) failures.push(`${warmupBad} non-2xx responses or errors during warm-up`);
    procs.assertAlive();

    const gateway = summarize(runs.gateway);
    const baseline = summarize(runs.baseline);
    const ratio = baseline.requests_per_second > 0 ? r3(gateway.requests_per_second / baseline.requests_per_second) : 0;
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
        'cpu_percent in each round is percent of ONE core used by each process during the measured seconds (postgres = the server and all its backends; load_generator = the bench process; machine_busy / machine_idle / machine_steal = all cores together, so machine_busy minus the processes listed is whatever else ran on the machine).',
        'A missed target does not fail the run; failures lists what makes a run invalid (non-2xx responses, errors, crashed processes).',
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
