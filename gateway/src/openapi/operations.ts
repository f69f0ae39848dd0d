/** Every operation of `/api/v1`: what it takes, answers, and which errors its pipeline can give. */
import { ASK_MAX_PASSAGES, CONVERT_READ_FIRST_MAX_BYTES, LISTEN_TOKEN_TTL_SECONDS, MAX_WATCHERS_PER_USER, WEBHOOK_RETRY_LIMIT } from '@murmur/contract';
import { MAX_AUDIO_BYTES } from '../operations/transcribe';
import * as ex from './examples';
import { AI_CALL, CHANGES, COMMON_HEADERS, errorResponses, EVERY_CALL, header, IDEMPOTENT_REPLAYED, jsonResponse, rateLimitHeaders } from './responses';
import { ref } from './schemas';
import type { OperationId } from '../routes';
import type { Json, OpenApiDocument, OperationObject } from './types';

const param = (name: string) => ({ $ref: `#/components/parameters/${name}` });

/**
 * An operation's description, keyed by its id in the route table (routes.ts), which says where
 * it is mounted (method, path) and which query parameters it takes; the document adds those.
 */
type Operation<Id extends OperationId = OperationId> = OperationObject & { operationId: Id };

function read<Id extends OperationId>(
  operationId: Id,
  tag: string,
  summary: string,
  description: string,
  schemaName: string,
  example: unknown,
  opts: { parameters?: Json[]; notFound?: boolean } = {},
): Operation<Id> {
  return {
    operationId,
    tags: [tag],
    summary,
    description,
    parameters: [...(opts.parameters ?? []), param('X-Request-Id')],
    responses: {
      '200': jsonResponse(summary, schemaName, example),
      ...errorResponses(opts.notFound ? [...EVERY_CALL, 'not_found'] : EVERY_CALL),
    },
  };
}

const PAGING =
  ' Newest first, paged: pass `next_cursor` as `cursor` (with the same filters) until `has_more` is false. ' +
  'Unknown or repeated query parameters are refused with 400.';

