/**
 * Input rules of the library's writes and filters, as pure functions that either return the
 * clean value or throw invalid_request naming the offending field. Keeping them here (not in
 * SQL constraints) turns bad input into a 400 with a `param`, never a Postgres error and a 500.
 */
import { charCount, checkText, isLanguageTag, MAX_LANGUAGE_CHARS, MAX_TITLE_CHARS, MurmurError, requireId, titleOf } from '@murmur/contract';

// The text rules live in the kit, shared with the gateway's checks before paid work.
export { charCount, titleOf };

/** Input limits in characters (code points), counts and seconds; the README lists them. */
export const LIMITS = {
  recordingTitle: MAX_TITLE_CHARS,
  threadTitle: 500,
  name: 200,
  description: 2000,
  query: 500,
  transcriptText: 5_000_000,
  segments: 500_000,
  language: MAX_LANGUAGE_CHARS,
  artifactContent: 5_000_000,
  itemText: 100_000,
  /** 100 days of audio: far beyond any upload, small enough to catch unit mix-ups. */
  durationSeconds: 100 * 24 * 3600,
} as const;

/** How far in the future an imported created_at may lie (clock skew between machines). */
export const CREATED_AT_SKEW_MS = 5 * 60 * 1000;

const EARLIEST_CREATED_AT = Date.UTC(1970, 0, 1);
const FILTER_MIN = Date.UTC(1, 0, 1);
const FILTER_MAX = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
const ARTIFACT_KIND = /^[a-z_]{1,40}$/;

function invalid(param: string, message: string): MurmurError {
  return new MurmurError('invalid_request', message, { param });
}


/** owner_id comes from auth (a verified principal); anything else is a caller bug. */
export function ownerIdOf(value: string): string {
  return requireId('usr', value, 'owner_id');
}

/** A required name (folders, knowledge bases): trimmed, 1–200 characters. */
export function nameOf(value: string, param = 'name'): string {
  const name = value.trim();
  if (name.length === 0) throw invalid(param, 'The name must not be empty.');
  checkText(name, param, LIMITS.name, 'The name');
  return name;
}

/** A knowledge base description: trimmed, may be empty, at most 2,000 characters. */
export function descriptionOf(value: string): string {
  const description = value.trim();
  checkText(description, 'description', LIMITS.description, 'The description');
  return description;
}

/** A duration in seconds; NaN and Infinity travel in a proto double and must stop here. */
export function durationOf(value: number): number {
  if (!Number.isFinite(value) || value < 0 || value > LIMITS.durationSeconds) {
    throw invalid('duration_seconds', `duration_seconds must be a number of seconds between 0 and ${LIMITS.durationSeconds}.`);
  }
  return value;
}

/** A full-text query: trimmed; empty means "no query". */
export function queryOf(value: string): string | undefined {
  const query = value.trim();
  if (query.length === 0) return undefined;
  checkText(query, 'query', LIMITS.query, 'The search query');
  return query;
}

/** A segment as stored (jsonb), short keys. */
export interface CleanSegment {
  start: number;
  end: number;
  text: string;
}

/** A transcript that passed {@link transcriptOf}. */
export interface CleanTranscript {
  text: string;
  language: string;
  segments: CleanSegment[];
}

/** A transcript to store: text ≤ 5,000,000 characters, a BCP-47 language or "", sane segments. */
export function transcriptOf(value: { text: string; language: string; segments: Array<{ startSeconds: number; endSeconds: number; text: string }> }): CleanTranscript {
  checkText(value.text, 'transcript.text', LIMITS.transcriptText, 'The transcript');
  const language = value.language.trim();
  if (!isLanguageTag(language)) {
    throw invalid('transcript.language', 'transcript.language must be a BCP-47 language tag such as "en" or "pt-BR", or empty.');
  }
  if (value.segments.length > LIMITS.segments) {
    throw invalid('transcript.segments', `A transcript can have at most ${LIMITS.segments.toLocaleString('en-US')} segments.`);
  }
  let segmentChars = 0;
  const segments = value.segments.map((s) => {
    if (!Number.isFinite(s.startSeconds) || !Number.isFinite(s.endSeconds) || s.startSeconds < 0 || s.endSeconds < s.startSeconds) {
      throw invalid('transcript.segments', 'Each segment needs 0 ≤ start_seconds ≤ end_seconds.');
    }
    segmentChars += s.text.length;
    if (s.text.includes('\u0000')) throw invalid('transcript.segments', 'Segment text must not contain NUL characters.');
    return { start: s.startSeconds, end: s.endSeconds, text: s.text };
  });
  if (segmentChars > LIMITS.transcriptText && segments.reduce((n, s) => n + charCount(s.text), 0) > LIMITS.transcriptText) {
    throw invalid('transcript.segments', `The segments' text must be at most ${LIMITS.transcriptText.toLocaleString('en-US')} characters in all.`);
  }
  return { text: value.text, language, segments };
}

/** An artifact kind: lower-case words joined by "_", e.g. "meeting_notes". */
export function artifactKindOf(value: string): string {
  if (!ARTIFACT_KIND.test(value)) throw invalid('kind', 'kind must be 1–40 characters of a–z and "_", e.g. "summary" or "action_items".');
  return value;
}

/** An artifact body, at most as long as a transcript. */
export function artifactContentOf(value: string): string {
  checkText(value, 'content', LIMITS.artifactContent, 'The content');
  return value;
}

/** An artifact's data: a JSON object (what Struct carries) whose JSON fits the content's bound; absent → null. */
export function artifactDataOf(value: Record<string, unknown> | undefined): Record<string, unknown> | null {
  if (value === undefined) return null;
  if (JSON.stringify(value).length > LIMITS.artifactContent) throw invalid('data', `data must be at most ${LIMITS.artifactContent.toLocaleString('en-US')} characters of JSON.`);
  return value;
}

/** Credits charged for an artifact, as billing reported them: a whole number ≥ 0. */
export function creditsOf(value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) throw invalid('credits_charged', 'credits_charged must be a whole number ≥ 0.');
  return value;
}

/** A thread item text; required for NOTE, QUESTION and ANSWER, optional on RECORDING items. */
export function itemTextOf(value: string, required: boolean): string {
  if (required && value.trim().length === 0) throw invalid('text', 'This kind of thread item needs a text.');
  checkText(value, 'text', LIMITS.itemText, 'The text');
  return value;
}

/**
 * An optional creation time for imports and seeding: not before 1970 and not in the future
 * (beyond clock skew), since a future row would sit on top of every newest-first list.
 */
export function createdAtOf(value: Date | undefined, now: Date, param = 'created_at'): Date {
  if (value === undefined) return now;
  const t = value.getTime();
  if (!Number.isFinite(t) || t < EARLIEST_CREATED_AT || t > now.getTime() + CREATED_AT_SKEW_MS) {
    throw invalid(param, `${param} must lie between 1970-01-01 and now.`);
  }
  return value;
}

/** The created_after / created_before window of a list: after < before when both are set. */
export function dateRangeOf(after: Date | undefined, before: Date | undefined): { after?: Date; before?: Date } {
  for (const [param, d] of [['created_after', after], ['created_before', before]] as const) {
    if (d !== undefined && !(d.getTime() >= FILTER_MIN && d.getTime() <= FILTER_MAX)) {
      throw invalid(param, `${param} must be a time between the years 1 and 9999.`);
    }
  }
  if (after !== undefined && before !== undefined && after.getTime() >= before.getTime()) {
    throw invalid('created_after', 'created_after must be earlier than created_before.');
  }
  return { ...(after ? { after } : {}), ...(before ? { before } : {}) };
}
