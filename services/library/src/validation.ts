/**
 * Input rules of the library's writes and filters, as pure functions that either return the
 * clean value or throw invalid_request naming the offending field. Keeping them here (not in
 * SQL constraints) turns bad input into a 400 with a `param`, never a Postgres error and a 500.
 */
import { charCount, checkText, isLanguageTag, MAX_LANGUAGE_CHARS, MAX_TITLE_CHARS, MurmurError, requireId, SEARCH_QUERY_MAX_CHARS, SPEAKER_ID_PATTERN, speakerNameOf, titleOf } from '@murmur/contract';
import { timeline, type library } from '@murmur/proto';

// The text rules live in the kit, shared with the gateway's checks before paid work.
export { charCount, titleOf };

/** Input limits in characters (code points), counts and seconds; the README lists them. */
export const LIMITS = {
  recordingTitle: MAX_TITLE_CHARS,
  threadTitle: 500,
  name: 200,
  description: 2000,
  query: SEARCH_QUERY_MAX_CHARS,
  transcriptText: 5_000_000,
  segments: 500_000,
  /** Words of one transcript: 100 days of audio would be ~1.4 M; 12 h of fast speech ~150 k. */
  words: 2_000_000,
  /** Longest word, in characters (a redaction marker included). */
  wordChars: 200,
  speakers: 50,
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
  /** Absent when unknown. */
  speaker?: string;
}

/** A transcript that passed {@link transcriptOf}. */
export interface CleanTranscript {
  text: string;
  language: string;
  segments: CleanSegment[];
  /** murmur.timeline.v1.Words as stored (bytes); null when there are none or they were not read. */
  words: Uint8Array | null;
  wordCount: number;
  speakers: Array<{ id: string; name: string }>;
}

/** A transcript to store: text ≤ 5,000,000 characters, a BCP-47 language or "", sane segments. */
export function transcriptOf(value: library.Transcript): CleanTranscript {
  checkText(value.text, 'transcript.text', LIMITS.transcriptText, 'The transcript');
  const language = value.language.trim();
  if (!isLanguageTag(language)) {
    throw invalid('transcript.language', 'transcript.language must be a BCP-47 language tag such as "en" or "pt-BR", or empty.');
  }
  if (value.segments.length > LIMITS.segments) {
    throw invalid('transcript.segments', `A transcript can have at most ${LIMITS.segments.toLocaleString('en-US')} segments.`);
  }
  const speakers = speakersOf(value.timeline?.speakers ?? []);
  const speakerIds = new Set(speakers.map((s) => s.id));
  let segmentChars = 0;
  const segments = value.segments.map((s) => {
    if (!Number.isFinite(s.startSeconds) || !Number.isFinite(s.endSeconds) || s.startSeconds < 0 || s.endSeconds < s.startSeconds) {
      throw invalid('transcript.segments', 'Each segment needs 0 ≤ start_seconds ≤ end_seconds.');
    }
    segmentChars += s.text.length;
    if (s.text.includes('\u0000')) throw invalid('transcript.segments', 'Segment text must not contain NUL characters.');
    if (s.speaker && !speakerIds.has(s.speaker)) throw invalid('transcript.segments', `A segment names speaker "${s.speaker.slice(0, 10)}", which is not among the transcript's speakers.`);
    return { start: s.startSeconds, end: s.endSeconds, text: s.text, ...(s.speaker ? { speaker: s.speaker } : {}) };
  });
  if (segmentChars > LIMITS.transcriptText && segments.reduce((n, s) => n + charCount(s.text), 0) > LIMITS.transcriptText) {
    throw invalid('transcript.segments', `The segments' text must be at most ${LIMITS.transcriptText.toLocaleString('en-US')} characters in all.`);
  }
  const w = value.timeline?.words;
  const words = w && w.text.length > 0 ? wordsOf(w, speakers.length) : null;
  return { text: value.text, language, segments, words, wordCount: w?.text.length ?? 0, speakers };
}

function speakersOf(value: readonly timeline.Speaker[]): Array<{ id: string; name: string }> {
  if (value.length > LIMITS.speakers) throw invalid('transcript.speakers', `A transcript can have at most ${LIMITS.speakers} speakers.`);
  const seen = new Set<string>();
  return value.map((s) => {
    if (!SPEAKER_ID_PATTERN.test(s.id) || seen.has(s.id)) throw invalid('transcript.speakers', 'Speaker ids are S1, S2, … each once.');
    seen.add(s.id);
    return { id: s.id, name: speakerNameOf(s.name, 'transcript.speakers') };
  });
}

/** Checks the columns (one length, times in order, speakers known) and answers the bytes to store. */
function wordsOf(w: timeline.Words, speakerCount: number): Uint8Array {
  const n = w.text.length;
  const bad = (why: string) => invalid('transcript.words', why);
  if (n > LIMITS.words) throw bad(`A transcript can have at most ${LIMITS.words.toLocaleString('en-US')} words.`);
  if (w.startMs.length !== n || w.endMs.length !== n) throw bad('Every word needs a start_ms and an end_ms.');
  if ((w.confidence.length !== 0 && w.confidence.length !== n) || (w.speaker.length !== 0 && w.speaker.length !== n)) {
    throw bad('confidence and speaker have one entry per word, or none.');
  }
  for (let i = 0; i < n; i++) {
    const text = w.text[i]!;
    if (text === '' || text.length > LIMITS.wordChars || /[\u0000\n\r]/.test(text)) throw bad(`Word ${i} must be 1–${LIMITS.wordChars} characters without line breaks.`);
    if (w.endMs[i]! < w.startMs[i]! || (i > 0 && w.startMs[i]! < w.startMs[i - 1]!)) throw bad(`Word ${i}'s times are out of order.`);
    if (w.confidence.length && !(w.confidence[i]! >= 0 && w.confidence[i]! <= 1)) throw bad(`Word ${i}'s confidence must be 0–1.`);
    if (w.speaker.length && w.speaker[i]! > speakerCount) throw bad(`Word ${i} names a speaker the transcript does not have.`);
  }
  return timeline.Words.encode(w).finish();
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
