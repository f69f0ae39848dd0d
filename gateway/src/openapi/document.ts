/**
 * The OpenAPI 3.1 document of `/api/v1`, built from code: bodies from the zod shapes
 * (schemas.ts), error codes and statuses from the kit's ERROR_CODES, and per operation the
 * errors its pipeline can answer with. Served at GET /api/v1/openapi.json; the integration
 * suite checks every response it receives against it (gateway/test/support/openapi-check.ts),
 * so a change to a route or a shape that is not reflected here fails the tests.
 */
import { ERROR_CODES, type ErrorCode } from '@murmur/kit';
import { MAX_AUDIO_BYTES } from '../operations/transcribe';
import * as ex from './examples';
import { componentSchemas, ref, REST_ERROR_CODES, type JsonSchema } from './schemas';

type Json = Record<string, unknown>;

/** The document, typed only as deep as its consumers need. */
export interface OpenApiDocument {
  openapi: string;
  info: Json;
  servers: Json[];
  tags: Json[];
  security: Json[];
  paths: Record<string, Record<string, OperationObject>>;
  components: {
    schemas: Record<string, JsonSchema>;
    parameters: Record<string, Json>;
    headers: Record<string, Json>;
    securitySchemes: Record<string, Json>;
  };
}

/** An Operation Object, as far as the checker and the tests read it. */
export interface OperationObject {
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  security?: Json[];
  parameters?: Json[];
  requestBody?: Json;
  responses: Record<string, ResponseObject>;
}

/** A Response Object: headers by name, bodies by media type. */
export interface ResponseObject {
  description: string;
  headers?: Record<string, Json>;
  content?: Record<string, { schema: JsonSchema; example?: unknown; examples?: Record<string, Json> }>;
}

/** Where the API is mounted; paths in the document are relative to it. */
export const API_BASE = '/api/v1';

const AUTH_CODES: ErrorCode[] = ['missing_api_key', 'invalid_api_key', 'expired_api_key'];
/** What any authenticated call can answer besides its own errors. */
const EVERY_CALL: ErrorCode[] = [...AUTH_CODES, 'invalid_request', 'internal_error', 'service_unavailable'];
const AI_CALL: ErrorCode[] = [
  ...EVERY_CALL,
  'insufficient_tokens',
  'spending_cap_reached',
  'not_found',
  'idempotency_conflict',
  'rate_limit_exceeded',
];

const STATUS_DESCRIPTIONS: Record<number, string> = {
  400: 'The request is not valid: a query parameter, a body field or a header (named in `param`).',
  401: 'No API key, or a malformed, unknown, revoked or expired one. `WWW-Authenticate` carries the challenge.',
  402: 'No AI Credits are left, or this month’s spending cap is reached. Refused before the body is read; nothing was charged.',
  404: 'No such resource — or one that belongs to someone else: both answer the same.',
  409: 'The Idempotency-Key was used with other parameters, or its first request is still running.',
  413: 'The audio is larger than 500 MB (a file, or base64 once decoded); refused while it uploads.',
  415: 'The audio could not be decoded.',
  429: 'Over the AI rate limit (transcribe and convert together, REST and MCP together). Wait `Retry-After` seconds.',
  500: 'A bug on our side, logged with the request id; retry.',
  502: 'The engine failed; the credits reserved for the call were returned. Retry with a new Idempotency-Key (the failure is replayed for the old one).',
  503: 'A Murmur service is unavailable; nothing was charged. Retry in a few seconds.',
};

const REQUEST_ID_PATTERN = '^req_[A-Za-z0-9_-]{8,64}$';

function header(description: string, schema: JsonSchema, required: boolean, example: unknown): Json {
  return { description, required, schema, example };
}

/** On every response; `traceparent` whenever the gateway runs with tracing (main.ts starts it first). */
const COMMON_HEADERS: Record<string, Json> = {
  'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
  traceparent: { $ref: '#/components/headers/traceparent' },
};

/** RateLimit-* (the IETF RateLimit fields in their widely deployed separate form). */
function rateLimitHeaders(required: boolean): Record<string, Json> {
  const when = required ? '' : ' Present once billing has admitted the call (not on a 400 for a malformed Idempotency-Key, nor on a 503 from billing itself).';
  return {
    'RateLimit-Limit': header(`AI requests allowed per window (per user).${when}`, { type: 'integer', minimum: 0 }, required, 10),
    'RateLimit-Remaining': header(`AI requests left in the current window.${when}`, { type: 'integer', minimum: 0 }, required, 9),
    'RateLimit-Reset': header(`Seconds until a request slot frees up.${when}`, { type: 'integer', minimum: 0 }, required, 42),
  };
}

