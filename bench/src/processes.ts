/**
 * The processes a benchmark runs: the real Murmur services under the launcher's Supervisor,
 * plus plain children (the baseline), with their output prefixed, a crash turned into an error
 * instead of a silent restart, per-process CPU accounting from /proc, and one stop for all.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import * as readline from 'node:readline';
import { Supervisor, type ChildSpec } from '@murmur/launcher';

/** The last lines every child printed, for the error message when one dies. */
const TAIL_LINES = 40;

export class ProcessSet {
  private readonly supervisor: Supervisor;
  private readonly supervisedPids = new Map<string, number>();
  private readonly plain = new Map<string, ChildProcess>();
  private readonly tail: string[] = [];
  private stopped = false;

  constructor(
    specs: ChildSpec[],
    private readonly log: (line: string) => void,
  ) {
    this.supervisor = new Supervisor(specs, (line) => this.line(line));
    process.once('SIGINT', this.onSignal);
    process.once('SIGTERM', this.onSignal);
  }

  /** Ctrl-C during a benchmark still stops every child before the bench exits. */
  private readonly onSignal = (signal: NodeJS.Signals) => {
    this.log(`${signal}: stopping every process…`);
    void this.stopAll().finally(() => process.exit(130));
  };

  /** Starts a service under the supervisor. */
  start(name: string): void {
    this.supervisor.start(name);
    const pid = this.supervisor.pid(name);
    if (pid === undefined) throw new Error(`${name} did not start`);
    this.supervisedPids.set(name, pid);
  }

  /** Starts a plain child that is never restarted (its exit is a failure of the run). */
  spawnPlain(spec: ChildSpec): void {
    const proc = spawn(spec.command, spec.args, { env: spec.env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.plain.set(spec.name, proc);
    for (const stream of [proc.stdout, proc.stderr]) {
      readline.createInterface({ input: stream }).on('line', (l) => this.line(`[${spec.name}] ${l}`));
    }
  }

  /** Pid of every running process, by name. */
  pids(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const name of this.supervisedPids.keys()) {
      const pid = this.supervisor.pid(name);
      if (pid !== undefined) out[name] = pid;
    }
    for (const [name, proc] of this.plain) if (proc.pid !== undefined && proc.exitCode === null && proc.signalCode === null) out[name] = proc.pid;
    return out;
  }

  /** Throws when any process has exited (or been restarted by the supervisor) since it started. */
  assertAlive(): void {
    const dead: string[] = [];
    for (const [name, pid] of this.supervisedPids) if (this.supervisor.pid(name) !== pid) dead.push(name);
    for (const [name, proc] of this.plain) if (proc.exitCode !== null || proc.signalCode !== null) dead.push(name);
    if (dead.length > 0) {
      throw new Error(`${dead.join(', ')} exited during the benchmark. Last output:\n${this.tail.join('\n') || '(none)'}`);
    }
  }

  /** Resolves with `work`, or rejects as soon as any process dies while it runs. */
  async whileAlive<T>(work: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const watch = new Promise<never>((_, reject) => {
      timer = setInterval(() => {
        try {
          this.assertAlive();
        } catch (err) {
          reject(err);
        }
      }, 250);
    });
    try {
      return await Promise.race([work, watch]);
    } finally {
      clearInterval(timer);
    }
  }

  /** SIGTERM to everything (SIGKILL after `graceMs`); safe to call twice. */
  async stopAll(graceMs = 5_000): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    process.removeListener('SIGINT', this.onSignal);
    process.removeListener('SIGTERM', this.onSignal);
    const plain = [...this.plain.values()].map(
      (proc) =>
        new Promise<void>((resolve) => {
          if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
          const kill = setTimeout(() => proc.kill('SIGKILL'), graceMs);
          proc.once('exit', () => {
            clearTimeout(kill);
            resolve();
          });
          proc.kill('SIGTERM');
        }),
    );
    await Promise.all([this.supervisor.stopAll(graceMs), ...plain]);
  }

  private line(line: string): void {
    this.tail.push(line);
    if (this.tail.length > TAIL_LINES) this.tail.shift();
    this.log(`  ${line}`);
  }
}

// ---- CPU accounting ------------------------------------------------------------------------

let clockTicks: number | undefined;

