/**
 * Joins the transcripts of consecutive chunks into one: chunk-relative times become absolute
 * (plus the chunk's offset), every segment is clamped into its chunk, and segments come out in
 * order, monotonic and non-overlapping whatever an engine returned. Pure.
 */

/** A timed piece of transcript, in seconds. */
export interface TimedSegment {
  start: number;
  end: number;
  text: string;
}

/** A recognised word, in seconds; confidence 0–1 or null. */
export interface TimedWord {
  text: string;
  start: number;
  end: number;
  confidence: number | null;
}

/** What one chunk produced, with times relative to the chunk's start. */
export interface ChunkTranscript {
  /** Where the chunk starts in the whole audio, in seconds. */
  offset: number;
  /** The chunk's length in seconds. */
  duration: number;
  text: string;
  segments: TimedSegment[];
  /** Absent when the engine knows no word times. */
  words?: TimedWord[];
}

export interface StitchedTranscript {
  text: string;
  segments: TimedSegment[];
  /** Every chunk's words with absolute times, in order; empty when the engine knows none. */
  words: TimedWord[];
}

/** Collapses whitespace and trims. */
export function cleanText(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

const ms = (seconds: number): number => Math.round(seconds * 1000) / 1000;

/** Stitches chunk transcripts (in audio order) into one transcript with absolute times. */
export function stitchChunks(chunks: readonly ChunkTranscript[]): StitchedTranscript {
  const texts: string[] = [];
  const segments: TimedSegment[] = [];
  const words: TimedWord[] = [];
  let cursor = 0;
  let wordCursor = 0;
  for (const chunk of chunks) {
    const chunkEnd = chunk.offset + chunk.duration;
    const text = cleanText(chunk.text);
    if (text) texts.push(text);
    const own = chunk.segments
      .map((s) => ({ start: Number.isFinite(s.start) ? s.start : 0, end: Number.isFinite(s.end) ? s.end : 0, text: cleanText(s.text) }))
      .filter((s) => s.text)
      .sort((a, b) => a.start - b.start);
    // An engine that gave text without timings still yields one segment spanning its chunk.
    if (own.length === 0 && text) own.push({ start: 0, end: chunk.duration, text });
    for (const s of own) {
      const lo = Math.max(cursor, chunk.offset);
      const start = Math.min(Math.max(chunk.offset + s.start, lo), chunkEnd);
      const end = Math.min(Math.max(chunk.offset + s.end, start), chunkEnd);
      segments.push({ start: ms(start), end: ms(end), text: s.text });
      cursor = ms(end);
    }
    cursor = Math.max(cursor, chunk.offset);
    // Words likewise: absolute, clamped into the chunk, in order and never overlapping.
    for (const w of chunk.words ?? []) {
      const text = cleanText(w.text);
      if (!text) continue;
      const lo = Math.max(wordCursor, chunk.offset);
      const start = Math.min(Math.max(chunk.offset + (Number.isFinite(w.start) ? w.start : 0), lo), chunkEnd);
      const end = Math.min(Math.max(chunk.offset + (Number.isFinite(w.end) ? w.end : 0), start), chunkEnd);
      words.push({ text, start: ms(start), end: ms(end), confidence: w.confidence === null || !Number.isFinite(w.confidence) ? null : Math.min(1, Math.max(0, w.confidence)) });
      wordCursor = ms(end);
    }
  }
  return { text: texts.join(' '), segments, words };
}
