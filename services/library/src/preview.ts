/**
 * The short opening of a transcript shown in lists, so a list never carries whole transcripts
 * (up to 5,000,000 characters each) over the wire.
 */

/** Longest preview, in characters, before the ellipsis. */
export const PREVIEW_MAX_CHARS = 200;

/**
 * How much of the stored transcript the store reads to build a preview: enough that runs of
 * whitespace collapsing still leave a full preview, little enough that a page of 100 stays small.
 */
export const PREVIEW_SOURCE_CHARS = 1000;

/**
 * The first ~`max` characters of `text` with whitespace collapsed, cut on a word boundary and
 * ended with "…" when anything was left out. A single word longer than half the preview is cut
 * inside the word rather than leaving a near-empty preview. Never splits a surrogate pair.
 */
export function makePreview(text: string, max = PREVIEW_MAX_CHARS): string {
  const flat = flatOpening(text, max);
  if (flat.length <= max) return flat;
  // Cut at the last space that still leaves the word before it whole (the character at
  // `max` being a space means the word before it ended exactly at the limit).
  const lastSpace = flat.lastIndexOf(' ', max);
  let cut = lastSpace >= max / 2 ? lastSpace : max;
  const code = flat.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut -= 1; // keep a surrogate pair together
  while (cut > 0 && TRAILING.has(flat[cut - 1]!)) cut -= 1;
  return `${flat.slice(0, cut)}…`;
}

/**
 * The flattened text, or as much of its opening as decides the preview (at least max + 2
 * characters when it is longer than max). The common case is checked first: when the first
 * max + 2 characters need no flattening and the last of them is no space, flattening the whole
 * text leaves them as they are and keeps it longer than max, so they are all a preview needs.
 */
function flatOpening(text: string, max: number): string {
  const head = text.slice(0, max + 2);
  if (head.length === max + 2 && !NOT_FLAT.test(head)) return head;
  // Collapsing whitespace only shortens text, so the first 2·max + 2 characters hold the whole
  // preview unless they are mostly whitespace: flatten those alone, and the rest only then.
  const window = 2 * max + 2;
  if (text.length <= window) return flatten(text);
  const flat = flatten(text.slice(0, window));
  return flat.length <= max + 1 ? flatten(text) : flat;
}

/** Punctuation and spaces a cut preview does not end on before its "…". */
const TRAILING = new Set([' ', ',', ';', ':', '.', '–', '—', '-']);

/**
 * Whitespace that flattening would change: a run of two, any but a plain space, or a space at
 * either end. Most transcripts have none, and one test costs a fraction of the global replace it
 * spares (one match per word): a preview of the benchmark's transcripts took half the time.
 */
const NOT_FLAT = /\s\s|[^\S ]|^ | $/;

const flatten = (s: string) => (NOT_FLAT.test(s) ? s.replace(/\s+/g, ' ').trim() : s);
