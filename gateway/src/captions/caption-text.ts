/**
 * Text as captions measure it: characters are what a reader sees (grapheme clusters, so "é"
 * written as e + accent and a flag emoji count one each), and punctuation marks the places
 * where a cue or a line reads best when it ends.
 */

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
/**
 * Where a grapheme cluster may hold more than one code unit: marks, format characters (ZWJ,
 * prepended marks), Hangul jamo, and anything beyond the BMP (emoji, their modifiers, flags).
 */
const MAY_CLUSTER = /[\p{M}\p{Cf}\u1100-\u11ff\ua960-\ua97f\ud7b0-\ud7ff\ud800-\udfff\u{10000}-\u{10ffff}]/u;

/** The text on one line: any run of whitespace (line breaks included) becomes one space. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** The characters a reader sees in `text`. */
export function charCount(text: string): number {
  if (!MAY_CLUSTER.test(text)) return text.length;
  let n = 0;
  for (const _ of segmenter.segment(text)) n++;
  return n;
}

/** `text` cut into pieces of at most `size` characters, never inside a grapheme cluster. */
export function charChunks(text: string, size: number): string[] {
  const graphemes = MAY_CLUSTER.test(text) ? Array.from(segmenter.segment(text), (s) => s.segment) : [...text];
  const chunks: string[] = [];
  for (let i = 0; i < graphemes.length; i += size) chunks.push(graphemes.slice(i, i + size).join(''));
  return chunks;
}

/** The first `size - 1` characters and `…` when `text` is longer than `size`. */
export function shorten(text: string, size: number): string {
  if (charCount(text) <= size) return text;
  return `${charChunks(text, size - 1)[0] ?? ''}…`;
}

const CLOSERS = `["'”’»)\\]]*$`;
const SENTENCE_END = new RegExp(`[.!?…。！？]${CLOSERS}`);
const CLAUSE_END = new RegExp(`[,;:—–、，；：]${CLOSERS}`);

/** The word ends a sentence ("done.", "why?", "“now!”"). */
export function endsSentence(word: string): boolean {
  return SENTENCE_END.test(word);
}

/** The word ends a clause ("first,", "so;", "this —"). */
export function endsClause(word: string): boolean {
  return CLAUSE_END.test(word);
}
