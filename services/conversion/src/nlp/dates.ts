/**
 * Due dates. chrono-node reads the phrase ("by Thursday", "next Friday", "tomorrow morning")
 * against the reference time (the recording's creation time), always forward; three parsers
 * fill what chrono's English misses in speech: "end of day / the week / next week / the month",
 * "the 14th" (this month, or the next when the day has passed) and "Friday the 23rd". Dates
 * are calendar dates in UTC, written as ISO `YYYY-MM-DD`.
 */
import * as chrono from 'chrono-node';

const DAY_MS = 86_400_000;

function isoOf(year: number, month: number, day: number): string {
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

function utcParts(d: Date): { year: number; month: number; day: number } {
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

/** "end of day / week / next week / month / quarter / year", "EOD", "EOW", "EOM". */
const endOfParser: chrono.Parser = {
  pattern: () => /\b(?:(?:the\s+)?end\s+of\s+(?:the\s+|this\s+|(next)\s+)?(day|week|month|quarter|year)|(EOD|EOW|EOM))\b/i,
  extract(context, match) {
    const ref = context.reference.instant;
    const unit = (match[2] ?? { EOD: 'day', EOW: 'week', EOM: 'month' }[(match[3] ?? '').toUpperCase()] ?? 'day').toLowerCase();
    const next = match[1] !== undefined;
    let at: Date;
    if (unit === 'day') at = new Date(ref.getTime() + (next ? DAY_MS : 0));
    else if (unit === 'week') {
      // The working week ends on Friday; said on a weekend, "end of the week" is that Sunday.
      const weekday = ref.getUTCDay();
      const toFriday = weekday === 6 ? 1 : weekday === 0 ? 0 : 5 - weekday;
      at = new Date(ref.getTime() + (toFriday + (next ? 7 : 0)) * DAY_MS);
    } else if (unit === 'month') at = new Date(Date.UTC(ref.getUTCFullYear(), ref.getUTCMonth() + (next ? 2 : 1), 0));
    else if (unit === 'quarter') {
      const q = Math.floor(ref.getUTCMonth() / 3) + (next ? 1 : 0);
      at = new Date(Date.UTC(ref.getUTCFullYear(), q * 3 + 3, 0));
    } else at = new Date(Date.UTC(ref.getUTCFullYear() + (next ? 1 : 0), 11, 31));
    return { ...utcParts(at) };
  },
};

/** "the 14th", optionally after a weekday ("Friday the 23rd"): this month, or next if past. */
const dayOfMonthParser: chrono.Parser = {
  pattern: () =>
    /\b(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day,?\s+)?the\s+(\d{1,2})(?:st|nd|rd|th)\b(?!\s+(?:of\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))/i,
  extract(context, match) {
    const day = Number(match[1]);
    if (day < 1 || day > 31) return null;
    const ref = context.reference.instant;
    let year = ref.getUTCFullYear();
    let month = ref.getUTCMonth() + 1;
    if (day < ref.getUTCDate()) {
      month += 1;
      if (month > 12) {
        month = 1;
        year += 1;
      }
    }
    return { year, month, day };
  },
};

/**
 * Dates are read from the start of the reference day, so the hour of the recording never
 * changes a deadline: "by Friday" said on a Friday is that day, morning or evening.
 */
function startOfDay(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
}

const parser = chrono.casual.clone();
parser.parsers.push(endOfParser, dayOfMonthParser);

/** A due date found in a sentence: its ISO date and the span of the phrase, preposition included. */
export interface DueMatch {
  iso: string;
  /** Start of the phrase in the text, including a leading "by" / "before" / "on" / …. */
  start: number;
  end: number;
}

const DUE_PREPOSITION = /(?:\b(?:by|before|until|till|due|on|no later than|for)\s+(?:the\s+)?)$/i;
const RELATIVE_START = /^(?:next|this|tomorrow|today|tonight|end|the end|eod|eow|eom|in\s+(?:a|an|one|two|three|four|\d+)\s+(?:day|week)s?)\b/i;
const NOT_DUE = /^(?:\d+\s*(?:minutes?|hours?|seconds?|mins?)|for\b|(?:in\s+)?the\s+(?:morning|afternoon|evening))/i;

/**
 * The due date of an action sentence: the first date phrase that reads like a deadline (after
 * by / before / until / due / on, or a relative phrase such as "tomorrow" or "next week").
 */
export function findDue(text: string, reference: Date): DueMatch | null {
  const results = parser.parse(text, { instant: startOfDay(reference), timezone: 'UTC' }, { forwardDate: true });
  for (const r of results) {
    const phrase = r.text;
    if (NOT_DUE.test(phrase)) continue;
    if (!r.start.isCertain('day') && !r.start.isCertain('weekday') && !r.start.isCertain('month')) continue;
    const before = text.slice(0, r.index);
    const prep = DUE_PREPOSITION.exec(before);
    if (!prep && !RELATIVE_START.test(phrase)) continue;
    const year = r.start.get('year');
    const month = r.start.get('month');
    const day = r.start.get('day');
    if (year === null || month === null || day === null) continue;
    const start = prep ? r.index - prep[0].length : r.index;
    return { iso: isoOf(year, month, day), start, end: r.index + phrase.length };
  }
  return null;
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * A due date an LLM wrote, as ISO: an ISO date is kept when valid, anything else ("Thursday",
 * "end of the week") is read against `reference`; unreadable or empty → "".
 */
export function normalizeDue(value: string, reference: Date): string {
  const v = value.trim();
  if (v === '') return '';
  const iso = ISO_DATE.exec(v);
  if (iso) {
    const d = new Date(Date.UTC(Number(iso[1]), Number(iso[2]) - 1, Number(iso[3])));
    return Number.isNaN(d.getTime()) || d.getUTCDate() !== Number(iso[3]) ? '' : v;
  }
  const r = parser.parse(v, { instant: startOfDay(reference), timezone: 'UTC' }, { forwardDate: true })[0];
  const year = r?.start.get('year');
  const month = r?.start.get('month');
  const day = r?.start.get('day');
  return r && year && month && day ? isoOf(year, month, day) : '';
}

/** The calendar date of an instant, ISO, in UTC. */
export function isoDate(at: Date): string {
  const p = utcParts(at);
  return isoOf(p.year, p.month, p.day);
}

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

/** "Fri 2026-01-16": the ISO date with its weekday, for text people read. */
export function withWeekday(iso: string): string {
  const m = ISO_DATE.exec(iso);
  if (!m) return iso;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return `${WEEKDAYS[d.getUTCDay()]} ${iso}`;
}
