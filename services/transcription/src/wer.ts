/**
 * Word error rate: (substitutions + deletions + insertions) / reference words, after the same
 * normalisation on both sides (lower case, punctuation dropped, digits spelled as words the
 * way engines write them). Used by the tests' accuracy thresholds and by the benchmark. Pure.
 */

export interface WerResult {
  wer: number;
  substitutions: number;
  deletions: number;
  insertions: number;
  referenceWords: number;
}

const DIGITS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];

/** Lower-cased words without punctuation; a lone digit becomes its word ("5" → "five"). */
export function normalizeWords(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[‘’]/g, "'")
    .replace(/[^a-z0-9' ]+/g, ' ')
    .split(/\s+/)
    .map((w) => w.replace(/^'+|'+$/g, ''))
    .filter((w) => w.length > 0)
    .flatMap((w) => (/^[0-9]+$/.test(w) ? [...w].map((d) => DIGITS[Number(d)] ?? d) : [w]));
}

/** Word-level Levenshtein alignment of `hypothesis` against `reference`. */
export function wordErrorRate(reference: string, hypothesis: string): WerResult {
  const ref = normalizeWords(reference);
  const hyp = normalizeWords(hypothesis);
  // cost[j] holds [edits, subs, dels, ins] for ref[0..i) vs hyp[0..j).
  type Cell = [number, number, number, number];
  let prev: Cell[] = hyp.map((_, j): Cell => [j + 1, 0, 0, j + 1]);
  prev.unshift([0, 0, 0, 0]);
  for (let i = 1; i <= ref.length; i++) {
    const row: Cell[] = [[i, 0, i, 0]];
    for (let j = 1; j <= hyp.length; j++) {
      const diag = prev[j - 1]!;
      const up = prev[j]!;
      const left = row[j - 1]!;
      const same = ref[i - 1] === hyp[j - 1];
      const options: Cell[] = [
        same ? [diag[0], diag[1], diag[2], diag[3]] : [diag[0] + 1, diag[1] + 1, diag[2], diag[3]],
        [up[0] + 1, up[1], up[2] + 1, up[3]],
        [left[0] + 1, left[1], left[2], left[3] + 1],
      ];
      row.push(options.reduce((a, b) => (b[0] < a[0] ? b : a)));
    }
    prev = row;
  }
  const [edits, substitutions, deletions, insertions] = prev[hyp.length]!;
  const referenceWords = ref.length;
  return {
    wer: referenceWords === 0 ? (hyp.length === 0 ? 0 : 1) : edits / referenceWords,
    substitutions,
    deletions,
    insertions,
    referenceWords,
  };
}
