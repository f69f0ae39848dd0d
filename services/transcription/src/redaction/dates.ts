/**
 * Dates of birth: a calendar date said or written just after a cue ("date of birth", "born
 * on", "birthday", "DOB"): "March 15th, 1985", "15 March 1985", "the fifteenth of march
 * nineteen eighty five", "03/15/1985", "1985-03-15". A date anywhere else is not personal data
 * on its own and stays. Year optional; the cue words stay, the date goes.
 */
import { dateValid } from './checks';
import type { Found, Scan } from './scan';
import { spokenNumberAt, spokenOrdinalAt } from './spoken-numbers';

/** Words just before a date that make it a date of birth (and the spelled "d o b"). */
const CUE_WORDS = new Set(['born', 'birth', 'birthday', 'birthdate', 'dob', 'd.o.b']);
/** Words allowed between the cue and the date ("date of birth is the …", "born on …"). */
const FILLERS = new Set(['is', 'was', 'on', 'it', "it's", 'its', 'date', 'being', 'as', 'of', 'my', 'the', 'be', 'would', 'will']);
const MONTHS: Readonly<Record<string, number>> = {
  january: 1, jan: 1, february: 2, feb: 2, march: 3, mar: 3, april: 4, apr: 4, may: 5, june: 6, jun: 6, july: 7, jul: 7,
  august: 8, aug: 8, september: 9, sep: 9, sept: 9, october: 10, oct: 10, november: 11, nov: 11, december: 12, dec: 12,
};
/** How far after a cue a date may start, in tokens. */
const REACH = 5;

interface Part { value: number; end: number }
interface ParsedDate { year: number | null; yearDigits: number; month: number; day: number; end: number }

/** A day of the month: "15", "15th", "fifteenth", "fifteen", "twenty first". */
function dayAt(scan: Scan, i: number): Part | null {
  const t = scan.tokens[i];
  if (!t) return null;
  const written = /^([0-9]{1,2})(?:st|nd|rd|th)?$/.exec(t.norm);
  if (written) return { value: Number(written[1]), end: i + 1 };
  const words = scan.words;
  const spoken = spokenOrdinalAt(words, i) ?? spokenNumberAt(words, i);
  return spoken && spoken.value >= 1 && spoken.value <= 31 ? { value: spoken.value, end: spoken.end } : null;
}

/** A year: "1985", "'85", "nineteen eighty five", "two thousand and one", "twenty oh one", "eighty five". */
function yearAt(scan: Scan, i: number): { value: number; digits: number; end: number } | null {
  const t = scan.tokens[i];
  if (!t) return null;
  const written = /^'?([0-9]{4}|[0-9]{2})$/.exec(t.core);
  if (written && (written[1]!.length === 4 || t.core.startsWith("'"))) return { value: Number(written[1]), digits: written[1]!.length, end: i + 1 };
  const words = scan.words;
  let digits = '';
  let end = i;
  while (digits.length < 4 && (end === i || !scan.tokens[end - 1]!.endsSentence)) {
    const n = spokenNumberAt(words, end);
    if (!n || digits.length + n.digits.length > 4) break;
    digits += n.digits;
    end = n.end;
  }
  return digits.length === 4 || digits.length === 2 ? { value: Number(digits), digits: digits.length, end } : null;
}

function withYear(scan: Scan, month: number, day: Part, at: number): ParsedDate {
  const year = scan.tokens[at - 1]!.endsSentence ? null : yearAt(scan, at);
  return { year: year?.value ?? null, yearDigits: year?.digits ?? 0, month, day: day.value, end: year?.end ?? at };
}

function dateAt(scan: Scan, i: number): ParsedDate | null {
  const t = scan.tokens[i]!;
  const numeric = /^([0-9]{1,4})[/.-]([0-9]{1,2})[/.-]([0-9]{1,4})$/.exec(t.core);
  if (numeric) {
    const [a, b, c] = [numeric[1]!, numeric[2]!, numeric[3]!];
    if (a.length === 4) return { year: Number(a), yearDigits: 4, month: Number(b), day: Number(c), end: i + 1 };
    if (c.length !== 4 && c.length !== 2) return null;
    const year = Number(c);
    // 03/15/1985 (US) or 15/03/1985: whichever reading is a date.
    const mdy = dateValid(c.length === 4 ? year : null, Number(a), Number(b));
    return mdy ? { year, yearDigits: c.length, month: Number(a), day: Number(b), end: i + 1 } : { year, yearDigits: c.length, month: Number(b), day: Number(a), end: i + 1 };
  }
  const month = MONTHS[t.norm];
  if (month !== undefined && !t.endsSentence) {
    const at = scan.tokens[i + 1]?.norm === 'the' ? i + 2 : i + 1;
    const day = dayAt(scan, at);
    return day ? withYear(scan, month, day, day.end) : null;
  }
  const day = dayAt(scan, i);
  if (!day || scan.tokens[day.end - 1]!.endsSentence) return null;
  const m = scan.tokens[day.end]?.norm === 'of' ? day.end + 1 : day.end;
  const named = MONTHS[scan.tokens[m]?.norm ?? ''];
  return named === undefined ? null : withYear(scan, named, day, m + 1);
}

export function findDatesOfBirth(scan: Scan): Found[] {
  const found: Found[] = [];
  for (let c = 1; c < scan.tokens.length; c++) {
    const before = scan.words[c - 1]!;
    if (!CUE_WORDS.has(before) && !(before === 'b' && scan.cueBefore(c, ['d o b'], 3))) continue;
    for (let i = c; i < Math.min(c + REACH, scan.tokens.length); i++) {
      const d = dateAt(scan, i);
      const year = d && d.yearDigits === 4 ? d.year : null;
      if (d && dateValid(year, d.month, d.day)) {
        const iso = `${d.year === null ? '-' : String(d.year).padStart(d.yearDigits, '0')}-${String(d.month).padStart(2, '0')}-${String(d.day).padStart(2, '0')}`;
        found.push(scan.found('date_of_birth', i, d.end - 1, iso));
        c = d.end - 1;
        break;
      }
      if (!FILLERS.has(scan.tokens[i]!.norm)) break;
    }
  }
  return found;
}
