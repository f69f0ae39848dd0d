/**
 * The public JSON shapes as zod schemas — the one description of what each operation returns.
 * MCP tools declare them as output schemas; the OpenAPI document is generated from them.
 * `present.ts` builds values of these shapes from the services' messages.
 */
import { ANSWER_MODES, JOB_STATUS_NAMES, LISTEN_TOKEN_PATTERN, LISTEN_TOKEN_TTL_SECONDS, SEARCH_RANKINGS, SEARCH_SOURCE_TYPES } from '@murmur/contract';
import { z } from 'zod';

const isoTime = z.string().describe('ISO-8601 UTC time');
const nullableTime = isoTime.nullable();


const actionItemDataShape = z.object({
  task: z.string().describe('What to do, starting with a verb'),
  owner: z.string().describe('A person named in the transcript, "Speaker" for the person talking, "Team" for "we", or "Unassigned"'),
  due: z.string().nullable().describe('YYYY-MM-DD, or null when no deadline was said'),
});

/**
 * An artifact as data (services/conversion/src/artifact-data.ts makes it), one shape per kind:
 * what a program reads instead of parsing `content`.
 */
export const artifactDataShape = z.union([
  z.object({ items: z.array(actionItemDataShape) }).describe('action_items'),
  z
    .object({ title: z.string(), columns: z.array(z.string()), rows: z.array(z.record(z.string(), z.string())) })
    .describe('spreadsheet: each row keyed by its column name in snake_case ("Due date" → due_date); an action-item table is {owner, task, due}'),
  z.object({ title: z.string(), sentences: z.array(z.string()), next_steps: z.array(actionItemDataShape) }).describe('summary'),
  z.object({ title: z.string(), points: z.array(z.string()) }).describe('key_points'),
  z.object({ subject: z.string(), body: z.string().describe('The message after its subject, as plain text') }).describe('email'),
  z
    .object({
      title: z.string(),
      date: z.string().nullable().describe('YYYY-MM-DD'),
      attendees: z.array(z.string()),
      people_mentioned: z.array(z.string()),
      discussion: z.array(z.string()),
      decisions: z.array(z.string()),
      action_items: z.array(actionItemDataShape),
    })
    .describe('meeting_notes'),
]);

/** An artifact: what POST /convert and the `convert` tool answer, and what a recording lists. */
export const artifactShape = z.object({
  id: z.string().describe('art_…'),
  object: z.literal('artifact'),
  kind: z.string(),
  format: z.enum(['markdown', 'plain']),
  content: z.string(),
  data: artifactDataShape.nullable().describe('The artifact as data, by kind (what a program reads instead of parsing `content`); null for artifacts made before it was kept'),
  credits_charged: z.number().int(),
  recording_id: z.string().nullable(),
  created_at: nullableTime,
});

export const segmentShape = z.object({
  start: z.number(),
  end: z.number(),
  text: z.string(),
  speaker: z.string().nullable().describe('The speaker’s id (S1, S2, …) with diarization; else null'),
});

export const speakerShape = z.object({
  id: z.string().describe('S1, S2, … in order of first appearance'),
  name: z.string().nullable().describe('The name you gave the speaker (POST /recordings/{id}/speakers); null until then'),
});

export const wordShape = z.object({
  text: z.string(),
  start: z.number().describe('Seconds from the start of the audio'),
  end: z.number(),
  confidence: z.number().min(0).max(1).nullable().describe('0–1; null when the engine reports none'),
  speaker: z.string().nullable().describe('The speaker’s id with diarization; else null'),
});

const wordsField = z.array(wordShape).optional().describe('Each word with its times (only with `words=true`; see docs/timelines.md for which engines know them)');
const speakersField = z.array(speakerShape).describe('The speakers diarization found (`diarize: true`); empty otherwise');

export const recordingSummaryShape = z.object({
  id: z.string().describe('rec_…'),
  object: z.literal('recording'),
  title: z.string(),
  folder_id: z.string().nullable(),
  duration_seconds: z.number(),
  preview: z.string().describe('The opening of the transcript'),
  created_at: nullableTime,
  updated_at: nullableTime,
});

