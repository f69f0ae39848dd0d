/**
 * A cue's words laid out as lines: as few lines as fit, balanced in length (a shorter first
 * line when they cannot be equal), broken after punctuation or at a pause where that costs little
 * balance. The speaker's label, when there is one, starts the first line and counts in its length.
 */
import type { CaptionToken } from './caption-tokens';

/** Balance: the squared difference from the mean line, per squared line width. */
const BALANCE_WEIGHT = 4;
/** Among equally balanced layouts, the one with the shorter lines first. */
const TOP_SHORTER_WEIGHT = 1e-4;

/**
 * The lines of `tokens[from..to)`, each at most `width` characters with `label` characters
 * taken on the first; `lineEnd[k]` is the cost of a line ending after token `k`.
 */
export function layoutLines(tokens: readonly CaptionToken[], lineEnd: Float64Array, from: number, to: number, label: number, width: number): string[] {
  const n = to - from;
  const tok = (k: number): CaptionToken => tokens[from + k]!;
  const spaceBefore = (k: number): number => (k > 0 && !tok(k).glue ? 1 : 0);
  // cum[k]: the length of tokens 0..k-1 written on one line.
  const cum = new Float64Array(n + 1);
  for (let k = 0; k < n; k++) cum[k + 1] = cum[k]! + spaceBefore(k) + tok(k).chars;
  const span = (a: number, b: number): number => cum[b]! - cum[a]! - spaceBefore(a);
  const lines = fewestLines(n, label, width, span);
  const breaks = lines === 1 ? [] : balancedBreaks(n, lines, label, width, span, (a) => lineEnd[from + a - 1]!);
  const bounds = [0, ...breaks, n];
  const out: string[] = [];
  for (let l = 0; l + 1 < bounds.length; l++) {
    const [first, end] = [bounds[l]!, bounds[l + 1]!];
    let text = tok(first).text;
    for (let k = first + 1; k < end; k++) text += (tok(k).glue ? '' : ' ') + tok(k).text;
    out.push(text);
  }
  return out;
}

/** Greedy filling gives the fewest lines. */
function fewestLines(n: number, label: number, width: number, span: (a: number, b: number) => number): number {
  let lines = 1;
  let start = 0;
  for (let k = 1; k <= n; k++) {
    if (span(start, k) + (lines === 1 ? label : 0) > width) {
      lines++;
      start = k - 1;
    }
  }
  return lines;
}

/** The line starts (token indexes) of the best layout in exactly `lines` lines. */
function balancedBreaks(
  n: number,
  lines: number,
  label: number,
  width: number,
  span: (a: number, b: number) => number,
  breakCost: (a: number) => number,
): number[] {
  const mean = (span(0, n) + label) / lines;
  // cost[l][m]: the best layout of tokens 0..m-1 in l+1 lines; from[l][m]: where its last line starts.
  const cost = Array.from({ length: lines }, () => new Array<number>(n + 1).fill(Infinity));
  const from = Array.from({ length: lines }, () => new Array<number>(n + 1).fill(-1));
  const lineCost = (l: number, a: number, m: number): number => {
    const len = span(a, m) + (l === 0 ? label : 0);
    if (len > width) return Infinity;
    return (BALANCE_WEIGHT * (len - mean) ** 2) / width ** 2 + (TOP_SHORTER_WEIGHT * len * (lines - l)) / width;
  };
  for (let m = 1; m <= n; m++) cost[0]![m] = lineCost(0, 0, m);
  for (let l = 1; l < lines; l++) {
    for (let m = l + 1; m <= n; m++) {
      for (let a = m - 1; a >= l; a--) {
        const c = lineCost(l, a, m);
        if (c === Infinity) break;
        const total = cost[l - 1]![a]! + breakCost(a) + c;
        if (total < cost[l]![m]!) {
          cost[l]![m] = total;
          from[l]![m] = a;
        }
      }
    }
  }
  const breaks: number[] = [];
  for (let l = lines - 1, m = n; l > 0; l--) {
    m = from[l]![m]!;
    breaks.unshift(m);
  }
  return breaks;
}