/** Every operation of the route table, by id: one description each, no more, no less. */
export function operations(): { [Id in OperationId]: Operation<Id> } {
  const idParam = (what: string, example: string): Json => ({
    name: 'id',
    in: 'path',
    required: true,
    description: `The ${what}’s id.`,
    schema: { type: 'string' },
    example,
  });
  const jobs = jobOperations(idParam('transcription', ex.transcriptionJobQueuedExample.id));
  return {
    getOpenApiDocument: openApiOperation(),
    getMe: read('getMe', 'Account', 'Your profile, plan and usage', 'The key owner’s profile: plan, usage, library counts, and the id and expiry of the key this call was made with.', 'User', ex.userExample),
    getUsage: read(
      'getUsage',
      'Account',
      'Plan limits and current usage',
      'Plan limits, monthly and prepaid AI Credits, the reset time, the spending cap and this month’s spend, the rate-limit window, and counters for the period.',
      'Usage',
      ex.usageExample,
    ),
    listRequests: read(
      'listRequests',
      'Account',
      'Your request log',
      'Every call made with your keys and OAuth connections in the last 30 days, REST and MCP: route or tool, status, error code, latency, ' +
        'the key’s id and hint, the request and trace ids, body sizes and the credits charged. Never a body, a key or a token. Calls refused before ' +
        'a key was verified (a missing or unknown key) belong to no one’s log. Entries are written off the hot path: a call appears within a second or two. ' +
        'Filters: `status_code` (a class such as `4xx`, or an exact status), `route`, `tool`, `key_id`, `created_after`, `created_before`.' +
        PAGING,
      'RequestLogList',
      ex.requestLogListExample,
    ),
    listRecordings: read('listRecordings', 'Library', 'List recordings', `Your recordings, optionally searched and filtered.${PAGING}`, 'RecordingList', ex.recordingListExample, {
      notFound: true,
    }),
    searchPassages: read(
      'searchPassages',
      'Library',
      'Search passages',
      'The passages of your recordings, Thought Threads and knowledge bases that match `q`, best first: a recording is searched by speaker turn ' +
        '(or a 30–60 s window of a long one), each with its start and end time and speaker, so you land on the moment, not the whole recording. ' +
        '`highlights` mark the matching words (code-point offsets into `passage`). `ranking` says how the page was ranked: `text` (Postgres full text) ' +
        'or `hybrid` (full text and embeddings, where an embeddings engine is configured). Filters: `type`, `folder_id`, `recording_id`, `created_after`, `created_before`. ' +
        'Paged best first: pass `next_cursor` as `cursor` with the same `q` and filters. Unknown or repeated query parameters are refused with 400.',
      'SearchResultList',
      ex.searchResultListExample,
      { notFound: true },
    ),
    getRecording: {
      ...read(
        'getRecording',
        'Library',
        'Get a recording',
        'One recording with its transcript (null until transcribed: text, segments, speakers, and with `words=true` its words) and its artifacts. ' +
          'With `response_format` text, srt or vtt, its transcript in that format instead: captions cut on its words, and speaker turns labelled ' +
          'with the names you gave them (a recording without a transcript answers 400).',
        'Recording',
        ex.recordingExample,
        { parameters: [idParam('recording', ex.recordingExample.id)], notFound: true },
      ),
      responses: {
        '200': {
          description: 'The recording, or its transcript in the `response_format` asked for.',
          headers: { ...COMMON_HEADERS, 'X-Recording-Id': header('The recording’s id. Sent with `response_format` text, srt and vtt.', { type: 'string' }, false, ex.recordingExample.id) },
          content: {
            'application/json': { schema: ref('Recording'), example: ex.recordingExample },
            'text/plain': { schema: { type: 'string' }, example: ex.recordingTextExample },
            'application/x-subrip': { schema: { type: 'string' }, example: ex.recordingSrtExample },
            'text/vtt': { schema: { type: 'string' }, example: ex.recordingVttExample },
          },
        },
        ...errorResponses([...EVERY_CALL, 'not_found']),
      },
    },
    setSpeakerNames: {
      operationId: 'setSpeakerNames',
      tags: ['Library'],
      summary: 'Name the speakers of a recording',
      description:
        'Gives the speakers diarization found (S1, S2, …) their names, e.g. `{"names": {"S1": "Maria", "S2": "Ken"}}`; `""` clears a name. The names then ' +
        'appear in the recording, its captions and its conversions (the owners of action items). An id the recording does not have is 400 naming it; a ' +
        'recording without speakers is 400. Free.',
      parameters: [idParam('recording', ex.recordingExample.id), param('X-Request-Id')],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: ref('SpeakerNamesRequest'), example: { names: { S1: 'Maria', S2: 'Ken' } } } },
      },
      responses: {
        '200': jsonResponse('The recording, with its speakers named.', 'Recording', ex.recordingExample),
        ...errorResponses([...EVERY_CALL, ...CHANGES, 'not_found']),
      },
    },
    listThoughtThreads: read('listThoughtThreads', 'Library', 'List Thought Threads', `Your Thought Threads.${PAGING}`, 'ThoughtThreadList', ex.threadListExample),
    getThoughtThread: read('getThoughtThread', 'Library', 'Get a Thought Thread', 'One Thought Thread with its items and context sources.', 'ThoughtThread', ex.threadExample, {
      parameters: [idParam('Thought Thread', ex.threadExample.id)],
      notFound: true,
    }),
    listFolders: read('listFolders', 'Library', 'List folders', `Your folders with their recording counts.${PAGING}`, 'FolderList', ex.folderListExample),
    listKnowledgeBases: read('listKnowledgeBases', 'Library', 'List knowledge bases', `Your knowledge bases.${PAGING}`, 'KnowledgeBaseList', ex.knowledgeBaseListExample),
    convert: convertOperation(),
    ask: askOperation(),
    transcribe: transcribeOperation(),
    ...jobs,
    createListenToken: listenTokenOperation(),
    getAsyncApiDocument: asyncApiOperation(),
  };
}

