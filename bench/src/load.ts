/**
 * One load run with autocannon (programmatic). Requests per second come from autocannon's
 * per-second counts; latency percentiles are computed here from every 2xx response time
 * autocannon reports, because its own histogram rounds to whole milliseconds, which is too
 * coarse for a route answering in 1–5 ms.
 */
import autocannon from 'autocannon';

/**
 * Concurrent connections of a load run: 10 (what the read-path and mcp targets are measured at),
 * or BENCH_CONNECTIONS to see how the tail moves with the load (p99 at 1 connection is the path's
 * own spread; at 10 on two cores, mostly queueing behind other processes).
 */
export function loadConnections(): number {
  const n = Number(process.env.BENCH_CONNECTIONS ?? 10);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new Error(`BENCH_CONNECTIONS must be a whole number from 1 to 1000, not ${process.env.BENCH_CONNECTIONS}`);
  return n;
}

export interface LoadOptions {
  url: string;
  headers: Record<string, string>;
  connections: number;
  pipelining: number;
  durationSeconds: number;
  /** Default GET. */
  method?: 'GET' | 'POST';
  /** Request body, sent as-is with every request (set content-type in `headers`). */
  body?: string;
  /**
   * Checks every response body; a false answer counts in `mismatches`, which a benchmark treats
   * like a non-200 (e.g. an MCP result with isError). Keep it cheap: it runs in the load generator.
   */
  verifyBody?: (body: string) => boolean;
}

export interface LoadRun {
  /** Mean of autocannon's per-second request counts. */
  requests_per_second: number;
  latency_ms: { p50: number; p90: number; p99: number; mean: number; max: number };
  requests: number;
  responses_2xx: number;
  non_2xx: number;
  /** Responses whose status was anything but 200 (the benchmarked route only ever answers 200). */
  non_200: number;
  /** Responses whose body failed `verifyBody` (0 without one). */
  mismatches: number;
  /** Connection errors, timeouts included. */
  errors: number;
  timeouts: number;
}

const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;

/** Nearest-rank percentile of ascending `sorted` (empty → 0). */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length))) - 1]!;
}

export function runLoad(opts: LoadOptions): Promise<LoadRun> {
  const times: number[] = [];
  let non200 = 0;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: opts.url,
        headers: opts.headers,
        connections: opts.connections,
        pipelining: opts.pipelining,
        duration: opts.durationSeconds,
        ...(opts.method ? { method: opts.method } : {}),
        ...(opts.body !== undefined ? { body: opts.body } : {}),
        ...(opts.verifyBody ? { verifyBody: (body: string | Buffer | undefined) => opts.verifyBody!(String(body ?? '')) } : {}),
      },
      (err: unknown, result: autocannon.Result) => {
        if (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
          return;
        }
        times.sort((a, b) => a - b);
        const sum = times.reduce((a, b) => a + b, 0);
        resolve({
          requests_per_second: round(result.requests.average, 1),
          latency_ms: {
            p50: round(percentile(times, 0.5)),
            p90: round(percentile(times, 0.9)),
            p99: round(percentile(times, 0.99)),
            mean: round(times.length ? sum / times.length : 0),
            max: round(times[times.length - 1] ?? 0),
          },
          requests: result.requests.total,
          responses_2xx: result['2xx'],
          non_2xx: result.non2xx,
          non_200: non200,
          mismatches: result.mismatches ?? 0,
          errors: result.errors,
          timeouts: result.timeouts,
        });
      },
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) times.push(responseTime);
      if (statusCode !== 200) non200 += 1;
    });
  });
}
