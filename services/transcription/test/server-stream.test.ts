import { MurmurError } from '@murmur/contract';
import { readUntil } from '../src/server';

/** An async iterable the test feeds by hand; it never ends unless told to. */
function manualSource<T>() {
  const queue: T[] = [];
  let wake: (() => void) | undefined;
  let ended = false;
  return {
    push(v: T) {
      queue.push(v);
      wake?.();
    },
    end() {
      ended = true;
      wake?.();
    },
    async *[Symbol.asyncIterator]() {
      for (;;) {
        if (queue.length) yield queue.shift()!;
        else if (ended) return;
        else await new Promise<void>((r) => (wake = r));
      }
    },
  };
}

describe('readUntil', () => {
  afterEach(() => jest.useRealTimers());

  it('passes every message through until the source ends', async () => {
    const source = manualSource<number>();
    [1, 2, 3].forEach((n) => source.push(n));
    source.end();
    const got: number[] = [];
    for await (const n of readUntil(source, new AbortController().signal)) got.push(n);
    expect(got).toEqual([1, 2, 3]);
  });

  it('stops a source that never ends when the signal aborts', async () => {
    const source = manualSource<number>();
    const controller = new AbortController();
    source.push(1);
    const got: number[] = [];
    const reading = (async () => {
      for await (const n of readUntil(source, controller.signal)) {
        got.push(n);
        controller.abort(new Error('client went away'));
      }
    })();
    await expect(reading).rejects.toThrow('client went away');
    expect(got).toEqual([1]);
  });

  it('abandons an upload that sends nothing for the idle limit', async () => {
    jest.useFakeTimers();
    const source = manualSource<number>();
    source.push(1);
    const it = readUntil(source, new AbortController().signal, 60_000)[Symbol.asyncIterator]();
    expect(await it.next()).toEqual({ done: false, value: 1 });
    const stalled = it.next();
    stalled.catch(() => undefined);
    await jest.advanceTimersByTimeAsync(59_999);
    source.push(2); // a message just in time resets the clock
    expect(await stalled).toEqual({ done: false, value: 2 });
    const next = it.next();
    next.catch(() => undefined);
    await jest.advanceTimersByTimeAsync(60_000);
    const err = await next.then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(MurmurError);
    expect((err as MurmurError).code).toBe('invalid_request');
    expect((err as MurmurError).message).toMatch(/No audio arrived for 60 s/);
  });
});