function asyncApiOperation(): Operation<'getAsyncApiDocument'> {
  return {
    operationId: 'getAsyncApiDocument',
    tags: ['Meta'],
    summary: 'The AsyncAPI document of live transcription',
    description: 'The AsyncAPI 3.0 description of GET /api/v1/listen: its query, messages each way and close codes (`x-close-codes`). Needs no API key.',
    security: [],
    parameters: [param('X-Request-Id')],
    responses: {
      '200': {
        description: 'The AsyncAPI document.',
        headers: {
          ...COMMON_HEADERS,
          'Cache-Control': header('Shared caches may keep the document for five minutes.', { type: 'string', const: 'public, max-age=300' }, true, 'public, max-age=300'),
        },
        content: {
          'application/json': {
            schema: { type: 'object', required: ['asyncapi', 'info', 'channels'], properties: { asyncapi: { type: 'string', pattern: '^3\\.0\\.\\d+$' }, info: { type: 'object' }, channels: { type: 'object' } } },
            example: { asyncapi: '3.0.0', info: { title: 'Murmur live transcription', version: '0.1.0' }, channels: {} },
          },
        },
      },
      ...errorResponses(['invalid_request', 'internal_error']),
    },
  };
}

/** POST /listen/tokens (docs/live.md, "Connecting"). */
function listenTokenOperation(): Operation<'createListenToken'> {
  return {
    operationId: 'createListenToken',
    tags: ['Live'],
    summary: 'Make a listen token for a browser',
    description:
      'A browser cannot set `Authorization` on a WebSocket, so your server, which holds the key, makes a listen token here and hands it to the ' +
      'browser, which opens `GET /api/v1/listen?token=lst_…` with it. ' +
      `A token lasts ${LISTEN_TOKEN_TTL_SECONDS} seconds, opens one stream once, acts for this key’s owner only, and stops working when the key is ` +
      'revoked. Making one is free and takes no rate-limit slot; the stream it opens is charged as live transcription. It needs a key with full ' +
      'access (a read-only key answers 403). No body.',
    parameters: [param('X-Request-Id')],
    responses: {
      '201': {
        description: 'The token. Shown once: only its hash is kept.',
        headers: { ...COMMON_HEADERS, 'Cache-Control': header('Never cached: the body is a credential.', { type: 'string', const: 'no-store' }, true, 'no-store') },
        content: { 'application/json': { schema: ref('ListenToken'), example: ex.listenTokenExample } },
      },
      ...errorResponses([...EVERY_CALL, ...CHANGES]),
    },
  };
}

const JOB_LIFE =
  'A job moves from `queued` to `processing` to `completed`, `failed` or `canceled`. Its credits are held from submission and charged once when it ' +
  'completes (a failed or canceled job is charged nothing); it survives a worker’s crash and a restart of the whole system, resuming from the ' +
  'last recognised chunk.';

type JobOperationId = 'createTranscription' | 'listTranscriptions' | 'getTranscription' | 'streamTranscriptionEvents' | 'cancelTranscription' | 'retryTranscriptionWebhook';