function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/**
 * utime + stime of a process in seconds, from /proc (undefined when unavailable); with
 * `withChildren`, plus cutime + cstime: the CPU of its children that have exited and been
 * reaped (ffmpeg and engine processes of a finished transcription).
 */
export function cpuSecondsOf(pid: number | 'self', withChildren = false): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the ")" that closes the command name; utime, stime, cutime, cstime are fields 14–17.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const own = Number(fields[11]) + Number(fields[12]);
    const children = withChildren ? Number(fields[13]) + Number(fields[14]) : 0;
    return (own + children) / ticksPerSecond();
  } catch {
    return undefined;
  }
}

/**
 * Busy and stolen CPU seconds of the whole machine (all cores, from /proc/stat): busy minus
 * everything above shows what else ran on the machine during a measurement.
 */
export function machineCpuSeconds(): Record<string, number> {
  try {
    const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    // cpu user nice system idle iowait irq softirq steal …
    const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1, 9).map(Number) as number[];
    const t = ticksPerSecond();
    return { machine_busy: (user! + nice! + system! + irq! + softirq!) / t, machine_steal: (steal ?? 0) / t, machine_idle: (idle! + iowait!) / t };
  } catch {
    return {};
  }
}

export interface CpuSnapshot {
  at: number;
  seconds: Record<string, number>;
  /** CPU seconds of each Postgres backend serving the benchmark, by pid. */
  postgres: Map<number, number>;
}

/**
 * CPU seconds used so far by each named process, by this process (the load generator), by the
 * given Postgres backends (those of the bench database: other clients of a shared server are
 * not counted) and by the whole machine.
 */
export function cpuSnapshot(pids: Record<string, number>, postgresPids: readonly number[] = []): CpuSnapshot {
  const seconds: Record<string, number> = {};
  for (const [name, pid] of Object.entries(pids)) {
    const s = cpuSecondsOf(pid);
    if (s !== undefined) seconds[name] = s;
  }
  const self = process.cpuUsage();
  seconds.load_generator = (self.user + self.system) / 1e6;
  const postgres = new Map<number, number>();
  for (const pid of postgresPids) {
    const s = cpuSecondsOf(pid);
    if (s !== undefined) postgres.set(pid, s);
  }
  Object.assign(seconds, machineCpuSeconds());
  return { at: Date.now(), seconds, postgres };
}

/**
 * Percent of one core each process used between two snapshots (100 = one full core).
 * `postgres` sums the backends of the later snapshot, counting one that started in between
 * from zero; a backend that ended in between is lost, which the pools' long-lived connections
 * make rare.
 */
export function cpuPercent(before: CpuSnapshot, after: CpuSnapshot): Record<string, number> {
  const wall = (after.at - before.at) / 1000;
  const out: Record<string, number> = {};
  if (wall <= 0) return out;
  const percent = (seconds: number) => Math.round((seconds / wall) * 1000) / 10;
  for (const [name, s] of Object.entries(after.seconds)) {
    const b = before.seconds[name];
    if (b !== undefined) out[name] = percent(s - b);
  }
  if (after.postgres.size > 0) {
    let used = 0;
    for (const [pid, s] of after.postgres) used += s - (before.postgres.get(pid) ?? 0);
    out.postgres = percent(used);
  }
  return out;
}

/**
 * CPU seconds all of our processes used (the services and the bench process, each with its
 * reaped children: ffmpeg and pocketsphinx), and the machine's busy seconds, for one run.
 */
export function cpuMeter(pids: Record<string, number>) {
  const read = () => {
    let ours = cpuSecondsOf('self', true) ?? 0;
    for (const pid of Object.values(pids)) ours += cpuSecondsOf(pid, true) ?? 0;
    return { ours, busy: machineCpuSeconds().machine_busy ?? 0, at: performance.now() };
  };
  return async <T>(work: () => Promise<T>): Promise<{ value: T; cpu_seconds: number; other_cpu_percent: number }> => {
    const before = read();
    const value = await work();
    const after = read();
    const wall = (after.at - before.at) / 1000;
    const ours = after.ours - before.ours;
    const other = wall > 0 ? Math.max(0, ((after.busy - before.busy - ours) / wall) * 100) : 0;
    return { value, cpu_seconds: Math.round(ours * 1000) / 1000, other_cpu_percent: Math.round(other * 10) / 10 };
  };
}
