/**
 * A timeline's public JSON (issue 32; docs/timelines.md): segments with their speaker, the
 * speakers with their names, and — only when asked for (`words=true`), since a two-hour
 * recording holds ~20,000 — the words. POST /transcribe, a job (its GET and its webhook event)
 * and GET /recordings/{id} all answer these shapes, as do the MCP tools.
 */
import type { timeline } from '@murmur/proto';
import { speakersFromWire, wordsFromWire } from './timeline-wire';
import type { TimelineSpeaker } from './timeline';

interface WireSegment {
  startSeconds: number;
  endSeconds: number;
  text: string;
  speaker?: string | undefined;
}

export function presentSegments(segments: readonly WireSegment[]) {
  return segments.map((s) => ({ start: s.startSeconds, end: s.endSeconds, text: s.text, speaker: s.speaker || null }));
}

export function presentSpeakers(speakers: readonly timeline.Speaker[]): TimelineSpeaker[] {
  return speakersFromWire(speakers);
}

/** The words as JSON objects: `{text, start, end, confidence, speaker}` each. */
export function presentWords(words: timeline.Words | undefined, speakers: readonly timeline.Speaker[]) {
  return wordsFromWire(words, speakersFromWire(speakers));
}

/** `words` and `speakers` of a result, words only when `withWords`. */
export function presentTimelineParts(t: { words?: timeline.Words | undefined; speakers: readonly timeline.Speaker[] }, withWords: boolean) {
  return {
    speakers: presentSpeakers(t.speakers),
    ...(withWords ? { words: presentWords(t.words, t.speakers) } : {}),
  };
}
