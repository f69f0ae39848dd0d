/**
 * The request log's queue (gateway/src/request-log/queue.ts): bounded, never blocking a call,
 * batching, retrying a batch auth refused for a while and then dropping it — counted either way —
 * and flushing outside any caller's context (no user's identity rides on RecordRequests).
 */
import type { auth } from '@murmur/proto';
import { currentContext, metricsRegistry, runWithContext } from '@murmur/kit';
import { RequestLogQueue } from '@murmur/gateway';
import { RETRY_WINDOW_MS } from '../src/request-log/queue';
import { recordedLog } from './support/log-lines';

/** A counter's value in this process's registry (0 when the series does not exist yet). */
async function metricValue(name: string, labels: Record<string, string>): Promise<number> {
  const metric = await metricsRegistry().getSingleMetric(name)?.get();
  return metric?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value ?? 0;
}

const entry = (n: number) => ({ requestId: `req_${String(n).padStart(24, '0')}` }) as auth.RequestLogEntry;

describe('the request log queue', () => {
  afterEach(() => jest.useRealTimers());

  it('drops and counts what arrives while it is full, without waiting or throwing', async () => {
    const fullBefore = await metricValue('murmur_request_log_entries_total', { outcome: 'dropped_full' });
    const batches: string[][] = [];
    const q = new RequestLogQueue(async (b) => void batches.push(b.map((e) => e.requestId)), recordedLog('gateway').log, { capacity: 3, batchSize: 2 });
    for (let n = 1; n <= 5; n++) q.push(entry(n));
    expect(q.pending).toBe(3);
    expect(q.counts.droppedFull).toBe(2);
    expect(await metricValue('murmur_request_log_entries_total', { outcome: 'dropped_full' })).toBe(fullBefore + 2);
    await q.flush();
    expect(batches).toEqual([
      [entry(1).requestId, entry(2).requestId],
      [entry(3).requestId],
    ]);
    expect(q.counts.sent).toBe(3);
  });

  it('tries a refused batch again, in order, and sends it once auth takes it', async () => {
    let up = false;
    const sent: string[] = [];
    const q = new RequestLogQueue(
      async (b) => {
        if (!up) throw new Error('auth unavailable');
        sent.push(...b.map((e) => e.requestId));
      },
      recordedLog('gateway').log,
      { batchSize: 2 },
    );
    [1, 2, 3].forEach((n) => q.push(entry(n)));
    await q.flush();
    expect(sent).toEqual([]);
    expect(q.pending).toBe(3);
    q.push(entry(4));
    up = true;
    await q.flush();
    expect(sent).toEqual([1, 2, 3, 4].map((n) => entry(n).requestId));
    expect(q.counts).toEqual({ sent: 4, droppedFull: 0, droppedFailed: 0 });
  });

  it('drops a batch auth keeps refusing past the retry window, counts it and says so once', async () => {
    const lines = recordedLog('gateway', 'warn');
    let now = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    const q = new RequestLogQueue(async () => Promise.reject(new Error('auth unavailable')), lines.log, { batchSize: 10 });
    [1, 2].forEach((n) => q.push(entry(n)));
    await q.flush();
    now += RETRY_WINDOW_MS - 1;
    await q.flush();
    expect(q.counts.droppedFailed).toBe(0);
    now += 1;
    await q.flush();
    expect(q.counts.droppedFailed).toBe(2);
    expect(q.pending).toBe(0);
    expect(lines.lines.filter((l) => l.msg === 'request log entries lost')).toHaveLength(1);
    jest.restoreAllMocks();
  });

  it('flushes on its timer outside the context of the calls that queued the entries', async () => {
    jest.useFakeTimers();
    const contexts: unknown[] = [];
    const q = new RequestLogQueue(async () => void contexts.push(currentContext()), recordedLog('gateway').log, { flushMs: 100 }).start();
    runWithContext({ requestId: 'req_aaaaaaaaaaaaaaaaaaaaaaaa', principal: { userId: 'usr_x', keyId: 'key_y', scopes: [] } }, () => q.push(entry(1)));
    await jest.advanceTimersByTimeAsync(100);
    expect(contexts).toEqual([undefined]);
    await q.stop();
  });

  it('sends what is left when it stops', async () => {
    const sent: string[] = [];
    const q = new RequestLogQueue(async (b) => void sent.push(...b.map((e) => e.requestId)), recordedLog('gateway').log).start();
    q.push(entry(7));
    await q.stop();
    expect(sent).toEqual([entry(7).requestId]);
  });
});
