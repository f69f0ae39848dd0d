/**
 * `text`, the segments and the words are three renderings of one transcript; they hold the
 * same letters and digits but may split and punctuate them differently (whisper's word tokens
 * cut "john@example.com" into five). What is found in `text` is carried over to the others by
 * those shared letters and digits, so all three redact exactly the same values.
 */
import type { Found } from './scan';

/** The letters and digits of a string (lower case), with the offset of each. */
export interface Letters {
  chars: string;
  at: number[];
}

export function lettersOf(s: string): Letters {
  let chars = '';
  const at: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i);
    let ch: string | null = null;
    if ((code >= 48 && code <= 57) || (code >= 97 && code <= 122)) ch = s[i]!;
    else if (code >= 65 && code <= 90) ch = String.fromCharCode(code + 32);
    else if (code > 127 && /[\p{L}\p{N}]/u.test(s[i]!)) {
      const lower = s[i]!.toLowerCase();
      ch = lower.length === 1 ? lower : s[i]!;
    }
    if (ch !== null) {
      chars += ch;
      at.push(i);
    }
  }
  return { chars, at };
}

/** The first index of `sorted` holding a value ≥ `value`. */
function lowerBound(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * `found` (offsets in `fromText`) as offsets in `toText`, or null when the two do not hold the
 * same letters and digits. Punctuation a finding begins or ends with ("(555) 123-4567") goes
 * with it when `toText` has it in the same place.
 */
export function carryOver(found: readonly Found[], fromText: string, from: Letters, toText: string, to: Letters): Found[] | null {
  if (from.chars !== to.chars) return null;
  const out: Found[] = [];
  for (const f of found) {
    const first = lowerBound(from.at, f.start);
    const last = lowerBound(from.at, f.end) - 1;
    if (first > last) return null;
    let start = to.at[first]!;
    let end = to.at[last]! + 1;
    const lead = fromText.slice(f.start, from.at[first]);
    const tail = fromText.slice(from.at[last]! + 1, f.end);
    if (lead && toText.slice(start - lead.length, start) === lead) start -= lead.length;
    if (tail && toText.slice(end, end + tail.length) === tail) end += tail.length;
    out.push({ ...f, start, end });
  }
  return out;
}
