/**
 * Runs of numbers — spoken ("five five five one two three four"), written ("555-123-4567",
 * "4111 1111 1111 1111") or mixed — and the values found in them: the whole run when it
 * validates, else the longest validating stretch from the left, so two numbers said one after
 * the other are both found. Phone, card and SSN detectors share this; each says what it accepts.
 */
import type { RedactionPolicy } from '@murmur/contract';
import type { NumLexeme } from './lexemes';
import { ibanShapedTokens } from './codes';
import type { Found, Scan } from './scan';

/** A stretch of a run, as a detector judges it. */
export interface RunCandidate {
  digits: string;
  /** Said or written with "+" before it. */
  plus: boolean;
  /** Digit-group lengths as written across the stretch; null when any of it was spoken. */
  groups: number[] | null;
  /** Index of the first token (the "+" when there is one). */
  first: number;
  /**
   * "One two three four five six seven eight nine ten", "… nine ten ten nine eight": four or
   * more numbers, each one more, one less or the same as the one before, mostly moving —
   * counting, unless a cue says otherwise.
   */
  counting: boolean;
}

/** Longest stretch judged, in numbers: a longer run is read in windows of this size. */
const MAX_RUN = 40;
/**
 * Digits of a spoken run that may be left over when values are found in it ("… four five six
 * seven eight", one digit too many); with more left over, the run is something else — a card
 * number with a bad check digit is not a phone number and some digits.
 */
const SPOKEN_LEFTOVER = 2;

interface Run {
  nums: NumLexeme[];
  /** The token of a "plus" before the first number, or -1. */
  plusToken: number;
}

/** Whether the words just before lexeme `i` are a written code with digits ("XX82 WEST 1234 …"). */
function followsCode(scan: Scan, i: number): boolean {
  for (let k = i - 1; k >= 0; k--) {
    const l = scan.lexemes[k]!;
    if (l.kind !== 'word' || l.code === null || scan.tokens[l.last]!.endsSentence) return false;
    if (/[0-9]/.test(l.code)) return true;
  }
  return false;
}

/** The runs of numbers of `scan`, except those continuing a written code. */
function runsOf(scan: Scan): Run[] {
  return scan.memo('digit-runs', () => {
    const runs: Run[] = [];
    let current: Run | null = null;
    const lex = scan.lexemes;
    const close = () => {
      if (current && current.nums.length > 0) runs.push(current);
      current = null;
    };
    for (let i = 0; i < lex.length; i++) {
      const l = lex[i]!;
      const next = lex[i + 1];
      if (l.kind === 'num') {
        if (!current && followsCode(scan, i)) {
          while (lex[i + 1]?.kind === 'num' && !scan.tokens[lex[i]!.last]!.endsSentence) i++;
          continue;
        }
        current ??= { nums: [], plusToken: -1 };
        current.nums.push(l);
        if (current.nums.length === MAX_RUN) close();
      } else if (l.kind === 'sym' && l.char === '+' && next?.kind === 'num' && !scan.tokens[l.last]!.endsSentence) {
        close();
        current = { nums: [], plusToken: l.first };
        continue;
      } else if (!(current && l.kind === 'sym' && l.char === '-' && next?.kind === 'num')) {
        // A spoken or written dash between numbers belongs to the run; anything else ends it.
        close();
      }
      if (scan.tokens[l.last]!.endsSentence) close();
    }
    close();
    return runs;
  });
}

function isCounting(nums: readonly NumLexeme[]): boolean {
  if (nums.length < 4) return false;
  let moves = 0;
  for (let k = 1; k < nums.length; k++) {
    const step = nums[k]!.value - nums[k - 1]!.value;
    if (step !== 1 && step !== -1 && step !== 0) return false;
    if (step !== 0) moves += 1;
  }
  return moves * 2 > nums.length - 1;
}

function candidateOf(run: Run, from: number, to: number): RunCandidate {
  const nums = run.nums.slice(from, to);
  const spokenPlus = from === 0 && run.plusToken >= 0;
  const written = nums.every((n) => n.groups !== null);
  return {
    digits: nums.map((n) => n.digits).join(''),
    plus: spokenPlus || nums[0]!.plus,
    groups: written ? nums.flatMap((n) => n.groups!) : null,
    first: spokenPlus ? run.plusToken : nums[0]!.first,
    counting: isCounting(nums),
  };
}

/**
 * The values `accept` finds in the number runs of `scan`: it returns the normalised value of a
 * candidate it takes, or null. Only stretches of `digits[0]`–`digits[1]` digits are judged.
 */
export function findInDigitRuns(scan: Scan, policy: RedactionPolicy, digits: readonly [number, number], accept: (c: RunCandidate) => string | null): Found[] {
  const [minDigits, maxDigits] = digits;
  const found: Found[] = [];
  const inIban = ibanShapedTokens(scan);
  for (const run of runsOf(scan)) {
    if (inIban.has(run.nums[0]!.first)) continue;
    const n = run.nums.length;
    let total = 0;
    for (const num of run.nums) total += num.digits.length;
    if (total < minDigits) continue;
    const inRun: Found[] = [];
    let matched = 0;
    // Digits before each number of the run, to size a stretch without building it.
    const before = [0];
    for (const num of run.nums) before.push(before[before.length - 1]! + num.digits.length);
    for (let from = 0; from < n; ) {
      let taken = 0;
      for (let to = n; to > from && taken === 0; to--) {
        const size = before[to]! - before[from]!;
        if (size < minDigits) break;
        if (size > maxDigits) continue;
        const candidate = candidateOf(run, from, to);
        const value = accept(candidate);
        if (value !== null) {
          inRun.push(scan.found(policy, candidate.first, run.nums[to - 1]!.last, value));
          matched += size;
          taken = to;
        }
      }
      from = taken > 0 ? taken : from + 1;
    }
    const spoken = run.nums.some((num) => num.groups === null);
    if (!spoken || total - matched <= SPOKEN_LEFTOVER) found.push(...inRun);
  }
  return found;
}
