/**
 * The validators that make a detection a value rather than a shape: checksums (Luhn, ISO 13616
 * mod 97) and the allocation rules of each number (SSN, National Insurance, NANP, E.164,
 * IPv4, calendar dates). Pure functions of the normalised candidate.
 */
import { IBAN_LENGTHS } from './iban-lengths';

/** Luhn (ISO/IEC 7812-1): the check digit of payment card numbers. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

/**
 * A payment card number: 13–19 digits (ISO/IEC 7812), a major industry identifier of 2–6
 * (Mastercard 2-series, Amex/Diners/JCB 3, Visa 4, Mastercard/Maestro 5, Discover/UnionPay 6),
 * and a valid Luhn digit.
 */
export function cardNumberValid(digits: string): boolean {
  return digits.length >= 13 && digits.length <= 19 && /^[2-6]/.test(digits) && luhnValid(digits);
}

/** An IBAN (upper case, no spaces): a registry country, its length, and mod 97 = 1 (ISO 13616). */
export function ibanValid(iban: string): boolean {
  if (!/^[A-Z]{2}[0-9]{2}[A-Z0-9]+$/.test(iban) || IBAN_LENGTHS[iban.slice(0, 2)] !== iban.length) return false;
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let rest = 0;
  for (const ch of rearranged) {
    const code = ch.charCodeAt(0);
    // Letters count as two digits (A = 10 … Z = 35); the remainder is carried digit by digit.
    rest = code >= 65 ? (rest * 100 + code - 55) % 97 : (rest * 10 + code - 48) % 97;
  }
  return rest === 1;
}

/**
 * A US Social Security number as the SSA allocates them: no area 000, 666 or 900–999, no group
 * 00, no serial 0000.
 */
export function ssnValid(digits: string): boolean {
  if (!/^[0-9]{9}$/.test(digits)) return false;
  const area = digits.slice(0, 3);
  return area !== '000' && area !== '666' && area[0] !== '9' && digits.slice(3, 5) !== '00' && digits.slice(5) !== '0000';
}

/**
 * A UK National Insurance number's letters (HMRC's NIM39110): first letter not D, F, I, Q, U or
 * V; second not those nor O; not the unallocated prefixes BG, GB, KN, NK, NT, TN, ZZ; suffix A–D.
 */
export function ninoValid(value: string): boolean {
  const m = /^([A-CEGHJ-PR-TW-Z])([A-CEGHJ-NPR-TW-Z])[0-9]{6}([A-D]?)$/.exec(value);
  return m !== null && !['BG', 'GB', 'KN', 'NK', 'NT', 'TN', 'ZZ'].includes(m[1]! + m[2]!);
}

/** Four IPv4 octets written in decimal, each 0–255 (leading zeros as some tools print them). */
export function ipv4Valid(octets: readonly string[]): boolean {
  return octets.length === 4 && octets.every((o) => /^[0-9]{1,3}$/.test(o) && Number(o) <= 255);
}

/**
 * The normalised phone number in `digits` (with `plus` when said or written with "+"), or null
 * (NANP numbers as their ten digits, other international ones as +digits):
 * - E.164: "+" then a country code (1–9…) and 8–15 digits in all;
 * - international from Europe: "00" then the same;
 * - NANP: NXX-XXX-XXXX (area code starting 2–9), optionally after 1 — the exchange's own
 *   2–9 rule is not applied: "555 123 4567" is how people (and recognisers) say a number;
 * - a national number with a trunk 0: 0 then 1–9, 10–11 digits (UK 020 7946 0958, DE 030 …);
 * - a 7-digit local NANP number NXX-XXXX, only when `local` (written so, or said after a cue).
 */
export function phoneValue(digits: string, plus: boolean, local: boolean): string | null {
  const nanp = /^1?([2-9][0-9]{9})$/.exec(digits);
  // +1 555 123 4567 and (555) 123-4567 are the same number.
  if (nanp && (!plus || digits.length === 11)) return nanp[1]!;
  if (plus) return /^[1-9][0-9]{7,14}$/.test(digits) ? `+${digits}` : null;
  if (/^00[1-9][0-9]{7,14}$/.test(digits)) return `+${digits.slice(2)}`;
  if (/^0[1-9][0-9]{8,9}$/.test(digits)) return digits;
  if (local && /^[2-9][0-9]{6}$/.test(digits)) return digits;
  return null;
}

/** A calendar date (year optional: a birthday said without one is still one); 1900–2099. */
export function dateValid(year: number | null, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  if (year !== null && (year < 1900 || year > 2099)) return false;
  const leap = year === null || (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0));
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
  return day <= days;
}
