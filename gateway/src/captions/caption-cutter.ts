/**
 * Tokens cut into cues. A speaker change always starts a cue; within one speaker's run, the cut
 * is the cheapest over the whole run (dynamic programming, like paragraph filling): every cue
 * costs 1, plus what its end and its inside cost (`caption-breaks.ts`) and a share for showing
 * less than the minimum time. Only cues that fit the lines and the longest duration are tried,
 * so the search is linear in the number of words. Times are then settled in whole milliseconds:
 * in order, never overlapping, short cues held longer when the next one leaves room.
 */
import { breakCosts, type BreakCosts } from './caption-breaks';
import { layoutLines } from './caption-lines';
import type { CaptionRules } from './caption-rules';
import type { CaptionToken } from './caption-tokens';

/** A caption cue: seconds (whole milliseconds), its lines, and the speaker id of its words. */
export interface Cue {
  start: number;
  end: number;
  /** 1 to `maxLines` lines, none empty; the speaker's label is not in them. */
  lines: string[];
  speaker: string | null;
}

/** `labelOf(speaker)`: the characters the speaker's label takes on a cue's first line. */
export function cutCues(tokens: readonly CaptionToken[], rules: CaptionRules, labelOf: (speaker: string | null) => number): Cue[] {
  const cues: Cue[] = [];
  const costs = breakCosts(tokens);
  for (let from = 0; from < tokens.length; ) {
    let to = from + 1;
    while (to < tokens.length && tokens[to]!.speaker === tokens[from]!.speaker) to++;
    const label = labelOf(tokens[from]!.speaker);
    for (const [a, b] of cutRun(tokens, costs, from, to, rules, label)) {
      let end = tokens[a]!.end;
      for (let k = a + 1; k < b; k++) end = Math.max(end, tokens[k]!.end);
      cues.push({ start: tokens[a]!.start, end, lines: layoutLines(tokens, costs.lineEnd, a, b, label, rules.maxLineChars), speaker: tokens[a]!.speaker });
    }
    from = to;
  }
  return settleTimes(cues, rules);
}

/** The cues of one speaker's run `tokens[from..to)`, as [first, last + 1] token indexes. */
function cutRun(tokens: readonly CaptionToken[], costs: BreakCosts, from: number, to: number, rules: CaptionRules, label: number): Array<[number, number]> {
  const n = to - from;
  const best = new Float64Array(n + 1).fill(Infinity);
  const back = new Int32Array(n + 1);
  best[0] = 0;
  const nextStart = (k: number): number => tokens[k + 1]?.start ?? Infinity;
  for (let i = 0; i < n; i++) {
    if (best[i] === Infinity) continue;
    const first = tokens[from + i]!;
    let lines = 1;
    let lineLen = label;
    let end = -Infinity;
    let inside = 0;
    for (let j = i; j < n; j++) {
      const k = from + j;
      const tok = tokens[k]!;
      if (j > i) inside += costs.cueInside[k - 1]!;
      const sep = j > i && !tok.glue ? 1 : 0;
      if (lineLen + sep + tok.chars <= rules.maxLineChars || j === i) {
        lineLen += sep + tok.chars;
      } else {
        lines++;
        lineLen = tok.chars;
      }
      if (lines > rules.maxLines) break;
      end = Math.max(end, tok.end);
      if (j > i && end - first.start > rules.maxSeconds + 1e-9) break;
      const shown = Math.max(end, Math.min(first.start + rules.minSeconds, nextStart(k))) - first.start;
      const short = rules.minSeconds > 0 && shown < rules.minSeconds ? 1 - shown / rules.minSeconds : 0;
      const cost = best[i]! + 1 + (j === n - 1 ? 0 : costs.cueEnd[k]!) + inside + short;
      if (cost < best[j + 1]!) {
        best[j + 1] = cost;
        back[j + 1] = i;
      }
    }
  }
  const spans: Array<[number, number]> = [];
  for (let j = n; j > 0; j = back[j]!) spans.unshift([from + back[j]!, from + j]);
  return spans;
}

/**
 * Whole milliseconds; each cue starts after the one before (a later one is moved 1 ms on when
 * two would start together), ends no later than the next starts and at most `maxSeconds` after
 * its start, and a cue shorter than `minSeconds` is held until then or until the next starts.
 */
function settleTimes(cues: Cue[], rules: CaptionRules): Cue[] {
  const minMs = Math.round(rules.minSeconds * 1000);
  const maxMs = Math.round(rules.maxSeconds * 1000);
  const starts: number[] = [];
  for (const cue of cues) {
    const prev = starts[starts.length - 1];
    const start = Math.round(cue.start * 1000);
    starts.push(prev !== undefined && start <= prev ? prev + 1 : start);
  }
  return cues.map((cue, i) => {
    const start = starts[i]!;
    const next = starts[i + 1] ?? Infinity;
    let end = Math.min(Math.round(cue.end * 1000), start + maxMs, next);
    if (end - start < minMs) end = Math.min(start + minMs, next);
    if (end <= start) end = Math.min(start + 1, next);
    return { ...cue, start: start / 1000, end: end / 1000 };
  });
}
