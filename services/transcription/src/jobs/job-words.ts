/**
 * Words in a job's rows: a chunk's words as compact tuples (resumed jobs keep them), a result's
 * as base64 of murmur.timeline.v1.Words (the columns Transcribe answers). Pure.
 */
import { timeline } from '@murmur/proto';
import type { TimedWord } from '../stitch';

/** [text, start, end, confidence] per word, seconds. */
export type ChunkWordTuple = [string, number, number, number | null];

export function wordsToTuples(words: readonly TimedWord[]): ChunkWordTuple[] {
  return words.map((w) => [w.text, w.start, w.end, w.confidence]);
}

export function wordsFromTuples(tuples: readonly ChunkWordTuple[] | undefined): TimedWord[] | undefined {
  return tuples?.map(([text, start, end, confidence]) => ({ text, start, end, confidence }));
}

export function wireWordsToBase64(words: timeline.Words | undefined): string | undefined {
  if (!words || words.text.length === 0) return undefined;
  return Buffer.from(timeline.Words.encode(words).finish()).toString('base64');
}

export function wireWordsFromBase64(stored: string | undefined): timeline.Words | undefined {
  return stored ? timeline.Words.decode(Buffer.from(stored, 'base64')) : undefined;
}
