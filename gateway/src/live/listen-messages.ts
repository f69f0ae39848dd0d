/**
 * The JSON a live stream's client reads (docs/live.md, "Messages"): the transcription service's
 * events in the public shape, and the client's control messages parsed. The AsyncAPI document
 * describes these same shapes.
 */
import { LIVE_CONTROL_TYPES, LIVE_IDLE_SECONDS, LIVE_MAX_FRAME_BYTES, LIVE_MAX_SECONDS, LIVE_MAX_SPEED, MAX_LIVE_STREAMS_PER_USER, MurmurError, type LiveControlType, type LiveOptions } from '@murmur/contract';
import type { transcription } from '@murmur/proto';

type Words = NonNullable<transcription.FinalTranscript['words']>;

/** A final's words as the public rows: `{text, start, end, confidence, speaker}` (seconds). */
function wordRows(words: Words | undefined): Array<{ text: string; start: number; end: number; confidence: number | null; speaker: string | null }> {
  if (!words) return [];
  return words.text.map((text, i) => ({
    text,
    start: (words.startMs[i] ?? 0) / 1000,
    end: (words.endMs[i] ?? 0) / 1000,
    confidence: words.confidence.length > 0 ? Math.round((words.confidence[i] ?? 0) * 1000) / 1000 : null,
    speaker: null,
  }));
}

/** The limits an `open` message tells its client. */
export const LIVE_LIMITS = {
  max_frame_bytes: LIVE_MAX_FRAME_BYTES,
  idle_seconds: LIVE_IDLE_SECONDS,
  max_speed: LIVE_MAX_SPEED,
  max_seconds: LIVE_MAX_SECONDS,
  max_streams: MAX_LIVE_STREAMS_PER_USER,
} as const;

/** One service event as the client's JSON. */
export function clientMessageOf(event: transcription.StreamTranscriptionResponse['event'], options: LiveOptions): Record<string, unknown> | undefined {
  switch (event?.$case) {
    case 'opened':
      return { type: 'open', id: event.value.id, model: event.value.model, encoding: options.encoding, sample_rate: options.encoding === 'linear16' ? options.sampleRate : null, limits: LIVE_LIMITS };
    case 'speechStarted':
      return { type: 'speech_started', at: event.value.atSeconds };
    case 'partial':
      return { type: 'partial', text: event.value.text, start: event.value.startSeconds, end: event.value.endSeconds };
    case 'finalTranscript':
      return { type: 'final', text: event.value.text, start: event.value.startSeconds, end: event.value.endSeconds, words: wordRows(event.value.words) };
    case 'utteranceEnd':
      return { type: 'utterance_end', at: event.value.atSeconds };
    case 'closed':
      return { type: 'closed', duration_seconds: event.value.durationSeconds, credits_charged: event.value.creditsCharged, recording_id: event.value.recordingId || null };
    default:
      return undefined;
  }
}

/** A text frame's control message, or invalid_request naming what is wrong. */
export function controlOf(text: string): LiveControlType {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    throw new MurmurError('invalid_request', 'Text frames must be JSON control messages such as {"type":"keepalive"}; send audio as binary frames.', { param: 'type' });
  }
  const type = (message as { type?: unknown } | null)?.type;
  if (typeof type !== 'string' || !(LIVE_CONTROL_TYPES as readonly string[]).includes(type)) {
    throw new MurmurError('invalid_request', `A control message's \`type\` must be one of ${LIVE_CONTROL_TYPES.join(', ')}.`, { param: 'type' });
  }
  return type as LiveControlType;
}
