/**
 * The live benchmark's figures from what one client recorded (live-stream.ts): final latency per
 * utterance, the cadence of partials while someone speaks, and the recognizer's lag behind the
 * audio, whose growth over a stream says whether it kept real time. Pure functions of the
 * record, so they are checked on hand-made records (bench/test/live-metrics.test.ts).
 */
import { percentile } from './load';
import type { LiveMessage, PlacedUtterance, StreamRecord } from './live-stream';

/** A stream keeps real time when the recognizer's lag grows by at most this over the stream (first utterance → last). */
export const LAG_GROWTH_MAX_MS = 500;
/** A final belongs to an utterance when its words overlap the utterance's place, this much slack each side. */
const MATCH_SLACK_SECONDS = 0.3;

export interface Distribution {
  n: number;
  p50: number;
  p90: number;
  max: number;
}

const r1 = (x: number) => Math.round(x * 10) / 10;

/** Nearest-rank p50, p90 and max (ms, one decimal); all zero for no samples. */
export function distribution(xs: readonly number[]): Distribution {
  const sorted = [...xs].sort((a, b) => a - b);
  return { n: sorted.length, p50: r1(percentile(sorted, 0.5)), p90: r1(percentile(sorted, 0.9)), max: r1(sorted.at(-1) ?? 0) };
}

const median = (xs: readonly number[]) => percentile([...xs].sort((a, b) => a - b), 0.5);

/** When the audio at `seconds` of the stream was sent: the send time of the frame holding it (its last sample for a frame boundary). */
export function sentAt(record: Pick<StreamRecord, 'frameSentAt' | 'frameSeconds'>, seconds: number): number {
  const k = Math.ceil(seconds / record.frameSeconds - 1e-6) - 1;
  return record.frameSentAt[Math.min(record.frameSentAt.length - 1, Math.max(0, k))]!;
}

export interface UtteranceFigures {
  id: string;
  /** The final that made the utterance's last words stable arrived this long after its last audio was sent; undefined when no final covered it. */
  final_latency_ms?: number;
  /** The same final, from the moment the audio at its `utterance_end.at` was sent. */
  final_latency_from_utterance_end_ms?: number;
}

export interface StreamFigures {
  utterances: UtteranceFigures[];
  missing_finals: number;
  /** speech_started → first partial, then partial → partial, within each utterance the detector heard (until its final or utterance_end). */
  partial_gaps_ms: number[];
  /** speech_started → first partial only. */
  first_partial_ms: number[];
  partials: number;
  /** Per partial: its arrival − when the audio up to its `end` was sent (how far the recognizer is behind). */
  lag_ms: number[];
  /** Median lag of each utterance's partials, in order (−1 for an utterance without partials). */
  lag_by_utterance_ms: number[];
  /** Median lag of the last utterance's partials − that of the first's. */
  lag_growth_ms: number;
  /** {"type":"close"} sent → `closed` received: the last final flushed and the stream settled. */
  close_to_closed_ms: number;
  keeps_real_time: boolean;
  /** The finals' text in order (never logged: a WER is computed from it). */
  text: string;
  duration_seconds: number;
  credits_charged: number;
  seconds_sent: number;
}

const isType = (type: string) => (m: { message: LiveMessage }) => m.message.type === type;

/** The figures of one stream whose utterances lie at `utterances`. */
export function streamFigures(record: StreamRecord, utterances: readonly PlacedUtterance[]): StreamFigures {
  const messages = record.messages;
  const finals = messages.filter(isType('final'));

  const figures: UtteranceFigures[] = utterances.map((u) => {
    const covering = finals.filter((f) => f.message.start < u.end + MATCH_SLACK_SECONDS && f.message.end > u.start - MATCH_SLACK_SECONDS);
    const last = covering.at(-1);
    if (!last) return { id: u.id };
    const end = messages.slice(messages.indexOf(last)).find(isType('utterance_end'));
    return {
      id: u.id,
      final_latency_ms: r1(last.at - sentAt(record, u.end)),
      ...(end ? { final_latency_from_utterance_end_ms: r1(last.at - sentAt(record, Number(end.message.at))) } : {}),
    };
  });

  const gaps: number[] = [];
  const firsts: number[] = [];
  let previous: number | undefined;
  let awaitingFirst = false;
  for (const { at, message } of messages) {
    if (message.type === 'speech_started') {
      previous = at;
      awaitingFirst = true;
    } else if (message.type === 'partial' && previous !== undefined) {
      gaps.push(at - previous);
      if (awaitingFirst) firsts.push(at - previous);
      awaitingFirst = false;
      previous = at;
    } else if (message.type === 'final' || message.type === 'utterance_end') {
      previous = undefined;
    }
  }

  const partials = messages.filter(isType('partial'));
  const lagOf = (p: (typeof partials)[number]) => p.at - sentAt(record, Number(p.message.end));
  const lagsIn = (u: PlacedUtterance | undefined) => (u ? partials.filter((p) => p.message.end >= u.start && p.message.end <= u.end + 1).map(lagOf) : []);
  const firstLags = lagsIn(utterances[0]);
  const lastLags = lagsIn(utterances.at(-1));
  const growth = firstLags.length > 0 && lastLags.length > 0 ? median(lastLags) - median(firstLags) : 0;

  const closed = messages.find(isType('closed'));
  const missing = figures.filter((u) => u.final_latency_ms === undefined).length;
  return {
    utterances: figures,
    missing_finals: missing,
    partial_gaps_ms: gaps.map(r1),
    first_partial_ms: firsts.map(r1),
    partials: partials.length,
    lag_ms: partials.map((p) => r1(lagOf(p))),
    lag_by_utterance_ms: utterances.map((u) => {
      const lags = lagsIn(u);
      return lags.length > 0 ? r1(median(lags)) : -1;
    }),
    lag_growth_ms: r1(growth),
    close_to_closed_ms: closed ? r1(closed.at - record.closeSentAt) : -1,
    keeps_real_time: missing === 0 && growth <= LAG_GROWTH_MAX_MS && closed !== undefined && record.error === undefined,
    text: finals.map((f) => String(f.message.text)).join(' '),
    duration_seconds: Number(closed?.message.duration_seconds ?? 0),
    credits_charged: Number(closed?.message.credits_charged ?? 0),
    seconds_sent: record.bytesSent / 32_000,
  };
}