function jobOperations(id: Json): { [Id in JobOperationId]: Operation<Id> } {
  const submit = transcribeOperation();
  const upload = submit.requestBody as { content: Record<string, Json> };
  return {
    createTranscription: {
      operationId: 'createTranscription',
      tags: ['AI'],
      summary: 'Submit audio as a transcription job',
      description:
        'The asynchronous form of POST /transcribe, for long audio: the same body and options (but `response_format`, which applies when reading the ' +
        'result), the same checks and the same price. Answers 202 with the queued job as soon as the upload is stored and priced; follow it with ' +
        'GET /transcriptions/{id}, its `events` stream, or list your jobs. ' +
        JOB_LIFE +
        ' ' +
        AI_PIPELINE,
      parameters: [param('Idempotency-Key'), param('X-Request-Id')],
      requestBody: { required: true, content: upload.content },
      responses: {
        '202': {
          description: 'The job, queued.',
          headers: {
            ...COMMON_HEADERS,
            ...rateLimitHeaders(true),
            'Idempotent-Replayed': IDEMPOTENT_REPLAYED,
            Location: header('The job’s URL: `/api/v1/transcriptions/{id}`.', { type: 'string' }, true, `/api/v1/transcriptions/${ex.transcriptionJobQueuedExample.id}`),
          },
          content: { 'application/json': { schema: ref('TranscriptionJob'), example: ex.transcriptionJobQueuedExample } },
        },
        ...errorResponses([...AI_CALL, 'request_timeout', 'missing_audio', 'audio_too_large', 'unsupported_audio', ...AUDIO_URL_ERRORS], { ai: true, replayable: true }),
      },
    },
    listTranscriptions: read('listTranscriptions', 'AI', 'List transcription jobs', `Your transcription jobs, optionally of one status.${PAGING}`, 'TranscriptionJobList', ex.transcriptionJobListExample),
    getTranscription: {
      operationId: 'getTranscription',
      tags: ['AI'],
      summary: 'Get a transcription job',
      description:
        'The job: status, progress and, once completed, the fields of POST /transcribe’s answer (`text`, `segments`, `language`, `model`, ' +
        '`credits_charged`, `recording_id`); `error` when it failed. With `response_format` text, srt or vtt, a completed job’s transcript in that format. ' +
        JOB_LIFE,
      parameters: [id, param('X-Request-Id')],
      responses: {
        '200': {
          description: 'The job, or its transcript in the `response_format` asked for.',
          headers: { ...COMMON_HEADERS },
          content: {
            'application/json': { schema: ref('TranscriptionJob'), example: ex.transcriptionJobCompletedExample },
            'text/plain': { schema: { type: 'string' }, example: ex.transcriptionTextExample },
            'application/x-subrip': { schema: { type: 'string' }, example: ex.transcriptionSrtExample },
            'text/vtt': { schema: { type: 'string' }, example: ex.transcriptionVttExample },
          },
        },
        ...errorResponses([...EVERY_CALL, 'not_found', 'transcription_not_ready']),
      },
    },
    streamTranscriptionEvents: {
      operationId: 'streamTranscriptionEvents',
      tags: ['AI'],
      summary: 'Follow a transcription job (Server-Sent Events)',
      description:
        'A `text/event-stream`: an event named after the job’s status (`queued`, `processing`, `completed`, `failed`, `canceled`) with the job as ' +
        '`data`, sent at once and whenever the status or progress changes; the stream ends after the event of the status the job ended in. A job ' +
        'that has already ended gets that one event. A comment line every 15 s keeps proxies from closing an idle stream. Should the stream break, ' +
        `an \`error\` event carries the error body; reconnect, or read GET /transcriptions/{id}. At most ${MAX_WATCHERS_PER_USER} streams of live jobs ` +
        'can be open at once per user (REST and MCP progress together); one more answers 429 `rate_limit_exceeded` with `Retry-After`. A job that has ended does not count.',
      parameters: [id, param('X-Request-Id')],
      responses: {
        '200': {
          description: 'The job’s events until it ends.',
          headers: { ...COMMON_HEADERS, 'Cache-Control': header('Never cached.', { type: 'string', const: 'no-store' }, true, 'no-store') },
          content: { 'text/event-stream': { schema: { type: 'string' }, example: ex.transcriptionEventsExample } },
        },
        ...errorResponses([...EVERY_CALL, 'not_found', 'rate_limit_exceeded'], {
          describe: { 429: `${MAX_WATCHERS_PER_USER} event streams of live jobs are already open for this user; close one, or wait \`Retry-After\` seconds.` },
        }),
      },
    },
    cancelTranscription: {
      operationId: 'cancelTranscription',
      tags: ['AI'],
      summary: 'Cancel a transcription job',
      description:
        'Stops a `queued` or `processing` job: its held credits are returned and its audio deleted; nothing is charged. A job that already ended ' +
        'answers 409 `transcription_not_cancelable`.',
      parameters: [id, param('X-Request-Id')],
      responses: {
        '200': jsonResponse('The canceled job.', 'TranscriptionJob', { ...ex.transcriptionJobQueuedExample, status: 'canceled', finished_at: '2026-03-02T16:46:00.000Z' }),
        ...errorResponses([...EVERY_CALL, ...CHANGES, 'not_found', 'transcription_not_cancelable']),
      },
    },
    retryTranscriptionWebhook: {
      operationId: 'retryTranscriptionWebhook',
      tags: ['AI'],
      summary: 'Send a job’s webhook event again',
      description:
        'Starts a new round of attempts to deliver an ended job’s event to its `webhook_url` now, with the same `webhook-id` (receivers deduplicate ' +
        'on it). A job without an endpoint, or one that has not ended yet, answers 400 `invalid_request`. ' +
        `At most ${WEBHOOK_RETRY_LIMIT.limit} retries per ${WEBHOOK_RETRY_LIMIT.windowSeconds} seconds per user (a sliding window); one more answers 429 \`rate_limit_exceeded\` with \`Retry-After\`. ` +
        WEBHOOK_DELIVERY,
      parameters: [id, param('X-Request-Id')],
      responses: {
        '200': jsonResponse('The job, its `webhook.state` pending again.', 'TranscriptionJob', ex.transcriptionJobCompletedExample),
        ...errorResponses([...EVERY_CALL, ...CHANGES, 'not_found', 'rate_limit_exceeded'], {
          describe: { 429: `Over ${WEBHOOK_RETRY_LIMIT.limit} webhook retries in ${WEBHOOK_RETRY_LIMIT.windowSeconds} seconds for this user; wait \`Retry-After\` seconds.` },
        }),
      },
    },
  };
}

