/**
 * A timeline's words on the wire and in storage (murmur.timeline.v1.Words: one column per field)
 * and back. The transcription service encodes, the library stores the message's bytes, the
 * gateway decodes; one codec, so the three can never disagree. Pure.
 */
import type { timeline } from '@murmur/proto';
import type { TimelineSpeaker, TimelineWord } from './timeline';

const toMs = (seconds: number) => Math.max(0, Math.round(seconds * 1000));

/** Words → columns; `speakers` gives each speaker id its 1-based index. */
export function wordsToWire(words: readonly TimelineWord[], speakers: readonly TimelineSpeaker[]): timeline.Words {
  const index = new Map(speakers.map((s, i) => [s.id, i + 1]));
  const withConfidence = words.some((w) => w.confidence !== null);
  const withSpeaker = words.some((w) => w.speaker !== null);
  return {
    text: words.map((w) => w.text),
    startMs: words.map((w) => toMs(w.start)),
    endMs: words.map((w) => toMs(w.end)),
    confidence: withConfidence ? words.map((w) => w.confidence ?? 0) : [],
    speaker: withSpeaker ? words.map((w) => (w.speaker === null ? 0 : (index.get(w.speaker) ?? 0))) : [],
  };
}

/** Columns → words (a column of the wrong length is read as absent). */
export function wordsFromWire(wire: timeline.Words | undefined, speakers: readonly TimelineSpeaker[]): TimelineWord[] {
  if (!wire) return [];
  const n = wire.text.length;
  const confidence = wire.confidence.length === n ? wire.confidence : null;
  const speaker = wire.speaker.length === n ? wire.speaker : null;
  const words: TimelineWord[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const s = speaker ? speaker[i]! : 0;
    words[i] = {
      text: wire.text[i]!,
      start: (wire.startMs[i] ?? 0) / 1000,
      end: (wire.endMs[i] ?? 0) / 1000,
      // float32 on the wire: rounded back to 3 decimals.
      confidence: confidence ? Math.round(confidence[i]! * 1000) / 1000 : null,
      speaker: s > 0 ? (speakers[s - 1]?.id ?? null) : null,
    };
  }
  return words;
}

/** Speakers → wire (null name → ""). */
export function speakersToWire(speakers: readonly TimelineSpeaker[]): timeline.Speaker[] {
  return speakers.map((s) => ({ id: s.id, name: s.name ?? '' }));
}

/** Wire → speakers ("" name → null). */
export function speakersFromWire(speakers: readonly timeline.Speaker[]): TimelineSpeaker[] {
  return speakers.map((s) => ({ id: s.id, name: s.name === '' ? null : s.name }));
}
