/**
 * The public rules of a transcript's timeline options (issue 32; docs/timelines.md): how many
 * key terms and of what, how many speakers may be expected, what a speaker's name may be, and
 * `language: "auto"`. The gateway checks them before any paid work, the transcription service
 * again for direct gRPC callers, and the OpenAPI document and the MCP schemas publish them.
 */
import { invalidParam } from './errors';
import { charCount, isLanguageTag, LANGUAGE_TAG } from './text-rules';

/** Most key terms one call may carry (the whisper prompt holds ~224 tokens). */
export const MAX_KEYTERMS = 50;
/** Longest key term, in characters. */
export const MAX_KEYTERM_CHARS = 50;
/** A key term: letters (any script), digits, spaces, apostrophes, hyphens, periods, ampersands. */
export const KEYTERM_PATTERN = /^[\p{L}\p{M}\p{N}][\p{L}\p{M}\p{N} '’.&-]*$/u;
/** The same rule as a JSON Schema / OpenAPI pattern (ECMA-262 with the `u` flag). */
export const KEYTERM_PATTERN_SOURCE = KEYTERM_PATTERN.source;

/**
 * Longest audio diarized in one call: the diarizer holds about four times the audio's samples
 * (measured: ~1 GiB for an hour), so two hours stay near 2 GiB. Longer audio with `diarize` is
 * audio_too_large naming `diarize`, released before anything is charged.
 */
export const MAX_DIARIZED_SECONDS = 2 * 60 * 60;

/** Most speakers a call may say to expect. */
export const MAX_SPEAKERS_EXPECTED = 10;

/** Longest speaker name, in characters. */
export const MAX_SPEAKER_NAME_CHARS = 100;

/** The `language` that asks the engine to detect the language. */
export const AUTO_LANGUAGE = 'auto';

/** A transcription's `language` option: a tag by {@link LANGUAGE_TAG}, or {@link AUTO_LANGUAGE}. */
export const LANGUAGE_OPTION = new RegExp(`^(?:${AUTO_LANGUAGE}|${LANGUAGE_TAG.source.replace(/^\^|\$$/g, '')})$`);

export function isLanguageOption(value: string): boolean {
  return value === AUTO_LANGUAGE || isLanguageTag(value);
}

/** Checks `keyterms`; returns them trimmed, duplicates (ignoring case) dropped. */
export function keytermsOf(value: readonly unknown[] | undefined, param = 'keyterms'): string[] {
  if (value === undefined) return [];
  if (value.length > MAX_KEYTERMS) throw invalidParam(param, `\`${param}\` holds at most ${MAX_KEYTERMS} terms.`);
  const seen = new Set<string>();
  const terms: string[] = [];
  for (const raw of value) {
    if (typeof raw !== 'string') throw invalidParam(param, `\`${param}\` must be a list of strings.`);
    const term = raw.trim().replace(/\s+/g, ' ');
    if (term === '' || charCount(term) > MAX_KEYTERM_CHARS || !KEYTERM_PATTERN.test(term)) {
      throw invalidParam(param, `Each of \`${param}\` must be 1–${MAX_KEYTERM_CHARS} characters of letters, digits, spaces and ' . & - (starting with a letter or digit).`);
    }
    const key = term.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    terms.push(term);
  }
  return terms;
}

/** Checks `speakers_expected` (absent or 0 → let diarization decide). */
export function speakersExpectedOf(value: number | undefined, diarize: boolean, param = 'speakers_expected'): number {
  if (value === undefined || value === 0) return 0;
  if (!Number.isInteger(value) || value < 1 || value > MAX_SPEAKERS_EXPECTED) {
    throw invalidParam(param, `\`${param}\` must be an integer from 1 to ${MAX_SPEAKERS_EXPECTED}.`);
  }
  if (!diarize) throw invalidParam(param, `\`${param}\` applies with \`diarize: true\`.`);
  return value;
}

/** Checks a speaker's name ("" clears it): no control characters, at most {@link MAX_SPEAKER_NAME_CHARS}. */
export function speakerNameOf(value: unknown, param: string): string {
  if (typeof value !== 'string') throw invalidParam(param, `\`${param}\` must be a string ("" clears the name).`);
  const name = value.trim();
  // eslint-disable-next-line no-control-regex
  if (charCount(name) > MAX_SPEAKER_NAME_CHARS || /[\u0000-\u001f\u007f]/.test(name)) {
    throw invalidParam(param, `A speaker's name is at most ${MAX_SPEAKER_NAME_CHARS} characters, without control characters.`);
  }
  return name;
}
