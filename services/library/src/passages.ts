/**
 * Cutting sources into passages, the units search ranks and cites (contract search-rules.ts):
 * a recording's speaker turns in windows of about 30–60 s, and any text without times (thread
 * items, knowledge base descriptions, transcripts without segments) on sentence ends. Pure: the
 * store writes what these return in the transaction of the row they come from.
 */
import { PASSAGE_MAX_CHARS, PASSAGE_MAX_SECONDS, PASSAGE_TARGET_SECONDS } from '@murmur/contract';
import type { CleanSegment } from './validation';

/** One passage before it is stored: its text, where it lies in the audio, and who spoke it. */
export interface PassageCut {
  text: string;
  /** Seconds; null for text without times. */
  start: number | null;
  end: number | null;
  /** The segment's speaker id; null when unknown. */
  speaker: string | null;
}

/** A recording's passages: from its segments when it has them, else from its text. */
export function recordingPassages(transcript: { text: string; segments: readonly CleanSegment[] }): PassageCut[] {
  if (transcript.segments.length === 0) return textPassages(transcript.text);
  const out: PassageCut[] = [];
  let open: { texts: string[]; start: number; end: number; speaker: string | null } | null = null;
  const close = () => {
    if (open) out.push({ text: open.texts.join(' '), start: open.start, end: open.end, speaker: open.speaker });
    open = null;
  };
  for (const segment of transcript.segments) {
    const text = segment.text.trim();
    if (text === '') continue;
    const speaker = segment.speaker ?? null;
    if (segment.end - segment.start > PASSAGE_MAX_SECONDS || text.length > PASSAGE_MAX_CHARS * 2) {
      // One long segment (an engine that does not cut, or a pasted transcript): cut its text and
      // give each piece the stretch of time its share of the characters takes.
      close();
      out.push(...timedPieces(text, segment.start, segment.end, speaker));
      continue;
    }
    if (open !== null) {
      const o: { start: number; end: number; speaker: string | null } = open;
      const full = o.end - o.start >= PASSAGE_TARGET_SECONDS;
      const tooLong = segment.end - o.start > PASSAGE_MAX_SECONDS;
      if (speaker !== o.speaker || full || tooLong) close();
    }
    if (open === null) open = { texts: [text], start: segment.start, end: segment.end, speaker };
    else {
      const o: { texts: string[]; end: number } = open;
      o.texts.push(text);
      o.end = Math.max(o.end, segment.end);
    }
  }
  close();
  return out;
}

/** `text` of one timed stretch cut into pieces, each timed by its share of the characters. */
function timedPieces(text: string, start: number, end: number, speaker: string | null): PassageCut[] {
  const pieces = textPieces(text);
  const total = pieces.reduce((n, p) => n + p.length, 0) || 1;
  const span = Math.max(0, end - start);
  let at = 0;
  return pieces.map((piece) => {
    const from = start + (span * at) / total;
    at += piece.length;
    return { text: piece, start: round3(from), end: round3(start + (span * at) / total), speaker };
  });
}

const round3 = (n: number): number => Math.round(n * 1000) / 1000;

/** Text without times as passages. */
export function textPassages(text: string): PassageCut[] {
  return textPieces(text).map((piece) => ({ text: piece, start: null, end: null, speaker: null }));
}

/**
 * `text` cut on sentence ends into pieces of at most PASSAGE_MAX_CHARS characters; a sentence
 * longer than that is cut on spaces (or, with none, hard).
 */
export function textPieces(text: string): string[] {
  const sentences = text.match(/[^.!?\n]+(?:[.!?]+|\n+|$)/g) ?? [];
  const pieces: string[] = [];
  let current = '';
  const push = () => {
    const piece = current.trim();
    if (piece !== '') pieces.push(piece);
    current = '';
  };
  for (const raw of sentences) {
    const sentence = raw.replace(/\s+/g, ' ').trim();
    if (sentence === '') continue;
    if (sentence.length > PASSAGE_MAX_CHARS) {
      push();
      for (const part of splitLong(sentence)) pieces.push(part);
      continue;
    }
    if (current.length + 1 + sentence.length > PASSAGE_MAX_CHARS) push();
    current = current === '' ? sentence : `${current} ${sentence}`;
  }
  push();
  return pieces;
}

/** A sentence over the bound, cut at the last space before it (hard where there is none). */
function splitLong(sentence: string): string[] {
  const parts: string[] = [];
  let rest = sentence;
  while (rest.length > PASSAGE_MAX_CHARS) {
    const space = rest.lastIndexOf(' ', PASSAGE_MAX_CHARS);
    const cut = space > PASSAGE_MAX_CHARS / 2 ? space : PASSAGE_MAX_CHARS;
    parts.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  if (rest !== '') parts.push(rest);
  return parts;
}

/** A knowledge base's passages: its name and description, as text (findable by either). */
export function knowledgeBasePassages(kb: { name: string; description: string }): PassageCut[] {
  const name = kb.name.trim();
  const description = kb.description.trim();
  return textPassages(description === '' ? name : `${name}${/[.!?]$/.test(name) ? '' : '.'} ${description}`);
}