export const recordingShape = recordingSummaryShape.extend({
  transcript: z
    .object({
      text: z.string(),
      language: z.string().nullable(),
      segments: z.array(segmentShape),
      word_count: z.number().int().describe('How many words are stored with their times (read them with `words=true`)'),
      speakers: speakersField,
      words: wordsField,
    })
    .nullable(),
  artifacts: z.array(artifactShape),
});

export const threadSummaryShape = z.object({
  id: z.string().describe('thr_…'),
  object: z.literal('thought_thread'),
  title: z.string(),
  item_count: z.number().int(),
  created_at: nullableTime,
  updated_at: nullableTime,
});

export const threadShape = threadSummaryShape.extend({
  items: z.array(
    z.object({
      id: z.string(),
      kind: z.enum(['note', 'recording', 'question', 'answer']),
      text: z.string(),
      recording_id: z.string().nullable(),
      created_at: nullableTime,
    }),
  ),
  context_sources: z.array(
    z.object({
      id: z.string(),
      kind: z.enum(['recording', 'folder', 'knowledge_base']),
      ref_id: z.string(),
      title: z.string(),
      added_at: nullableTime,
    }),
  ),
});

export const folderShape = z.object({
  id: z.string().describe('fld_…'),
  object: z.literal('folder'),
  name: z.string(),
  recording_count: z.number().int(),
  created_at: nullableTime,
  updated_at: nullableTime,
});

export const knowledgeBaseShape = z.object({
  id: z.string().describe('kb_…'),
  object: z.literal('knowledge_base'),
  name: z.string(),
  description: z.string(),
  recording_count: z.number().int(),
  created_at: nullableTime,
  updated_at: nullableTime,
});

export function listShape<T extends z.ZodTypeAny>(item: T) {
  return z.object({
    object: z.literal('list'),
    data: z.array(item),
    has_more: z.boolean(),
    next_cursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page'),
  });
}

/** One call of the caller's request log (GET /requests). Never a body, a key or a token. */
export const requestLogEntryShape = z.object({
  object: z.literal('request'),
  id: z.string().describe('The request id (req_…), as the call’s X-Request-Id and error body carried it'),
  created_at: z.string().describe('ISO-8601 UTC time'),
  method: z.string().describe('The HTTP method'),
  route: z.string().describe('The route’s template (`/api/v1/recordings/{id}`), or `/mcp`; never the path with your ids in it'),
  tool: z.string().nullable().describe('For /mcp: the tool called, or the JSON-RPC method (`tools/list`); null for REST'),
  status: z.number().int().describe('The HTTP status; 499 when your client went away before the answer was complete'),
  error_code: z.string().nullable().describe('The error code answered (an MCP tool’s isError result too); null on success'),
  latency_ms: z.number().describe('From the request’s arrival at the gateway to the answer’s last byte'),
  key_id: z.string().nullable().describe('The key (key_…) or OAuth connection (con_…) the call was made with'),
  key_hint: z.string().nullable().describe('That key’s display hint (`svc_1a2b…9f0e`); null for OAuth connections'),
  oauth_client_id: z.string().nullable().describe('The OAuth client a token was issued to; null for API keys'),
  trace_id: z.string().nullable().describe('The call’s W3C trace id (32 hex), when the gateway traces; quote it with the request id'),
  bytes_in: z.number().int().describe('The request body’s bytes (Content-Length, or counted for a chunked body)'),
  bytes_out: z.number().int().describe('The answer body’s bytes (Content-Length, or counted for a streamed answer, headers included)'),
  credits_charged: z.number().int().describe('AI Credits the call charged: 0 for reads, refusals, failures and replays'),
});

