/**
 * The detector table: one entry per redaction policy of the contract, saying which formats it
 * finds, how a candidate is validated, and the function that finds them. Typed as a record
 * over every policy, so a policy added to the contract without a detector does not compile.
 */
import type { RedactionPolicy } from '@murmur/contract';
import { findIbans, findNationalInsuranceNumbers } from './codes';
import { findDatesOfBirth } from './dates';
import { findEmailAddresses } from './email';
import { findIpAddresses } from './ip';
import { findCardNumbers, findPhoneNumbers, findSocialSecurityNumbers } from './number-detectors';
import type { Found, Scan } from './scan';

export interface Detector {
  /** The formats found, written and spoken. */
  formats: string;
  /** What a candidate must pass to be redacted. */
  validation: string;
  find(scan: Scan): Found[];
}

export const DETECTORS: Readonly<Record<RedactionPolicy, Detector>> = {
  email_address: {
    formats: 'john.smith@example.co.uk; "john dot smith at example dot co dot uk"; "j o h n at i b m dot com"',
    validation: 'RFC 5322 dot-atom local part (≤ 64) and host name (≤ 254 in all); spoken: a common top-level domain, no ordinary word as the local part',
    find: findEmailAddresses,
  },
  phone_number: {
    formats: '(555) 123-4567, 555.123.4567, +1 555 123 4567, +44 20 7946 0958, 0044…, 020 7946 0958, 555-1234; "five five five one two three four five six seven", "double five", "plus four four …"',
    validation: 'E.164 (+ and 8–15 digits), NANP NXX-NXX-XXXX, national trunk 0 (10–11 digits), 7-digit local only written 3-4 or said after "call", "phone", "number" …; counting ("one two three four …") is not a number',
    find: findPhoneNumbers,
  },
  credit_card_number: {
    formats: '4111 1111 1111 1111, 4111-1111-1111-1111, 3782 822463 10005; spoken digit by digit or in groups',
    validation: '13–19 digits, first digit 2–6, Luhn check digit',
    find: findCardNumbers,
  },
  iban: {
    formats: 'GB82 WEST 1234 5698 7654 32, DE89370400440532013000; spelled "g b eight two w e s t …"',
    validation: 'ISO 13616: registry country, that country\'s length, mod 97 = 1',
    find: findIbans,
  },
  us_social_security_number: {
    formats: '123-45-6789, 123 45 6789; nine digits run together or spoken after "social", "security", "SSN"',
    validation: 'no area 000, 666 or 900–999, no group 00, no serial 0000',
    find: findSocialSecurityNumbers,
  },
  ip_address: {
    formats: '192.168.1.10 (also with :port or /prefix), 2001:db8::1; "one nine two dot one sixty eight dot one dot ten"',
    validation: 'IPv4 octets 0–255; IPv6 as node:net parses it',
    find: findIpAddresses,
  },
  date_of_birth: {
    formats: 'after "born", "date of birth", "birthday", "DOB": March 15th, 1985; 15 March 1985; 03/15/1985; 1985-03-15; "the fifteenth of march nineteen eighty five"',
    validation: 'a calendar date (day within its month, 29 February only in leap years), year 1900–2099 when given',
    find: findDatesOfBirth,
  },
  uk_national_insurance_number: {
    formats: 'AB 12 34 56 C, AB123456C; spelled "a b one two three four five six c"',
    validation: 'HMRC prefix rules (no D, F, I, Q, U, V; no O second; not BG, GB, KN, NK, NT, TN, ZZ), six digits, suffix A–D',
    find: findNationalInsuranceNumbers,
  },
};
