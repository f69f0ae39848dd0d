/**
 * How good a place is for ending a cue or a line, and how much a cue suffers from what it holds
 * inside. The cutter and the line layout weigh their choices with these; lower is better, and a
 * new cue costs 1 (see `caption-cutter.ts`), so a break dearer than 1 is worth a cue to avoid.
 */
import { CAPTION_PAUSE_SECONDS } from './caption-rules';
import { endsClause, endsSentence } from './caption-text';
import type { CaptionToken } from './caption-tokens';

/** The costs of the place after each token, computed once for a whole timeline. */
export interface BreakCosts {
  /** Ending a cue there (when the speaker goes on). */
  cueEnd: Float64Array;
  /**
   * Keeping it inside a cue: a sentence running into the next costs a little; a pause costs its
   * length in seconds (the words after it would show that much early).
   */
  cueInside: Float64Array;
  /** Ending a line there, inside a cue. */
  lineEnd: Float64Array;
}

export function breakCosts(tokens: readonly CaptionToken[]): BreakCosts {
  const n = tokens.length;
  const costs: BreakCosts = { cueEnd: new Float64Array(n), cueInside: new Float64Array(n), lineEnd: new Float64Array(n) };
  for (let k = 0; k < n; k++) {
    const here = tokens[k]!;
    const next = tokens[k + 1];
    const gap = next ? Math.max(0, next.start - here.end) : 0;
    const sentence = endsSentence(here.text);
    const pause = gap >= CAPTION_PAUSE_SECONDS;
    const clause = endsClause(here.text);
    if (next?.glue) {
      costs.cueEnd[k] = 3;
      costs.lineEnd[k] = 2;
    } else if (here.boundary || sentence || pause) {
      costs.cueEnd[k] = 0;
      costs.lineEnd[k] = 0;
    } else {
      costs.cueEnd[k] = clause ? 0.4 : 2;
      costs.lineEnd[k] = clause ? 0.2 : 0.5;
    }
    costs.cueInside[k] = (sentence ? 0.3 : 0) + (pause ? gap : 0);
  }
  return costs;
}
