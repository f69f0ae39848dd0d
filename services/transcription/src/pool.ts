/**
 * Bounded parallelism for recognition: one process-wide {@link Semaphore} (sized to the cores)
 * shared by every running transcription, so two long files never oversubscribe the CPU, and
 * {@link mapInOrder} to run a file's chunks through it with results in chunk order.
 */

/** A counting semaphore; waiters are served first come, first served. */
export class Semaphore {
  private available: number;
  private readonly waiters: Array<() => void> = [];

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new Error('semaphore size must be a positive integer');
    this.available = size;
  }

  /** Waits for a slot; the returned function gives it back (once). Rejects if `signal` aborts first. */
  async acquire(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.available > 0) {
      this.available--;
      return this.releaser();
    }
    await new Promise<void>((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const i = this.waiters.indexOf(grant);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(signal?.reason ?? new Error('aborted'));
      };
      this.waiters.push(grant);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    return this.releaser();
  }

  private releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.waiters.shift();
      if (next) next();
      else this.available++;
    };
  }
}

/**
 * Runs `fn` over `items` at most `limit` at a time, each under a slot of `semaphore`; results
 * keep the order of `items`. The first failure aborts the others (through the signal `fn`
 * gets) and is rethrown once every started call has settled, so nothing is left running.
 */
export async function mapInOrder<T, R>(
  items: readonly T[],
  opts: { limit: number; semaphore: Semaphore; signal: AbortSignal },
  fn: (item: T, index: number, signal: AbortSignal) => Promise<R>,
): Promise<R[]> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(opts.signal.reason);
  if (opts.signal.aborted) onAbort();
  else opts.signal.addEventListener('abort', onAbort, { once: true });
  const results = new Array<R>(items.length);
  let next = 0;
  let failure: { err: unknown } | undefined;
  const worker = async () => {
    while (!failure && next < items.length) {
      const index = next++;
      let release: (() => void) | undefined;
      try {
        release = await opts.semaphore.acquire(controller.signal);
        controller.signal.throwIfAborted();
        results[index] = await fn(items[index]!, index, controller.signal);
      } catch (err) {
        if (!failure) failure = { err };
        controller.abort(err);
      } finally {
        release?.();
      }
    }
  };
  try {
    const workers = Math.max(1, Math.min(opts.limit, items.length));
    await Promise.all(Array.from({ length: workers }, worker));
  } finally {
    opts.signal.removeEventListener('abort', onAbort);
  }
  if (failure) throw failure.err;
  return results;
}