/** How the event of a job's end is delivered (webhooks.ts in the transcription service). */
const WEBHOOK_DELIVERY =
  'Deliveries follow Standard Webhooks: a POST of `{"type": "transcription.completed" | "transcription.failed" | "transcription.canceled", ' +
  '"timestamp", "data": <the job>}` with `webhook-id`, `webhook-timestamp` and `webhook-signature` (`v1,` + base64 HMAC-SHA256 of ' +
  '`id.timestamp.body` with your `whsec_` secret; two signatures for 24 h after a rotation). Any 2xx within 10 s is success; otherwise it is tried ' +
  'again after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (±10 %), 8 attempts over 27.5 hours. Endpoints must be https (an operator may allow plain http ' +
  'for local development: MURMUR_WEBHOOK_ALLOW_HTTP).';

const AI_PIPELINE =
  'Billing admits the call before the body is read — credits, spending cap and the rate limit (10 AI requests a minute per user) — ' +
  `so a refused call uploads nothing and is charged nothing (a \`/convert\` body declared at most ${CONVERT_READ_FIRST_MAX_BYTES / 1024} KB is read first and admitted by the ` +
  'charge itself, with the same checks in the same order: a malformed short body is a 400 even at the limit). With an `Idempotency-Key` the first response (a success, or the 5xx of a ' +
  'failed engine) is kept 24 hours and replayed for the same key and parameters with `Idempotent-Replayed: true`, charging nothing again.';

