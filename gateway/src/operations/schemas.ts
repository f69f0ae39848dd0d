/**
 * Input schemas shared by REST and MCP (zod): one definition of each AI operation's parameters,
 * so both front ends accept and refuse exactly the same input. Issues become invalid_request with
 * `param` set to the offending field.
 */
import { z } from 'zod';
import { ASK_QUESTION_MAX_CHARS, invalidParam, MAX_INSTRUCTIONS_CHARS, MAX_SPEAKER_NAME_CHARS, MurmurError, SEARCH_SOURCE_TYPES, SPEAKER_ID_PATTERN } from '@murmur/contract';

/** A UTF-16 surrogate without its partner: what JSON's `"\ud800"` decodes to, and no UTF-8 can hold. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Why `value` is not acceptable text, or null. Every string a client sends (query parameter,
 * JSON field, MCP argument) passes this one rule: a lone surrogate would be silently replaced
 * by U+FFFD on its way to Postgres (a different string than the one sent), and NUL is a byte
 * Postgres text cannot store, so both are refused at the edge, before any work starts.
 */
export function textProblem(value: string): string | null {
  if (LONE_SURROGATE.test(value)) return 'must be valid Unicode text (it contains a lone UTF-16 surrogate)';
  if (value.includes('\u0000')) return 'must not contain NUL characters';
  return null;
}

/**
 * Checks every string inside `value` (keys too; objects and arrays walked without recursion, so
 * JSON nested 10,000 deep is refused by the schema, not by a stack overflow) with
 * {@link textProblem}; the first bad one is invalid_request naming its path (`a.b.0`).
 */
export function checkTextFields(value: unknown): void {
  const pending: Array<[unknown, string]> = [[value, '']];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [v, path] = next;
    if (typeof v === 'string') {
      const problem = textProblem(v);
      if (problem) throw invalidParam(path || 'body', `\`${path || 'The body'}\` ${problem}.`);
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) pending.push([v[i], path ? `${path}.${i}` : String(i)]);
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, child] = entries[i]!;
        const keyProblem = textProblem(k);
        if (keyProblem) throw invalidParam(path || 'body', `A field name ${keyProblem}.`);
        pending.push([child, path ? `${path}.${k}` : k]);
      }
    }
  }
}

const isoDateTime = z.iso.datetime({ offset: true });
const isoDate = z.iso.date();

/**
 * An RFC 3339 date-time with an explicit zone, or a bare date (midnight UTC), as a Date. Real
 * calendar dates only: `2026-02-30` or `T24:00` are refused, where `new Date` would roll them over.
 */
export function parseDateTime(param: string, raw: string): Date {
  const ok = isoDateTime.safeParse(raw).success || isoDate.safeParse(raw).success;
  const d = new Date(raw);
  if (!ok || Number.isNaN(d.getTime())) {
    throw invalidParam(param, `\`${param}\` must be an ISO-8601 date-time such as 2026-01-31T00:00:00Z (or a date such as 2026-01-31) that exists in the calendar.`);
  }
  return d;
}

export const CONVERT_FORMATS = ['markdown', 'plain'] as const;

export const convertInputSchema = z
  .object({
    transcript: z.string().optional().describe('The transcript text to convert. Give this or recording_id, not both.'),
    recording_id: z.string().optional().describe('A recording of yours whose transcript to convert; the artifact is stored on it.'),
    kind: z.string().describe('What to produce: summary, email, spreadsheet, action_items, meeting_notes or key_points.'),
    outputFormat: z.enum(CONVERT_FORMATS).optional().describe('"plain" for plain text (a spreadsheet becomes CSV); omitted or "markdown" for Markdown.'),
    instructions: z.string().max(MAX_INSTRUCTIONS_CHARS).optional().describe('Free-text guidance such as length, tone or audience.'),
  })
  .strict();

export type ConvertInput = z.infer<typeof convertInputSchema>;

/** POST /ask and the `ask` tool: a question, and the search filters of GET /search. */
export const askInputSchema = z
  .object({
    question: z.string().describe(`What to ask your library, in your words (1–${ASK_QUESTION_MAX_CHARS} characters), e.g. "What did we decide about the pricing page?".`),
    type: z.array(z.enum(SEARCH_SOURCE_TYPES)).min(1).optional().describe('Only passages of these sources (default: all).'),
    folder_id: z.string().optional().describe('Only recordings in this folder (fld_…).'),
    recording_id: z.string().optional().describe('Only this recording (rec_…).'),
    created_after: z.string().optional().describe('Only sources created after this ISO-8601 time.'),
    created_before: z.string().optional().describe('Only sources created before this ISO-8601 time.'),
  })
  .strict();

export type AskInput = z.infer<typeof askInputSchema>;

/** An ask body is small: a question and filters. */
export const MAX_ASK_BODY_BYTES = 64 * 1024;

/**
 * POST /recordings/{id}/speakers: `{"names": {"S1": "Maria", "S2": ""}}` ("" clears a name). The
 * library checks each id is one of the recording's speakers and applies the name rule.
 */
export const speakerNamesInputSchema = z
  .object({
    names: z
      .record(z.string().regex(SPEAKER_ID_PATTERN, 'speaker ids are S1, S2, …'), z.string().max(MAX_SPEAKER_NAME_CHARS))
      .refine((n) => Object.keys(n).length >= 1 && Object.keys(n).length <= 50, 'must name 1–50 speakers')
      .describe(`Speaker id (S1, S2, …) → name (at most ${MAX_SPEAKER_NAME_CHARS} characters; "" clears it).`),
  })
  .strict();

/** A speaker-names body is small: 50 names of 100 characters, escaped. */
export const MAX_SPEAKER_NAMES_BODY_BYTES = 64 * 1024;

/** The largest body a convert call arrives in, REST's or MCP's: room for the largest plan's transcript, escaped. */
export const MAX_CONVERT_BODY_BYTES = 16 * 1024 * 1024;

/** Validates the text of every field, then `schema`, turning the first issue into invalid_request naming the field. */
export function parseInput<T>(schema: z.ZodType<T>, value: unknown): T {
  checkTextFields(value);
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const keys = issue.code === 'unrecognized_keys' ? (issue as { keys?: string[] }).keys ?? [] : [];
  const param = keys[0] ?? (issue.path.length > 0 ? issue.path.map(String).join('.') : null);
  const what = param ? `\`${param}\`` : 'The body';
  const detail = issue.code === 'unrecognized_keys' ? 'is not a parameter of this operation' : issue.message.replace(/^Invalid input: /, '');
  throw new MurmurError('invalid_request', `${what} ${detail}.`, { param });
}