/** One passage found by GET /search and the `search` tool. */
export const searchResultShape = z.object({
  object: z.literal('search_result'),
  type: z.enum(SEARCH_SOURCE_TYPES).describe('What the passage was cut from'),
  id: z.string().describe('The recording, thread or knowledge base (rec_…, thr_…, kb_…)'),
  passage_id: z.string().describe('psg_…: the passage, as `ask` cites it. A new transcript of the recording makes new passages.'),
  title: z.string().describe('The source’s current title (a knowledge base’s name)'),
  passage: z.string().describe('The passage’s text: a speaker turn or a 30–60 s window of a recording, a thread item, a knowledge base’s description'),
  highlights: z
    .array(z.object({ offset: z.number().int(), length: z.number().int() }))
    .describe('The stretches of `passage` that match the query, in Unicode code points (not bytes, not UTF-16 units)'),
  start: z.number().nullable().describe('Seconds into the recording; null for passages without times'),
  end: z.number().nullable(),
  speaker: z.string().nullable().describe('The speaker id of the turn (S1, S2, …); null when unknown'),
  speaker_name: z.string().nullable().describe('The name given to that speaker; null when none'),
  thread_item_id: z.string().nullable().describe('For a thread’s passage: the item it comes from'),
  score: z.number().describe('Relevance from 0 to 1, higher is better; compare only within one query'),
  created_at: nullableTime.describe('When the source was created'),
  url: z.string().nullable().describe('The API path of the source (null for knowledge bases, which have no route of their own)'),
});

/** A page of search results, with how it was ranked. */
export const searchPageShape = listShape(searchResultShape).extend({
  ranking: z.enum(SEARCH_RANKINGS).describe('`text`: Postgres full-text ranking; `hybrid`: full text and embeddings fused by reciprocal rank (when an embeddings engine is configured)'),
});

/** POST /ask and the `ask` tool: an answer with the passages it cites. */
export const answerShape = z.object({
  id: z.string().describe('ans_…'),
  object: z.literal('answer'),
  question: z.string(),
  answer: z.string().describe('The answer; each statement followed by the numbers of the passages it rests on, as [n] (n counts from 1 in `passages`)'),
  mode: z.enum(ANSWER_MODES).describe('`extractive`: the best sentences of the passages, quoted (the local engine, no LLM); `generative`: written by the configured LLM from the passages'),
  citations: z
    .array(
      z.object({
        passage_id: z.string(),
        type: z.enum(SEARCH_SOURCE_TYPES),
        id: z.string(),
        title: z.string(),
        start: z.number().nullable(),
        end: z.number().nullable(),
        speaker: z.string().nullable(),
        speaker_name: z.string().nullable(),
        url: z.string().nullable(),
      }),
    )
    .describe('The passages the answer cites, in the order first cited'),
  passages: z.array(searchResultShape).describe('The passages the answer was drawn from, best first (as GET /search shows them)'),
  credits_charged: z.number().int().describe('0 when nothing in the library matched'),
  engine: z.string().describe('The conversion engine that answered: local, llama or openai'),
  created_at: nullableTime,
});

export const rateLimitShape = z.object({
  limit: z.number().int(),
  remaining: z.number().int(),
  window_seconds: z.number().int(),
  reset_seconds: z.number().int(),
});

export const planShape = z.object({
  id: z.string(),
  name: z.string(),
  monthly_credits: z.number().int(),
  rate_limit_per_minute: z.number().int(),
  max_audio_bytes: z.number().int(),
  max_transcript_chars: z.number().int(),
  prepaid_credit_price_cents: z.number().int(),
  transcription_credits_per_minute: z.number().int(),
  conversion_credits_per_1k_chars: z.number().int(),
});

export const usageShape = z.object({
  object: z.literal('usage'),
  plan: planShape.nullable(),
  credits: z.object({
    monthly_allowance: z.number().int(),
    monthly_remaining: z.number().int(),
    prepaid_remaining: z.number().int(),
    reserved: z.number().int(),
    resets_at: nullableTime,
  }),
  period: z.object({ start: nullableTime, end: nullableTime }),
  spending: z.object({ cap_cents: z.number().int(), spent_cents: z.number().int() }),
  rate_limit: rateLimitShape,
  counters: z.object({
    credits_used: z.number().int(),
    transcriptions: z.number().int(),
    transcription_seconds: z.number().int(),
    conversions: z.number().int(),
  }),
});

