/**
 * Interleaved load rounds (A, B, A, B, …) with autocannon, each a warm-up (discarded) then a
 * measured run, with the CPU every process of the benchmark used meanwhile (Postgres backends
 * of the bench database and the load generator included) and how much of the machine other
 * processes used (noise). Shared by read-path and mcp.
 */
import { Client } from 'pg';
import { runLoad, type LoadOptions, type LoadRun } from './load';
import { cpuPercent, cpuSnapshot, type ProcessSet } from './processes';

/** Above this much CPU (percent of one core) used by unrelated processes, a run is flagged noisy. */
export const NOISE_PERCENT = 25;

export interface RoundSettings {
  connections: number;
  pipelining: number;
  warmup_seconds: number;
  duration_seconds: number;
  rounds: number;
}

/** One measured run of one target. */
export interface TargetRun extends LoadRun {
  round: number;
  /** Percent of one core per process during the measured seconds. */
  cpu_percent: Record<string, number>;
  /** CPU milliseconds per request of each process of the bench (load generator and Postgres included). */
  cpu_ms_per_request: Record<string, number>;
  /** Percent of one core used by processes that are not part of the benchmark: noise. */
  other_cpu_percent: number;
}

export interface TargetSummary {
  requests_per_second: number;
  latency_ms: { p50: number; p99: number };
  p99_over_p50: number;
  /** Sum over every process of the bench, mean of the rounds. */
  cpu_ms_per_request: number;
  rounds: TargetRun[];
}

/** A target of the race: what to load, keyed by name in the results. */
export interface RoundTarget {
  name: string;
  load: Omit<LoadOptions, 'durationSeconds' | 'connections' | 'pipelining'>;
}

const MACHINE_KEYS = new Set(['machine_busy', 'machine_idle', 'machine_steal']);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / (xs.length || 1);
export const r3 = (x: number) => Math.round(x * 1000) / 1000;

/** A measured run with its CPU split per request, and how much of the machine others used. */
export function withCpu(round: number, run: LoadRun, cpu: Record<string, number>): TargetRun {
  const ours = Object.entries(cpu).filter(([name]) => !MACHINE_KEYS.has(name));
  const perRequest: Record<string, number> = {};
  for (const [name, percent] of ours) {
    if (percent > 0.5 && run.requests_per_second > 0) perRequest[name] = r3((percent * 10) / run.requests_per_second);
  }
  const busy = cpu.machine_busy;
  const other = busy === undefined ? 0 : Math.max(0, Math.round((busy - ours.reduce((a, [, v]) => a + v, 0)) * 10) / 10);
  return { round, ...run, cpu_percent: cpu, cpu_ms_per_request: perRequest, other_cpu_percent: other };
}

/** Means over the rounds of req/s, p50, p99 and CPU per request. */
export function summarize(runs: TargetRun[]): TargetSummary {
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

/**
 * Runs the interleaved rounds. Non-200 responses, body mismatches and connection errors,
 * warm-ups included, are returned as failures (the run is invalid), never thrown.
 */
export async function interleavedRounds(opts: {
  targets: readonly RoundTarget[];
  settings: RoundSettings;
  procs: ProcessSet;
  /** The bench database: its backends are the Postgres CPU of the benchmark. */
  db: { url: string; name: string };
  log: (line: string) => void;
}): Promise<{ runs: Record<string, TargetRun[]>; failures: string[] }> {
  const { targets, settings, procs, db, log } = opts;
  // Postgres backends of the bench database, for CPU accounting (the server may be shared).
  const monitor = new Client({ connectionString: db.url, application_name: 'murmur-bench-monitor' });
  await monitor.connect();
  try {
    const backends = async () =>
      (await monitor.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [db.name])).rows.map((r) => r.pid);
    const runs: Record<string, TargetRun[]> = Object.fromEntries(targets.map((t) => [t.name, []]));
    const failures: string[] = [];
    let warmupBad = 0;
    const width = Math.max(...targets.map((t) => t.name.length));
    for (let round = 1; round <= settings.rounds; round += 1) {
      for (const target of targets) {
        const load = (durationSeconds: number) =>
          procs.whileAlive(runLoad({ ...target.load, connections: settings.connections, pipelining: settings.pipelining, durationSeconds }));
        const warm = await load(settings.warmup_seconds);
        warmupBad += warm.non_200 + warm.errors + warm.mismatches;
        const before = cpuSnapshot(procs.pids(), await backends());
        const run = await load(settings.duration_seconds);
        const cpu = cpuPercent(before, cpuSnapshot(procs.pids(), await backends()));
        runs[target.name]!.push(withCpu(round, run, cpu));
        log(
          `round ${round}/${settings.rounds} ${target.name.padEnd(width)} ${run.requests_per_second.toFixed(0).padStart(6)} req/s  ` +
            `p50 ${run.latency_ms.p50.toFixed(2)} ms  p99 ${run.latency_ms.p99.toFixed(2)} ms  non-200 ${run.non_200}  mismatches ${run.mismatches}  errors ${run.errors}`,
        );
        if (run.non_200 + run.errors + run.mismatches > 0) {
          failures.push(
            `${target.name} round ${round}: ${run.non_200} non-200 responses, ${run.mismatches} unexpected bodies and ${run.errors} errors (${run.timeouts} timeouts)`,
          );
        }
      }
    }
    if (warmupBad > 0) failures.push(`${warmupBad} non-200 responses, unexpected bodies or errors during warm-up`);
    return { runs, failures };
  } finally {
    await monitor.end().catch(() => undefined);
  }
}

/** The most CPU (percent of one core) processes outside the benchmark used in any measured run. */
export function maxOtherCpu(runs: Record<string, TargetRun[]>): number {
  return Math.max(0, ...Object.values(runs).flat().map((r) => r.other_cpu_percent));
}
