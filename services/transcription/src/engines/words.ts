/**
 * Words from what engines give: whisper.cpp's token pieces joined into words, and words grouped
 * into segments (a new one after a pause, at the end of a sentence, or every 12 words) for the
 * engines whose own segments come from token mode. Pure.
 */
import type { TimedSegment } from '../stitch';
import type { EngineWord } from './engine';

/** A timed piece of text as whisper.cpp's token mode gives it (" Hel", "lo", ","), in seconds. */
export interface TimedPiece {
  text: string;
  start: number;
  end: number;
}

const PUNCTUATION_ONLY = /^[\p{P}\p{S}]+$/u;

/**
 * Joins token pieces into words: a piece that starts with a space starts a word, any other
 * continues the last one (punctuation stays on the word before it). Special tokens (`[_BEG_]`,
 * `<|endoftext|>`) are dropped.
 */
export function wordsFromPieces(pieces: readonly TimedPiece[]): EngineWord[] {
  const words: EngineWord[] = [];
  for (const piece of pieces) {
    if (/^\s*(\[_[A-Z]+_?\]|<\|[^|]*\|>)\s*$/.test(piece.text) || piece.text.trim() === '') continue;
    const last = words[words.length - 1];
    const startsWord = /^\s/.test(piece.text) || !last;
    const text = piece.text.trim();
    if (startsWord && !(last && PUNCTUATION_ONLY.test(text))) {
      words.push({ text, start: piece.start, end: Math.max(piece.start, piece.end), confidence: null });
    } else if (last) {
      last.text += text;
      last.end = Math.max(last.end, piece.end);
    }
  }
  return words;
}

/** Groups words into segments: a new one after a pause over `maxGap` s, after a sentence's end, or at `maxWords`. */
export function segmentsFromWords(words: ReadonlyArray<Pick<EngineWord, 'text' | 'start' | 'end'>>, opts: { maxGap?: number; maxWords?: number } = {}): TimedSegment[] {
  const maxGap = opts.maxGap ?? 0.5;
  const maxWords = opts.maxWords ?? 12;
  const segments: TimedSegment[] = [];
  let current: Array<Pick<EngineWord, 'text' | 'start' | 'end'>> = [];
  const flush = () => {
    if (current.length === 0) return;
    segments.push({ start: current[0]!.start, end: current[current.length - 1]!.end, text: current.map((w) => w.text).join(' ') });
    current = [];
  };
  for (const w of words) {
    const last = current[current.length - 1];
    if (last && (w.start - last.end > maxGap || current.length >= maxWords || /[.!?…]["')\]]?$/.test(last.text))) flush();
    current.push(w);
  }
  flush();
  return segments;
}

/**
 * Words of segments that carry no word times (an engine without `words`): each segment's words
 * spread evenly over it, by length in characters, so a word's time is an estimate within its
 * segment. Confidence is unknown (null).
 */
export function wordsFromSegments(segments: readonly TimedSegment[]): EngineWord[] {
  const words: EngineWord[] = [];
  for (const s of segments) {
    const texts = s.text.split(/\s+/).filter((t) => t.length > 0);
    const total = texts.reduce((n, t) => n + t.length, 0);
    const span = Math.max(0, s.end - s.start);
    let at = s.start;
    for (const text of texts) {
      const end = at + (span * text.length) / total;
      words.push({ text, start: at, end, confidence: null });
      at = end;
    }
  }
  return words;
}
