/**
 * What captions are cut from: the timeline's words, or — for an engine that knows no word
 * times — its segments' words with times shared out by their characters. Either way the result
 * is one list in time order, each token fitting a line, so the cutter has one input to handle.
 */
import type { Timeline, TimelineSegment } from '@murmur/contract';
import { charChunks, charCount, oneLine } from './caption-text';

export interface CaptionToken {
  /** One line of text, never empty. */
  text: string;
  /** {@link charCount} of `text`. */
  chars: number;
  /** Seconds, finite, never negative, `end >= start`. */
  start: number;
  end: number;
  speaker: string | null;
  /** A later piece of a word too long for a line: it follows the piece before with no space. */
  glue: boolean;
  /** The source ends a unit after this token (a segment's last word): a good place for a cut. */
  boundary: boolean;
}

/**
 * The timeline's tokens in time order; a word longer than `roomOf(speaker)` characters is cut
 * into pieces that fit, each with its share of the word's time.
 */
export function captionTokens(t: Timeline, roomOf: (speaker: string | null) => number): CaptionToken[] {
  const source = t.words.length > 0 ? t.words.map(wordToken) : t.segments.flatMap(segmentTokens);
  const tokens = source.filter((w) => w.text !== '');
  if (!isSorted(tokens)) tokens.sort((a, b) => a.start - b.start);
  return tokens.flatMap((w) => (w.chars > roomOf(w.speaker) ? pieces(w, roomOf(w.speaker)) : [w]));
}

function wordToken(w: Timeline['words'][number]): CaptionToken {
  const text = oneLine(w.text);
  const [start, end] = times(w.start, w.end);
  return { text, chars: charCount(text), start, end, speaker: w.speaker || null, glue: false, boundary: false };
}

/** A segment's words, with its time shared out by characters (a word and its space). */
function segmentTokens(s: TimelineSegment): CaptionToken[] {
  const words = oneLine(s.text).split(' ').filter((w) => w !== '');
  const [start, end] = times(s.start, s.end);
  const weights = words.map((w) => charCount(w) + 1);
  const total = weights.reduce((a, b) => a + b, 0);
  let before = 0;
  return words.map((text, i) => {
    const from = start + ((end - start) * before) / total;
    before += weights[i] ?? 0;
    const to = i === words.length - 1 ? end : start + ((end - start) * before) / total;
    return { text, chars: (weights[i] ?? 1) - 1, start: from, end: to, speaker: s.speaker || null, glue: false, boundary: i === words.length - 1 };
  });
}

function pieces(w: CaptionToken, room: number): CaptionToken[] {
  const chunks = charChunks(w.text, room);
  let before = 0;
  return chunks.map((text, i) => {
    const chars = charCount(text);
    const from = w.start + ((w.end - w.start) * before) / w.chars;
    before += chars;
    const to = i === chunks.length - 1 ? w.end : w.start + ((w.end - w.start) * before) / w.chars;
    return { ...w, text, chars, start: from, end: to, glue: i > 0, boundary: i === chunks.length - 1 && w.boundary };
  });
}

/** Times a renderer can use: finite, not negative, not ending before they start. */
function times(start: number, end: number): [number, number] {
  const from = Number.isFinite(start) ? Math.max(0, start) : 0;
  return [from, Number.isFinite(end) ? Math.max(from, end) : from];
}

function isSorted(tokens: CaptionToken[]): boolean {
  for (let i = 1; i < tokens.length; i++) if ((tokens[i]?.start ?? 0) < (tokens[i - 1]?.start ?? 0)) return false;
  return true;
}