const IDEMPOTENT_REPLAYED = header(
  'Present, `true`, when this is the stored response of an earlier request with the same Idempotency-Key and parameters; nothing was charged again.',
  { type: 'string', enum: ['true'] },
  false,
  'true',
);

/** The error responses of one operation, one per status, each listing the codes it can carry. */
function errorResponses(codes: readonly ErrorCode[], opts: { ai?: boolean; replayable?: boolean } = {}): Record<string, ResponseObject> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of REST_ERROR_CODES.filter((c) => codes.includes(c))) {
    const status = ERROR_CODES[code].http;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<string, ResponseObject> = {};
  for (const [status, statusCodes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const headers: Record<string, Json> = { ...COMMON_HEADERS };
    if (status === 401) {
      headers['WWW-Authenticate'] = header(
        'The Bearer challenge: `Bearer realm="murmur"`, plus `error="invalid_token"` when a key was sent.',
        { type: 'string', pattern: '^Bearer realm="murmur"(, error="invalid_token")?$' },
        true,
        'Bearer realm="murmur", error="invalid_token"',
      );
    }
    if (status === 429) {
      headers['Retry-After'] = header('Seconds to wait before retrying.', { type: 'integer', minimum: 1 }, true, 42);
    }
    // 401, 402 and 409 are answered before billing admits the call, so they carry no window.
    if (opts.ai && ![401, 402, 409].includes(status)) Object.assign(headers, rateLimitHeaders(status === 429));
    if (opts.replayable && status >= 500 && status !== 503) headers['Idempotent-Replayed'] = IDEMPOTENT_REPLAYED;
    // One example per code this operation can answer with at this status: the codes a client
    // must expect here (the checker in gateway/test holds real responses to exactly these).
    const examples = Object.fromEntries(statusCodes.map((code) => [code, { summary: code, value: ex.errorExample(code) }]));
    const codeList = statusCodes.map((code) => `\`${code}\``).join(', ');
    out[String(status)] = {
      description: `${STATUS_DESCRIPTIONS[status] ?? 'An error.'} Codes: ${codeList}.`,
      headers,
      content: { 'application/json': { schema: ref('Error'), examples } },
    };
  }
  return out;
}

function jsonResponse(description: string, schemaName: string, example: unknown): ResponseObject {
  return {
    description,
    headers: { ...COMMON_HEADERS },
    content: { 'application/json': { schema: ref(schemaName), example } },
  };
}

const param = (name: string) => ({ $ref: `#/components/parameters/${name}` });
const PAGE_PARAMS = [param('limit'), param('cursor')];

interface Operation extends OperationObject {
  method: 'get' | 'post';
  path: string;
}

function read(
  path: string,
  operationId: string,
  tag: string,
  summary: string,
  description: string,
  schemaName: string,
  example: unknown,
  opts: { parameters?: Json[]; notFound?: boolean } = {},
): Operation {
  return {
    method: 'get',
    path,
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

function operations(): Operation[] {
  const idParam = (what: string, example: string): Json => ({
    name: 'id',
    in: 'path',
    required: true,
    description: `The ${what}’s id.`,
    schema: { type: 'string' },
    example,
  });
  return [
    read('/me', 'getMe', 'Account', 'Your profile, plan and usage', 'The key owner’s profile: plan, usage, library counts, and the id and expiry of the key this call was made with.', 'User', ex.userExample),
    read(
      '/usage',
      'getUsage',
      'Account',
      'Plan limits and current usage',
      'Plan limits, monthly and prepaid AI Credits, the reset time, the spending cap and this month’s spend, the rate-limit window, and counters for the period.',
      'Usage',
      ex.usageExample,
    ),
    read('/recordings', 'listRecordings', 'Library', 'List recordings', `Your recordings, optionally searched and filtered.${PAGING}`, 'RecordingList', ex.recordingListExample, {
      parameters: [...PAGE_PARAMS, param('q'), param('folder_id'), param('created_after'), param('created_before')],
    }),
    read('/recordings/{id}', 'getRecording', 'Library', 'Get a recording', 'One recording with its transcript (null until transcribed) and its artifacts.', 'Recording', ex.recordingExample, {
      parameters: [idParam('recording', ex.recordingExample.id)],
      notFound: true,
    }),
    read('/thought-threads', 'listThoughtThreads', 'Library', 'List Thought Threads', `Your Thought Threads.${PAGING}`, 'ThoughtThreadList', ex.threadListExample, {
      parameters: PAGE_PARAMS,
    }),
    read('/thought-threads/{id}', 'getThoughtThread', 'Library', 'Get a Thought Thread', 'One Thought Thread with its items and context sources.', 'ThoughtThread', ex.threadExample, {
      parameters: [idParam('Thought Thread', ex.threadExample.id)],
      notFound: true,
    }),
    read('/folders', 'listFolders', 'Library', 'List folders', `Your folders with their recording counts.${PAGING}`, 'FolderList', ex.folderListExample, { parameters: PAGE_PARAMS }),
    read('/knowledge-bases', 'listKnowledgeBases', 'Library', 'List knowledge bases', `Your knowledge bases.${PAGING}`, 'KnowledgeBaseList', ex.knowledgeBaseListExample, {
      parameters: PAGE_PARAMS,
    }),
    convertOperation(),
    transcribeOperation(),
    openApiOperation(),
  ];
}

const AI_PIPELINE =
  'Billing admits the call before the body is read — credits, spending cap and the rate limit (10 AI requests a minute per user) — ' +
  'so a refused call uploads nothing and is charged nothing. With an `Idempotency-Key` the first response (a success, or the 5xx of a ' +
  'failed engine) is kept 24 hours and replayed for the same key and parameters with `Idempotent-Replayed: true`, charging nothing again.';

function convertOperation(): Operation {
  return {
    method: 'post',
    path: '/convert',
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
        description: 'The artifact.',
        headers: { ...COMMON_HEADERS, ...rateLimitHeaders(true), 'Idempotent-Replayed': IDEMPOTENT_REPLAYED },
        content: {
          'application/json': {
            schema: ref('Artifact'),
            examples: {
              transcript: { summary: 'From an inline transcript', value: ex.artifactFromTranscriptExample },
              recording: { summary: 'Stored on a recording', value: ex.artifactOnRecordingExample },
            },
          },
        },
      },
      ...errorResponses([...AI_CALL, 'conversion_failed'], { ai: true, replayable: true }),
    },
  };
}

function transcribeOperation(): Operation {
  const formatHeaders = (what: string, example: string): Json =>
    header(`${what} Sent with \`response_format\` text, srt and vtt, whose body has no room for it.`, { type: 'string' }, false, example);
  return {
    method: 'post',
    path: '/transcribe',
    operationId: 'transcribe',
    tags: ['AI'],
    summary: 'Transcribe audio',
    description:
      `Transcribes an audio file of up to ${MAX_AUDIO_BYTES.toLocaleString('en-US')} bytes (500 MB), sent as multipart/form-data (file part \`audio\`) ` +
      'or as JSON with `audio_base64`. The upload is streamed: transcription starts while it arrives, so send the options **before** the audio ' +
      '(an option after it is accepted only when it changes nothing). With `save: true` the transcript is stored as a recording. ' +
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
      ...errorResponses([...AI_CALL, 'missing_audio', 'audio_too_large', 'unsupported_audio', 'transcription_failed'], { ai: true, replayable: true }),
    },
  };
}

