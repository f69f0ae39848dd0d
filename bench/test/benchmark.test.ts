/** bench/src/benchmark.ts's shared helpers. */
import { mapConcurrently } from '../src/benchmark';

describe('mapConcurrently', () => {
  it('answers in the items\' order with at most `concurrency` calls at once', async () => {
    let running = 0;
    let most = 0;
    const out = await mapConcurrently([30, 10, 20, 0, 5], 2, async (ms, i) => {
      running += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setImmediate(resolve));
      for (let k = 0; k < ms; k++) await Promise.resolve();
      running -= 1;
      return `${i}:${ms}`;
    });
    expect(out).toEqual(['0:30', '1:10', '2:20', '3:0', '4:5']);
    expect(most).toBe(2);
  });

  it('rejects with the first failure and starts no further call', async () => {
    const started: number[] = [];
    const run = mapConcurrently([1, 2, 3, 4, 5], 1, async (x) => {
      started.push(x);
      if (x === 2) throw new Error('two failed');
      return x;
    });
    await expect(run).rejects.toThrow('two failed');
    expect(started).toEqual([1, 2]);
  });
});
