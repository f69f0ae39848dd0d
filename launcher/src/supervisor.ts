/**
 * Runs child processes with prefixed output, restarts a crashed child with backoff, and stops
 * them all (SIGTERM, then SIGKILL after a grace period) on request.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as readline from 'node:readline';
import { restartDelay } from './backoff';

export interface ChildSpec {
  name: string;
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

interface Running {
  spec: ChildSpec;
  proc?: ChildProcess;
  startedAt: number;
  attempt: number;
  timer?: NodeJS.Timeout;
}

export class Supervisor {
  private readonly children = new Map<string, Running>();
  private stopping = false;
  private readonly width: number;

  constructor(private readonly specs: ChildSpec[], private readonly out: (line: string) => void = (l) => process.stdout.write(`${l}\n`)) {
    this.width = Math.max(...specs.map((s) => s.name.length));
  }

  startAll(): void {
    for (const spec of this.specs) this.start(spec.name);
  }

  start(name: string): void {
    const spec = this.specs.find((s) => s.name === name);
    if (!spec) throw new Error(`unknown child ${name}`);
    const running = this.children.get(name) ?? { spec, startedAt: 0, attempt: 0 };
    this.children.set(name, running);
    const proc = spawn(spec.command, spec.args, { env: spec.env, stdio: ['ignore', 'pipe', 'pipe'] });
    running.proc = proc;
    running.startedAt = Date.now();
    const prefix = `[${spec.name.padEnd(this.width)}]`;
    for (const stream of [proc.stdout, proc.stderr]) {
      readline.createInterface({ input: stream }).on('line', (line) => this.out(`${prefix} ${line}`));
    }
    proc.on('exit', (code, signal) => {
      running.proc = undefined;
      if (this.stopping) return;
      const { delayMs, nextAttempt } = restartDelay(running.attempt, Date.now() - running.startedAt);
      running.attempt = nextAttempt;
      this.out(`${prefix} exited (${signal ?? `code ${code}`}); restarting in ${delayMs} ms`);
      running.timer = setTimeout(() => this.start(name), delayMs);
    });
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