function openApiOperation(): Operation {
  return {
    method: 'get',
    path: '/openapi.json',
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

function parameters(): Record<string, Json> {
  const query = (name: string, description: string, schema: JsonSchema, example: unknown): Json => ({ name, in: 'query', required: false, description, schema, example });
  const date = (bound: string) =>
    query(
      `created_${bound}`,
      `Only recordings created strictly ${bound} this time: ISO-8601 with a zone (\`2026-01-31T00:00:00Z\`) or a bare date (midnight UTC).`,
      { type: 'string', maxLength: 1000 },
      bound === 'after' ? '2026-01-01T00:00:00Z' : '2026-02-01',
    );
  return {
    limit: query('limit', 'Items per page, 1–100.', { type: 'integer', minimum: 1, maximum: 100, default: 20 }, 20),
    cursor: query(
      'cursor',
      'The `next_cursor` of the previous page; opaque, and bound to its list and filters.',
      { type: 'string', maxLength: 1000 },
      ex.recordingListExample.next_cursor,
    ),
    q: query('q', 'Full-text search over title and transcript.', { type: 'string', maxLength: 1000 }, 'launch plan'),
    folder_id: query('folder_id', 'Only recordings in this folder of yours.', { type: 'string', maxLength: 1000 }, ex.folderListExample.data[0]!.id),
    created_after: date('after'),
    created_before: date('before'),
    'Idempotency-Key': {
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        'Makes the call safe to retry: 1–255 printable ASCII characters, e.g. a UUID, scoped to your account. The first response is replayed ' +
        'for 24 hours for the same key and parameters; other parameters, or a duplicate while the first still runs, answer 409.',
      schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
      example: '7c0e7f6e-3b1a-4d52-9a4e-2f1f5f6b8c21',
    },
    'X-Request-Id': {
      name: 'X-Request-Id',
      in: 'header',
      required: false,
      description: 'Your own id for this request, kept when it has the form `req_` + 8–64 letters, digits, `_` or `-`; otherwise a fresh one is minted.',
      schema: { type: 'string' },
      example: 'req_checkout_retry_0001',
    },
  };
}

function info(version: string): Json {
  return {
    title: 'Murmur API',
    version,
    summary: 'Transcribe audio, convert transcripts into artifacts, and read your own Murmur library.',
    description: [
      'The public REST API of Murmur, the voice-notes app. Every call acts on the API key owner’s own data and plan.',
      '',
      '**Authentication**: `Authorization: Bearer svc_…` (create keys in the app under Settings → Developer).',
      '',
      '**Conventions**: JSON bodies (`application/json; charset=utf-8`), `snake_case` fields, ISO-8601 UTC times, opaque ids with a type prefix ' +
        '(`rec_`, `art_`, `thr_`, `fld_`, `kb_`, `usr_`, `trn_`). Every response carries `X-Request-Id`.',
      '',
      '**Errors** share one body, `{"error": {"type", "code", "message", "param", "request_id"}}`; branch on `code`. Besides the responses ' +
        'listed per operation, an unknown path under `/api/v1` answers 404 `not_found` (before authentication), and a known path called ' +
        'with another method answers 405 `method_not_allowed` with an `Allow` header.',
      '',
      '**AI Credits and limits**: `POST /transcribe` and `POST /convert` spend AI Credits (monthly first, then prepaid) and share a rate ' +
        'limit of 10 requests a minute per user, reported in `RateLimit-*` headers.',
    ].join('\n'),
  };
}

let cached: { version: string; doc: OpenApiDocument } | undefined;

/** The document for `version` (the gateway's release). Built once; callers get their own copy. */
export function buildOpenApiDocument(version: string): OpenApiDocument {
  if (cached?.version !== version) cached = { version, doc: build(version) };
  return structuredClone(cached.doc);
}

function build(version: string): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  for (const { method, path, ...operation } of operations()) {
    paths[path] = { ...paths[path], [method]: operation };
  }
  return {
    openapi: '3.1.1',
    info: info(version),
    servers: [{ url: API_BASE, description: 'This server' }],
    tags: [
      { name: 'Account', description: 'Your profile, plan and usage.' },
      { name: 'AI', description: 'Transcription and conversion; spend AI Credits and count against the rate limit.' },
      { name: 'Library', description: 'Your recordings, Thought Threads, folders and knowledge bases (read-only).' },
      { name: 'Meta', description: 'About the API itself.' },
    ],
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      schemas: componentSchemas(),
      parameters: parameters(),
      headers: {
        'X-Request-Id': header(
          'The id of this request (yours if you sent a well-formed one); in every log line and error body. Quote it to support.',
          { type: 'string', pattern: REQUEST_ID_PATTERN },
          true,
          ex.REQUEST_ID,
        ),
        traceparent: header(
          'The W3C trace context of this call (`version-trace_id-parent_id-flags`), sent whenever the gateway runs with tracing; quote it with the request id.',
          { type: 'string', pattern: '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$' },
          false,
          '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
        ),
      },
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'svc_ followed by 64 hex characters',
          description: 'An API key of yours, created in the app (Settings → Developer). The scheme name is case-insensitive.',
        },
      },
    },
  };
}
