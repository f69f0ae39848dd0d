import { mapInOrder, Semaphore } from '../src/pool';

/** A promise the test settles by hand. */
function deferred<T = void>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('Semaphore', () => {
  it('hands out at most `size` slots and serves waiters in order', async () => {
    const s = new Semaphore(2);
    const a = await s.acquire();
    const b = await s.acquire();
    const order: string[] = [];
    const c = s.acquire().then((r) => (order.push('c'), r));
    const d = s.acquire().then((r) => (order.push('d'), r));
    await Promise.resolve();
    expect(order).toEqual([]);
    a();
    a(); // a second call of the same release gives nothing back twice
    (await c)();
    b();
    await d;
    expect(order).toEqual(['c', 'd']);
  });

  it('drops a waiter whose signal aborts', async () => {
    const s = new Semaphore(1);
    const held = await s.acquire();
    const controller = new AbortController();
    const waiting = s.acquire(controller.signal);
    controller.abort(new Error('gone'));
    await expect(waiting).rejects.toThrow('gone');
    held();
    const next = await s.acquire();
    next();
  });
});

describe('mapInOrder', () => {
  it('keeps the order of the items and never runs more than the limit', async () => {
    let running = 0;
    let peak = 0;
    const gates = Array.from({ length: 6 }, () => deferred());
    const result = mapInOrder([0, 1, 2, 3, 4, 5], { limit: 2, semaphore: new Semaphore(8), signal: new AbortController().signal }, async (n, i) => {
      running++;
      peak = Math.max(peak, running);
      await gates[i]!.promise;
      running--;
      return n * 10;
    });
    for (const i of [1, 0, 3, 2, 5, 4]) {
      gates[i]!.resolve();
      await new Promise((r) => setImmediate(r));
    }
    expect(await result).toEqual([0, 10, 20, 30, 40, 50]);
    expect(peak).toBe(2);
  });

  it('shares the semaphore across calls', async () => {
    const semaphore = new Semaphore(1);
    let running = 0;
    let peak = 0;
    const work = async () => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setImmediate(r));
      running--;
    };
    const signal = new AbortController().signal;
    await Promise.all([mapInOrder([1, 2, 3], { limit: 3, semaphore, signal }, work), mapInOrder([1, 2, 3], { limit: 3, semaphore, signal }, work)]);
    expect(peak).toBe(1);
  });

  it('aborts the others on the first failure and rethrows it once they settled', async () => {
    const seen: string[] = [];
    const failing = mapInOrder([0, 1, 2, 3], { limit: 2, semaphore: new Semaphore(2), signal: new AbortController().signal }, async (n, _i, signal) => {
      if (n === 0) {
        await new Promise((r) => setImmediate(r));
        throw new Error('chunk 0 failed');
      }
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      seen.push(`aborted ${n}`);
      throw new Error(`chunk ${n} aborted`);
    });
    await expect(failing).rejects.toThrow('chunk 0 failed');
    expect(seen).toEqual(['aborted 1']);
  });

  it('stops when the caller aborts', async () => {
    const controller = new AbortController();
    const started: number[] = [];
    const run = mapInOrder([0, 1, 2], { limit: 1, semaphore: new Semaphore(1), signal: controller.signal }, async (n, _i, signal) => {
      started.push(n);
      controller.abort(new Error('client went away'));
      signal.throwIfAborted();
      return n;
    });
    await expect(run).rejects.toThrow('client went away');
    expect(started).toEqual([0]);
  });
});
