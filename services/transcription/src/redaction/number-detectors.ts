/**
 * The detectors that read number runs (digit-runs.ts): phone numbers, payment card numbers and
 * US Social Security numbers, each with its validator (checks.ts) and the cue words that make
 * an otherwise ambiguous run one of them.
 */
import { cardNumberValid, phoneValue, ssnValid } from './checks';
import { findInDigitRuns, type RunCandidate } from './digit-runs';
import type { Found, Scan } from './scan';

/** Words before an unformatted nine-digit run that make it an SSN ("my social is …"). */
const SSN_CUES = ['social', 'security', 'ssn', 's s n'];
/** Words before a spoken seven-digit run that make it a local phone number ("call five five five …"). */
const PHONE_CUES = ['call', 'phone', 'number', 'dial', 'reach', 'text', 'cell', 'mobile', 'telephone', 'fax', 'extension'];

const shapedAs = (groups: readonly number[], lengths: readonly number[]): boolean =>
  groups.length === lengths.length && groups.every((g, i) => g === lengths[i]);
const shaped = (c: RunCandidate, ...lengths: number[]): boolean => c.groups !== null && shapedAs(c.groups, lengths);

export function findPhoneNumbers(scan: Scan): Found[] {
  return findInDigitRuns(scan, 'phone_number', [7, 17], (c) => {
    const cued = (): boolean => scan.cueBefore(c.first, PHONE_CUES, 6);
    if (c.counting && !cued()) return null;
    const local = c.digits.length === 7 && (shaped(c, 3, 4) || (c.groups === null && cued()));
    return phoneValue(c.digits, c.plus, local);
  });
}

/**
 * How card numbers are grouped when written in groups: fours, the last group shorter for 13,
 * 14, 15 and 19 digits (4111 1111 1111 1111, 6011 0000 0000 0000 004); American Express
 * 4-6-5; Diners 4-6-4.
 */
function cardGrouping(groups: readonly number[] | null): boolean {
  if (groups === null || groups.length === 1) return true;
  if (shapedAs(groups, [4, 6, 5]) || shapedAs(groups, [4, 6, 4])) return true;
  const total = groups.reduce((a, b) => a + b, 0);
  const last = groups[groups.length - 1]!;
  return [13, 14, 15, 16, 19].includes(total) && last >= 1 && last <= 4 && groups.slice(0, -1).every((g) => g === 4);
}

export function findCardNumbers(scan: Scan): Found[] {
  return findInDigitRuns(scan, 'credit_card_number', [13, 19], (c) =>
    !c.plus && !c.counting && cardGrouping(c.groups) && cardNumberValid(c.digits) ? c.digits : null,
  );
}

/**
 * Written 123-45-6789 (or 123 45 6789) stands on its own; nine digits said or run together need
 * a cue, and with one even "one two three four five six seven eight nine" is taken.
 */
export function findSocialSecurityNumbers(scan: Scan): Found[] {
  return findInDigitRuns(scan, 'us_social_security_number', [9, 9], (c) =>
    !c.plus && ssnValid(c.digits) && (shaped(c, 3, 2, 4) || scan.cueBefore(c.first, SSN_CUES, 8)) ? c.digits : null,
  );
}
