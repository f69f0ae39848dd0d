/**
 * Runs child processes with prefixed output, restarts a crashed child with backoff, and stops
 * them all (SIGTERM, then SIGKILL after a grace period) on request. A child that cannot bind its
 * port (exit EXIT_CANNOT_BIND) or crashes too often in a row is not restarted: `onGiveUp` hears
 * of it, and the launcher stops instead of running a system with a hole in it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as readline from 'node:readline';
import type { Writable } from 'node:stream';
import { EXIT_CANNOT_BIND } from '@murmur/kit';
import { restartDelay } from './backoff';

export interface ChildSpec {
  name: string;
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  /**
   * Written to the child's descriptor 3 at each start, then closed: how it is handed its workload
   * key without a path or an environment variable (launcher child-identity.ts).
   */
  key?: () => Buffer;
}

interface Running {
  spec: ChildSpec;
  proc?: ChildProcess;
  startedAt: number;
  attempt: number;
  timer?: NodeJS.Timeout;
}

export interface SupervisorOptions {
  /** A child will not be restarted; `cannotBind` when it could not listen on its port. */
  onGiveUp?: (name: string, why: { cannotBind: boolean }) => void;
  /** The restart policy (tests shorten it). */
  restartDelay?: typeof restartDelay;
}

export class Supervisor {
  private readonly children = new Map<string, Running>();
  private stopping = false;
  private readonly width: number;

  constructor(
    private readonly specs: ChildSpec[],
    private readonly out: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
    private readonly options: SupervisorOptions = {},
  ) {
    this.width = Math.max(...specs.map((s) => s.name.length));
  }

  startAll(): void {
    for (const spec of this.specs) this.start(spec.name);
  }

  /** Starts (or, after stopAll, starts again) the child `name`. */
  start(name: string): void {
    const spec = this.specs.find((s) => s.name === name);
    if (!spec) throw new Error(`unknown child ${name}`);
    this.stopping = false;
    const running = this.children.get(name) ?? { spec, startedAt: 0, attempt: 0 };
    this.children.set(name, running);
    const proc = spawn(spec.command, spec.args, { env: spec.env, stdio: ['ignore', 'pipe', 'pipe', ...(spec.key ? (['pipe'] as const) : [])] });
    running.proc = proc;
    running.startedAt = Date.now();
    const prefix = `[${spec.name.padEnd(this.width)}]`;
    if (spec.key) this.handOver(proc, spec.key, prefix);
    for (const stream of [proc.stdout!, proc.stderr!]) {
      readline.createInterface({ input: stream }).on('line', (line) => this.out(`${prefix} ${line}`));
    }
    proc.on('exit', (code, signal) => {
      running.proc = undefined;
      if (this.stopping) return;
      const how = signal ?? `code ${code}`;
      if (code === EXIT_CANNOT_BIND) {
        this.out(`${prefix} exited (${how}): it cannot listen on its port; not restarting`);
        this.options.onGiveUp?.(name, { cannotBind: true });
        return;
      }
      const { delayMs, nextAttempt, giveUp } = (this.options.restartDelay ?? restartDelay)(running.attempt, Date.now() - running.startedAt);
      running.attempt = nextAttempt;
      if (giveUp) {
        this.out(`${prefix} exited (${how}) after ${nextAttempt} crashes in a row; not restarting`);
        this.options.onGiveUp?.(name, { cannotBind: false });
        return;
      }
      this.out(`${prefix} exited (${how}); restarting in ${delayMs} ms`);
      running.timer = setTimeout(() => this.start(name), delayMs);
    });
  }

  /** Writes the key to the child's descriptor 3 and closes it; a key that cannot be read leaves it empty (the child says so and exits). */
  private handOver(proc: ChildProcess, key: () => Buffer, prefix: string): void {
    const channel = proc.stdio[3] as Writable;
    channel.on('error', () => undefined); // a child that exits before reading: it is restarted or given up like any other
    let bytes: Buffer;
    try {
      bytes = key();
    } catch (err) {
      this.out(`${prefix} its workload key cannot be read: ${(err as Error).message}`);
      bytes = Buffer.alloc(0);
    }
    channel.end(bytes);
  }

  /** Pid of a running child (tests and diagnostics). */
  pid(name: string): number | undefined {
    return this.children.get(name)?.proc?.pid;
  }

  async stopAll(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    const waits = [...this.children.values()].map((r) => {
      if (r.timer) clearTimeout(r.timer);
      const proc = r.proc;
      if (!proc || proc.exitCode !== null) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const kill = setTimeout(() => proc.kill('SIGKILL'), graceMs);
        proc.once('exit', () => {
          clearTimeout(kill);
          resolve();
        });
        proc.kill('SIGTERM');
      });
    });
    await Promise.all(waits);
  }
}
