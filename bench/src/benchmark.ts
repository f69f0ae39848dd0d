/** What every benchmark provides to `npm run bench`, and helpers they share. */
import * as net from 'node:net';
import * as os from 'node:os';

/** What a benchmark hands back: the JSON written to bench/results/<name>.json and a short table. */
export interface BenchmarkReport {
  /** Written as-is; includes `targets_met`. */
  result: Record<string, unknown>;
  table: { headers: string[]; rows: string[][] };
  /** Lines printed under the table (targets, caveats). */
  notes: string[];
  /**
   * Reasons the run is invalid (failed or non-200 responses, a crashed process): the JSON is
   * still written, and `npm run bench` exits non-zero. A missed target is NOT a failure.
   */
  failures: string[];
}

export interface Benchmark {
  name: string;
  description: string;
  run(log: (line: string) => void): Promise<BenchmarkReport>;
}

/**
 * `count` distinct free TCP ports on 127.0.0.1, found by binding port 0. All sockets are held
 * until every port is known, so the same port is never handed out twice.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i += 1) {
      const server = net.createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve());
      });
      ports.push((server.address() as net.AddressInfo).port);
    }
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}

/** The machine a result was measured on: numbers only mean something next to it. */
export function machineInfo() {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpu_model: cpus[0]?.model.trim() ?? 'unknown',
    total_memory_gib: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    load_average_at_start: os.loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

/** A database URL with its password masked, for messages and results. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '<unparseable url>';
  }
}

/**
 * Calls `fn` on every item, at most `concurrency` at a time, in order of the items; answers the
 * results in the items' order. The first failure rejects and starts no further call.
 */
export async function mapConcurrently<T, R>(items: readonly T[], concurrency: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      try {
        out[i] = await fn(items[i]!, i);
      } catch (err) {
        next = items.length;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, worker));
  return out;
}