export const meShape = z.object({
  id: z.string().describe('usr_…'),
  object: z.literal('user'),
  email: z.string(),
  name: z.string(),
  created_at: nullableTime,
  plan: z.object({ id: z.string(), name: z.string() }).nullable(),
  usage: usageShape,
  library: z.object({
    recordings: z.number().int(),
    thought_threads: z.number().int(),
    folders: z.number().int(),
    knowledge_bases: z.number().int(),
    recorded_seconds: z.number(),
  }),
  api_key: z.object({ id: z.string(), expires_at: nullableTime }),
});

export const transcriptionShape = z.object({
  id: z.string().describe('trn_…'),
  object: z.literal('transcription'),
  text: z.string(),
  language: z.string().nullable(),
  language_confidence: z.number().min(0).max(1).nullable().describe('How sure the engine is of `language` when it detected it; null when it does not say (every engine today)'),
  duration_seconds: z.number(),
  segments: z.array(segmentShape),
  speakers: speakersField,
  words: wordsField,
  model: z.string(),
  credits_charged: z.number().int(),
  recording_id: z.string().nullable(),
});

/** A transcription job (POST/GET /transcriptions): state and progress, and once completed the fields of a transcription. */
export const transcriptionJobShape = z.object({
  id: z.string().describe('trn_…'),
  object: z.literal('transcription'),
  status: z.enum(JOB_STATUS_NAMES).describe('queued → processing → completed, failed or canceled'),
  progress: z.number().min(0).max(1).describe('Audio recognised so far over all of it, 0–1'),
  duration_seconds: z.number().describe('The audio’s length, known at submission'),
  processed_seconds: z.number(),
  created_at: nullableTime,
  started_at: nullableTime.describe('When a worker first took it; null while queued'),
  finished_at: nullableTime.describe('When it ended; null while live'),
  error: z
    .object({ type: z.string(), code: z.string(), message: z.string(), param: z.string().nullable() })
    .nullable()
    .describe('Why it failed (status failed), in the shape of the error body’s `error`; else null'),
  credits_reserved: z.number().int().describe('AI Credits held for the job while it lives; the charge is `credits_charged`'),
  text: z.string().nullable().describe('The transcript, once completed'),
  language: z.string().nullable(),
  language_confidence: z.number().min(0).max(1).nullable(),
  segments: z.array(segmentShape).nullable(),
  speakers: z.array(speakerShape).nullable(),
  words: z.array(wordShape).nullable().optional().describe('With `words=true` (or, in the webhook’s event, when submitted with `words: true`): each word with its times; null until completed'),
  model: z.string().nullable(),
  credits_charged: z.number().int().nullable().describe('Set once completed; a failed or canceled job is charged nothing'),
  recording_id: z.string().nullable().describe('The recording made with `save: true`, once completed'),
  webhook_url: z.string().nullable().describe('Where the job’s end is delivered (the `webhook_url` it was submitted with, or your default endpoint); null: none'),
  webhook: z
    .object({
      id: z.string().describe('msg_…: the `webhook-id` header, the same on every attempt'),
      event: z.enum(['transcription.completed', 'transcription.failed', 'transcription.canceled']),
      state: z.enum(['pending', 'delivered', 'failed']).describe('pending: an attempt is due; failed: every attempt of the round failed (retry it)'),
      attempts: z.number().int(),
      last_status_code: z.number().int().nullable().describe('The last attempt’s HTTP status; null when none came'),
      last_error: z.string().nullable(),
      next_attempt_at: nullableTime,
      delivered_at: nullableTime,
    })
    .nullable()
    .describe('The delivery of the job’s end to `webhook_url`, once it ended; else null'),
});

/** A listen token (POST /listen/tokens): what a browser opens GET /listen with, once, instead of a key. */
export const listenTokenShape = z.object({
  object: z.literal('listen_token'),
  token: z
    .string()
    .regex(LISTEN_TOKEN_PATTERN)
    .describe('lst_…: pass it as the `token` query parameter of GET /api/v1/listen. Shown once; never stored in clear'),
  expires_at: isoTime,
  expires_in: z.literal(LISTEN_TOKEN_TTL_SECONDS).describe('Seconds from now until it expires'),
});

export const errorShape = z.object({
  error: z.object({
    type: z.string(),
    code: z.string(),
    message: z.string(),
    param: z.string().nullable(),
    request_id: z.string(),
  }),
});
