/**
 * The live benchmark's figures (bench/src/live-metrics.ts) on hand-made client records: which
 * final closes an utterance and how late it came, which gaps count as partial cadence, and when
 * a recognizer falling behind makes a stream miss real time.
 */
import { distribution, sentAt, streamFigures } from '../src/live-metrics';
import type { LiveMessage, PlacedUtterance, StreamRecord } from '../src/live-stream';

/** Frame k (100 ms of audio) left at 1000 + 100·k ms; 8 s of audio. */
const frames = Array.from({ length: 80 }, (_, k) => 1000 + 100 * k);
const utterances: PlacedUtterance[] = [
  { id: 'a', text: 'one two', start: 1, end: 3 },
  { id: 'b', text: 'three four', start: 4.5, end: 6 },
];

function record(messages: Array<[number, LiveMessage]>): StreamRecord {
  return {
    connectAt: 0,
    openAt: 900,
    frameSeconds: 0.1,
    frameSentAt: frames,
    maxSendLateMs: 0,
    messages: messages.map(([at, message]) => ({ at, message })),
    closeSentAt: 9000,
    closedAt: 9300,
    closeCode: 1000,
    closeReason: 'closed',
    bytesSent: 8 * 32_000,
  };
}

/** One utterance as the server tells it: speech_started, partials every `every` ms lagging `lag` ms behind the audio, final `finalAfter` ms after its last audio left. */
function spoken(u: PlacedUtterance, o: { lag: number; every: number; finalAfter: number; lagGrowth?: number }): Array<[number, LiveMessage]> {
  const out: Array<[number, LiveMessage]> = [[sentAt({ frameSentAt: frames, frameSeconds: 0.1 }, u.start) + o.lag, { type: 'speech_started', at: u.start }]];
  for (let t = u.start + o.every / 1000; t <= u.end + 1e-9; t += o.every / 1000) {
    const lag = o.lag + (o.lagGrowth ?? 0) * ((t - u.start) / (u.end - u.start));
    out.push([sentAt({ frameSentAt: frames, frameSeconds: 0.1 }, t) + lag, { type: 'partial', text: 'x', start: u.start, end: t }]);
  }
  const finalAt = sentAt({ frameSentAt: frames, frameSeconds: 0.1 }, u.end) + o.finalAfter;
  out.push([finalAt, { type: 'final', text: u.text, start: u.start + 0.1, end: u.end - 0.1, words: [] }]);
  out.push([finalAt + 1, { type: 'utterance_end', at: u.end - 0.1 }]);
  return out;
}

const closed: [number, LiveMessage] = [9200, { type: 'closed', duration_seconds: 8, credits_charged: 1, recording_id: null }];

describe('live benchmark figures', () => {
  it('maps an audio time to the send time of the frame that holds it', () => {
    const r = { frameSentAt: frames, frameSeconds: 0.1 };
    expect(sentAt(r, 0)).toBe(1000);
    expect(sentAt(r, 0.05)).toBe(1000);
    expect(sentAt(r, 0.1)).toBe(1000);
    expect(sentAt(r, 0.1001)).toBe(1100);
    expect(sentAt(r, 3)).toBe(1000 + 29 * 100);
    expect(sentAt(r, 99)).toBe(frames.at(-1));
  });

  it('measures each final from its utterance’s last audio sent, and the cadence of partials while speech is heard', () => {
    const f = streamFigures(record([[900, { type: 'open' }], ...spoken(utterances[0]!, { lag: 50, every: 250, finalAfter: 700 }), ...spoken(utterances[1]!, { lag: 50, every: 250, finalAfter: 800 }), closed]), utterances);
    expect(f.utterances.map((u) => u.final_latency_ms)).toEqual([700, 800]);
    // utterance_end.at is 0.1 s earlier: one frame earlier on the send clock.
    expect(f.utterances.map((u) => u.final_latency_from_utterance_end_ms)).toEqual([800, 900]);
    // 8 partials in a and 6 in b, every 250 ms of audio (frames are 100 ms, so 200 or 300 ms apart on the send clock); the last partial → final gap is not cadence.
    expect(f.partials).toBe(14);
    expect(f.partial_gaps_ms).toHaveLength(14);
    expect(Math.max(...f.partial_gaps_ms)).toBeLessThanOrEqual(300);
    expect(f.first_partial_ms).toEqual([300, 300]);
    expect(f.lag_growth_ms).toBe(0);
    expect(f.keeps_real_time).toBe(true);
    expect(f.close_to_closed_ms).toBe(200);
    expect(f.text).toBe('one two three four');
    expect(f.credits_charged).toBe(1);
  });

  it('a recognizer falling behind, or an utterance without a final, misses real time', () => {
    const behind = streamFigures(record([...spoken(utterances[0]!, { lag: 50, every: 250, finalAfter: 700 }), ...spoken(utterances[1]!, { lag: 400, every: 250, finalAfter: 1500, lagGrowth: 600 }), closed]), utterances);
    expect(behind.lag_growth_ms).toBeGreaterThan(500);
    expect(behind.keeps_real_time).toBe(false);

    const missing = streamFigures(record([...spoken(utterances[0]!, { lag: 50, every: 250, finalAfter: 700 }), closed]), utterances);
    expect(missing.missing_finals).toBe(1);
    expect(missing.utterances[1]!.final_latency_ms).toBeUndefined();
    expect(missing.keeps_real_time).toBe(false);
  });

  it('summarises samples by nearest rank', () => {
    expect(distribution([5, 1, 4, 2, 3])).toEqual({ n: 5, p50: 3, p90: 5, max: 5 });
    expect(distribution([])).toEqual({ n: 0, p50: 0, p90: 0, max: 0 });
  });
});
