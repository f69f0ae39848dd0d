/**
 * Rules for user text that is stored (titles, language tags), in one home: the library applies
 * them when it writes, and the gateway applies the same rules to a request's options before any
 * paid work starts — a title the library would refuse must fail before a transcription is
 * charged, not after.
 */
import { MurmurError } from './errors';

/** Longest recording title, in characters (code points). */
export const MAX_TITLE_CHARS = 500;
/** Longest BCP-47 language tag accepted. */
export const MAX_LANGUAGE_CHARS = 35;
/** A BCP-47 tag as far as we check it: a 2–3 letter language and optional subtags ("en", "pt-BR"). */
export const LANGUAGE_TAG = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/;

/** Characters as Postgres counts them (code points), computed only when it can matter. */
export function charCount(s: string): number {
  if (s.length === 0) return 0;
  const pairs = s.match(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g);
  return s.length - (pairs ? pairs.length : 0);
}

/** Throws invalid_request naming `param` when `value` is longer than `max` characters or holds NUL. */
export function checkText(value: string, param: string, max: number, label: string): void {
  // A string of at most `max` UTF-16 units has at most `max` code points: skip the count.
  if (value.length > max && charCount(value) > max) {
    throw new MurmurError('invalid_request', `${label} must be at most ${max.toLocaleString('en-US')} characters.`, { param });
  }
  // Postgres text and jsonb cannot hold U+0000.
  if (value.includes('\u0000')) throw new MurmurError('invalid_request', `${label} must not contain NUL characters.`, { param });
}

/** An optional title (recordings, threads): trimmed, may be empty. */
export function titleOf(value: string, max: number, param = 'title'): string {
  const title = value.trim();
  checkText(title, param, max, 'The title');
  return title;
}

/** True for "" or a language tag of at most {@link MAX_LANGUAGE_CHARS} characters. */
export function isLanguageTag(value: string): boolean {
  return value === '' || (value.length <= MAX_LANGUAGE_CHARS && LANGUAGE_TAG.test(value));
}

/** The title of a saved transcription that was given none: "Transcription 2026-11-25 16:10" (UTC). */
export function transcriptionTitle(at: Date): string {
  return `Transcription ${at.toISOString().slice(0, 16).replace('T', ' ')}`;
}

/** A file name or media type kept only as a hint: control characters dropped, at most 255 characters. */
export function hintOf(value: string): string {
  return value.replace(/[\u0000-\u001f\u007f]/g, '').slice(0, 255);
}