function convertOperation(): Operation<'convert'> {
  return {
    operationId: 'convert',
    tags: ['AI'],
    summary: 'Convert a transcript into an artifact',
    description:
      'Turns a transcript — given inline as `transcript`, or a recording of yours named by `recording_id` (exactly one of the two) — into an artifact: ' +
      '`summary`, `email`, `spreadsheet`, `action_items`, `meeting_notes` or `key_points`, as Markdown or, with `outputFormat: "plain"`, plain text ' +
      '(a spreadsheet becomes CSV). With `recording_id` the artifact is stored on that recording. Charged by transcript size. ' +
      AI_PIPELINE,
    parameters: [param('Idempotency-Key'), param('X-Request-Id')],
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: ref('ConvertRequest'),
          examples: {
            transcript: {
              summary: 'An inline transcript',
              value: { transcript: 'Priya opened the planning meeting for the checkout redesign. Marcus will send the revised deck by Friday.', kind: 'action_items' },
            },
            recording: { summary: 'A recording of yours, as plain text', value: { recording_id: ex.recordingExample.id, kind: 'summary', outputFormat: 'plain' } },
          },
        },
      },
    },
    responses: {
      '200': {
        description: 'The artifact: its text in `content`, and its structure in `data` (per kind).',
        headers: { ...COMMON_HEADERS, ...rateLimitHeaders(true), 'Idempotent-Replayed': IDEMPOTENT_REPLAYED },
        content: {
          'application/json': {
            schema: ref('Artifact'),
            examples: {
              transcript: { summary: 'From an inline transcript', value: ex.conversionFromTranscriptExample },
              recording: { summary: 'Stored on a recording', value: ex.conversionOnRecordingExample },
            },
          },
        },
      },
      ...errorResponses([...AI_CALL, 'request_timeout', 'conversion_failed'], { ai: true, replayable: true }),
    },
  };
}

function askOperation(): Operation<'ask'> {
  return {
    operationId: 'ask',
    tags: ['AI'],
    summary: 'Ask your library a question',
    description:
      'Answers a question from your own recordings, Thought Threads and knowledge bases, citing the passages it used (`citations`, and `[n]` marks in ' +
      '`answer` that count from 1 in `passages`). The question is searched as any of its words (`GET /search` ranking), and the best ' +
      `${ASK_MAX_PASSAGES} passages are read. \`mode\` says how it was answered: \`generative\` when an LLM engine is configured (llama or an OpenAI-compatible ` +
      'endpoint), `extractive` with the local default, which quotes the passages’ best-matching sentences and writes nothing of its own. ' +
      'Charged like a conversion of the question and the passages read; a question that matches nothing is answered so, free. Filters as `GET /search` (`type` a list). ' +
      AI_PIPELINE,
    parameters: [param('Idempotency-Key'), param('X-Request-Id')],
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: ref('AskRequest'),
          examples: {
            library: { summary: 'Your whole library', value: { question: 'When does the new payment page ship?' } },
            recording: { summary: 'One recording', value: { question: 'Who opened the meeting?', recording_id: ex.recordingExample.id } },
          },
        },
      },
    },
    responses: {
      '200': {
        description: 'The answer with its citations and the passages it was drawn from.',
        headers: { ...COMMON_HEADERS, ...rateLimitHeaders(true), 'Idempotent-Replayed': IDEMPOTENT_REPLAYED },
        content: { 'application/json': { schema: ref('Answer'), example: ex.answerExample } },
      },
      ...errorResponses([...AI_CALL, 'request_timeout', 'not_found', 'conversion_failed'], { ai: true, replayable: true }),
    },
  };
}

/** What an `audio_url` may answer besides the upload's errors (upload/fetch-audio.ts). */
const AUDIO_URL_ERRORS = ['audio_url_forbidden', 'audio_url_unreachable'] as const;

