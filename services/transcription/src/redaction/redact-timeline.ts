/**
 * PII redaction of a timeline (issue 32, item 7). `text` is scanned by the detectors of the
 * asked policies; what they find is carried over to the segments and the words by their shared
 * letters and digits (alignment.ts), or found in them afresh where those differ. Each value is
 * replaced the same way in all three: a value spread over several words (or segments) becomes
 * one word (segment) carrying the substitution, from the start of the first to the end of the
 * last, with the first one's speaker. Its confidence is the lowest of theirs (null if none had
 * one): how sure the recogniser was of what was redacted, which is all a reviewer needs to
 * doubt a redaction. Punctuation around a value stays ("[PHONE_NUMBER]."). Pure: the input is
 * not changed, and nothing of a value found survives in the result.
 */
import { REDACTION_POLICIES, type RedactionOptions, type RedactionPolicy, type Timeline, type TimelineSegment, type TimelineWord } from '@murmur/contract';
import { carryOver, lettersOf, type Letters } from './alignment';
import { DETECTORS } from './detectors';
import { Scan, type Found } from './scan';
import { substitutionOf, type Substitute } from './substitution';

export interface RedactionResult {
  timeline: Timeline;
  /** Values redacted per policy (in `text`, or in the words or segments where they found more). */
  found: Partial<Record<RedactionPolicy, number>>;
}

const ORDER = new Map<RedactionPolicy, number>(REDACTION_POLICIES.map((p, i) => [p, i]));

/** The findings of `policies` in `text`, without overlaps (the longer wins), in order. */
export function findPii(text: string, policies: readonly RedactionPolicy[]): Found[] {
  if (text.trim() === '') return [];
  const scan = new Scan(text);
  const all = policies.flatMap((p) => DETECTORS[p].find(scan));
  all.sort((a, b) => b.end - b.start - (a.end - a.start) || a.start - b.start || ORDER.get(a.policy)! - ORDER.get(b.policy)!);
  const kept: Found[] = [];
  for (const f of all) if (kept.every((k) => f.end <= k.start || f.start >= k.end)) kept.push(f);
  return kept.sort((a, b) => a.start - b.start);
}

function replaced(text: string, found: readonly Found[], offset: number, substitute: Substitute): string {
  let out = '';
  let at = 0;
  for (const f of found) {
    out += text.slice(at, f.start - offset) + substitute(f.policy, f.value);
    at = f.end - offset;
  }
  return out + text.slice(at);
}

/**
 * Pieces of one string (segment or word texts, joined by single spaces) with what was found in
 * `text` carried over, or found afresh when they do not hold the same letters and digits: each
 * finding merges the pieces it touches into one group carrying the substitution.
 */
function redactPieces(texts: readonly string[], source: Source, policies: readonly RedactionPolicy[], substitute: Substitute): { groups: Array<{ from: number; to: number; text: string }>; found: Found[] } {
  const joined = texts.join(' ');
  const found = carryOver(source.found, source.text, source.letters, joined, lettersOf(joined)) ?? findPii(joined, policies);
  const starts: number[] = [];
  let at = 0;
  for (const t of texts) { starts.push(at); at += t.length + 1; }
  const pieceAt = (offset: number, from: number): number => {
    let p = from;
    while (p + 1 < texts.length && starts[p + 1]! <= offset) p++;
    return p;
  };
  const groups: Array<{ from: number; to: number; text: string }> = [];
  let piece = 0;
  let f = 0;
  while (piece < texts.length) {
    let to = piece;
    const inGroup: Found[] = [];
    // Take every finding that starts in the group, widening it to the piece each one ends in.
    while (f < found.length && found[f]!.start < starts[to]! + texts[to]!.length) {
      to = Math.max(to, pieceAt(found[f]!.end - 1, to));
      inGroup.push(found[f]!);
      f++;
    }
    const start = starts[piece]!;
    const text = inGroup.length === 0 ? texts[piece]! : replaced(joined.slice(start, starts[to]! + texts[to]!.length), inGroup, start, substitute);
    groups.push({ from: piece, to, text });
    piece = to + 1;
  }
  return { groups, found };
}

/** What was found in `text`, to carry over to the segments and words. */
interface Source {
  text: string;
  letters: Letters;
  found: Found[];
}

function lowestConfidence(words: readonly TimelineWord[]): number | null {
  const known = words.map((w) => w.confidence).filter((c): c is number => c !== null);
  return known.length === 0 ? null : Math.min(...known);
}

function countOf(found: readonly Found[]): Partial<Record<RedactionPolicy, number>> {
  const counts: Partial<Record<RedactionPolicy, number>> = {};
  for (const f of found) counts[f.policy] = (counts[f.policy] ?? 0) + 1;
  return counts;
}

export function redactTimeline(t: Timeline, opts: RedactionOptions): RedactionResult {
  const substitute = substitutionOf(opts.style);
  const textFound = findPii(t.text, opts.policies);
  const text = replaced(t.text, textFound, 0, substitute);
  const source: Source = { text: t.text, letters: lettersOf(t.text), found: textFound };

  const seg = redactPieces(t.segments.map((s) => s.text), source, opts.policies, substitute);
  const segments: TimelineSegment[] = seg.groups.map((g) => {
    const first = t.segments[g.from]!;
    return { start: first.start, end: t.segments[g.to]!.end, text: g.text, speaker: first.speaker };
  });

  const wd = redactPieces(t.words.map((w) => w.text), source, opts.policies, substitute);
  const words: TimelineWord[] = wd.groups.map((g) => {
    const first = t.words[g.from]!;
    if (g.from === g.to && g.text === first.text) return { ...first };
    const span = t.words.slice(g.from, g.to + 1);
    return { text: g.text, start: first.start, end: t.words[g.to]!.end, confidence: lowestConfidence(span), speaker: first.speaker };
  });

  const found: Partial<Record<RedactionPolicy, number>> = {};
  for (const counts of [countOf(textFound), countOf(seg.found), countOf(wd.found)]) {
    for (const [policy, n] of Object.entries(counts) as Array<[RedactionPolicy, number]>) found[policy] = Math.max(found[policy] ?? 0, n);
  }
  return { timeline: { text, segments, words, speakers: t.speakers.map((s) => ({ ...s })) }, found };
}