function transcribeOperation(): Operation<'transcribe'> {
  const formatHeaders = (what: string, example: string): Json =>
    header(`${what} Sent with \`response_format\` text, srt and vtt, whose body has no room for it.`, { type: 'string' }, false, example);
  return {
    operationId: 'transcribe',
    tags: ['AI'],
    summary: 'Transcribe audio',
    description:
      `Transcribes an audio file of up to ${MAX_AUDIO_BYTES.toLocaleString('en-US')} bytes (500 MB), sent as multipart/form-data (file part \`audio\`) ` +
      'or as JSON with `audio_base64` — or by link: `audio_url`, a public http(s) URL Murmur downloads (ports 80 and 443; private, loopback, link-local and ' +
      'metadata addresses are refused with `audio_url_forbidden`, at most 5 redirects, each checked; a failed download is 422 `audio_url_unreachable`, nothing charged). ' +
      'The upload is streamed: transcription starts while it arrives. Options may come before or after the audio; ' +
      'before is cheapest (a `language` after the audio makes the gateway keep a copy and start again with it). Every option is checked before ' +
      'anything is charged. A body that stops arriving for 30 s answers 408 `request_timeout`. With `save: true` the transcript is stored as a recording. ' +
      'Charged by audio duration. ' +
      AI_PIPELINE,
    parameters: [param('Idempotency-Key'), param('X-Request-Id')],
    requestBody: {
      required: true,
      content: {
        'multipart/form-data': {
          schema: ref('TranscribeMultipartRequest'),
          encoding: { audio: { contentType: 'audio/*, video/*, application/octet-stream' } },
        },
        'application/json': {
          schema: ref('TranscribeJsonRequest'),
          example: { language: 'en', response_format: 'json', audio_base64: ex.AUDIO_BASE64_EXAMPLE },
        },
      },
    },
    responses: {
      '200': {
        description: 'The transcription, in the `response_format` asked for.',
        headers: {
          ...COMMON_HEADERS,
          ...rateLimitHeaders(true),
          'Idempotent-Replayed': IDEMPOTENT_REPLAYED,
          'X-Transcription-Id': formatHeaders('The transcription’s id (`trn_…`).', ex.transcriptionExample.id),
          'X-Credits-Charged': header(
            'AI Credits charged. Sent with `response_format` text, srt and vtt, whose body has no room for it.',
            { type: 'integer', minimum: 0 },
            false,
            1,
          ),
          'X-Recording-Id': formatHeaders('The saved recording’s id (`rec_…`), with `save: true`.', ex.recordingExample.id),
        },
        content: {
          'application/json': { schema: ref('Transcription'), example: ex.transcriptionExample },
          'text/plain': { schema: { type: 'string' }, example: ex.transcriptionTextExample },
          'application/x-subrip': { schema: { type: 'string' }, example: ex.transcriptionSrtExample },
          'text/vtt': { schema: { type: 'string' }, example: ex.transcriptionVttExample },
        },
      },
      ...errorResponses([...AI_CALL, 'request_timeout', 'missing_audio', 'audio_too_large', 'unsupported_audio', 'transcription_failed', ...AUDIO_URL_ERRORS], { ai: true, replayable: true }),
    },
  };
}

function openApiOperation(): Operation<'getOpenApiDocument'> {
  return {
    operationId: 'getOpenApiDocument',
    tags: ['Meta'],
    summary: 'This OpenAPI document',
    description: 'The OpenAPI 3.1 description of this API. Needs no API key; cacheable for five minutes.',
    security: [],
    parameters: [param('X-Request-Id')],
    responses: {
      '200': {
        description: 'The OpenAPI document.',
        headers: {
          ...COMMON_HEADERS,
          'Cache-Control': header('Shared caches may keep the document for five minutes.', { type: 'string', const: 'public, max-age=300' }, true, 'public, max-age=300'),
        },
        content: {
          'application/json': {
            schema: {
              type: 'object',
              description: 'An OpenAPI 3.1 document (https://spec.openapis.org/oas/v3.1.1).',
              required: ['openapi', 'info', 'paths'],
              properties: { openapi: { type: 'string', pattern: '^3\\.1\\.\\d+$' }, info: { type: 'object' }, paths: { type: 'object' } },
            },
            example: { openapi: '3.1.1', info: { title: 'Murmur API', version: '0.1.0' }, paths: {} },
          },
        },
      },
      ...errorResponses(['invalid_request', 'internal_error']),
    },
  };
}
