/**
 * The OpenAPI 3.1 document of `/api/v1`, built from code: bodies from the zod shapes
 * (schemas.ts), error codes and statuses from the contract's ERROR_CODES, limits and patterns
 * from the contract (gateway/test/input-rules-agree.test.ts holds them equal), and per operation the
 * errors its pipeline can answer with. Served at GET /api/v1/openapi.json; the integration
 * suite checks every response it receives against it (gateway/test/support/openapi-check.ts),
 * so a change to a route or a shape that is not reflected here fails the tests.
 */
import {
  DEFAULT_PAGE_LIMIT,
  IDEMPOTENCY_KEY_PATTERN,
  JOB_STATUS_NAMES,
  MAX_CURSOR_CHARS,
  MAX_IDEMPOTENCY_KEY_CHARS,
  MAX_PAGE_LIMIT,
  MAX_QUERY_VALUE_CHARS,
  REQUEST_ID_PATTERN,
  SEARCH_QUERY_MAX_CHARS,
  SEARCH_SOURCE_TYPES,
} from '@murmur/contract';
import * as ex from './examples';
import { ROUTES } from '../routes';
import { operations } from './operations';
import { header } from './responses';
import { componentSchemas, type JsonSchema } from './schemas';
import { API_BASE, type Json, type OpenApiDocument } from './types';

export { API_BASE, type OpenApiDocument, type OperationObject, type ResponseObject } from './types';

function parameters(): Record<string, Json> {
  const query = (name: string, description: string, schema: JsonSchema, example: unknown): Json => ({ name, in: 'query', required: false, description, schema, example });
  const date = (bound: string) =>
    query(
      `created_${bound}`,
      `Only recordings (on /search: sources; on /requests: calls) created strictly ${bound} this time: ISO-8601 with a zone (\`2026-01-31T00:00:00Z\`) or a bare date (midnight UTC); a date that is not in the calendar (\`2026-02-30\`, \`T24:00\`) answers 400.`,
      { type: 'string', maxLength: MAX_QUERY_VALUE_CHARS },
      bound === 'after' ? '2026-01-01T00:00:00Z' : '2026-02-01',
    );
  return {
    limit: query('limit', `Items per page, 1–${MAX_PAGE_LIMIT}.`, { type: 'integer', minimum: 1, maximum: MAX_PAGE_LIMIT, default: DEFAULT_PAGE_LIMIT }, DEFAULT_PAGE_LIMIT),
    cursor: query(
      'cursor',
      'The `next_cursor` of the previous page; opaque, and bound to you, its list and its filters (another user’s cursor, or one reused with other filters, answers 400).',
      { type: 'string', maxLength: MAX_CURSOR_CHARS },
      ex.recordingListExample.next_cursor,
    ),
    q: query(
      'q',
      `The words to find: words (all must match), "quoted phrases", \`OR\`, \`-excluded\` (Postgres websearch syntax), 1–${SEARCH_QUERY_MAX_CHARS} characters; ` +
        'on /recordings over titles and transcripts, on /search (required there) over passages. Percent-encoded UTF-8 (`encodeURIComponent`); invalid UTF-8 or a NUL answers 400; ' +
        'on /search an unclosed quote, an empty phrase, only excluded words, or only common words ("the", "and") answer 400 too.',
      { type: 'string', maxLength: MAX_QUERY_VALUE_CHARS },
      'launch plan',
    ),
    folder_id: query(
      'folder_id',
      'Only recordings in this folder of yours. A folder that does not exist or is someone else’s answers 404 `not_found`, as anywhere else.',
      { type: 'string', maxLength: MAX_QUERY_VALUE_CHARS },
      ex.folderListExample.data[0]!.id,
    ),
    type: query(
      'type',
      `Only passages of these sources: one or more of ${SEARCH_SOURCE_TYPES.map((t) => `\`${t}\``).join(', ')}, comma-separated. Omitted: all.`,
      { type: 'string', maxLength: MAX_QUERY_VALUE_CHARS },
      'recording,thought_thread',
    ),
    recording_id: query(
      'recording_id',
      'Only passages of this recording of yours ("find the moment in this meeting"). A recording that does not exist or is someone else’s answers 404 `not_found`.',
      { type: 'string', maxLength: MAX_QUERY_VALUE_CHARS },
      ex.recordingExample.id,
    ),
    status: query('status', 'Only jobs in this status.', { type: 'string', enum: [...JOB_STATUS_NAMES] }, 'completed'),
    response_format: query(
      'response_format',
      'Omit (or `json`) for the object; `text`, `srt` or `vtt` for its transcript in that format: captions cut on the words, speaker turns labelled (a job: 409 `transcription_not_ready` before it completed; a recording without a transcript: 400).',
      { type: 'string', enum: ['json', 'text', 'srt', 'vtt'], default: 'json' },
      'srt',
    ),
    words: query(
      'words',
      'With `true`, the transcript’s words with their times, confidence and speaker (`words`); omitted, they are left out (a two-hour recording holds ~20,000).',
      { type: 'string', enum: ['true', 'false'], default: 'false' },
      'true',
    ),
    status_code: query('status_code', 'Only calls answered with this status class (`2xx`, `3xx`, `4xx`, `5xx`) or this exact status (`429`).', { type: 'string', pattern: '^([1-5]xx|[1-5][0-9]{2})$' }, '4xx'),
    route: query('route', 'Only calls of this route template, as entries show it (`/api/v1/recordings/{id}`, or `/mcp`).', { type: 'string', maxLength: MAX_QUERY_VALUE_CHARS }, '/api/v1/convert'),
    tool: query('tool', 'Only /mcp calls of this tool (`get_recording`) or JSON-RPC method (`tools/list`).', { type: 'string', maxLength: MAX_QUERY_VALUE_CHARS }, 'transcribe'),
    key_id: query('key_id', 'Only calls made with this key of yours (key_…) or OAuth connection (con_…).', { type: 'string', maxLength: MAX_QUERY_VALUE_CHARS }, 'key_dhkkdm0vk036gfhi71bjhk7v'),
    created_after: date('after'),
    created_before: date('before'),
    'Idempotency-Key': {
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        `Makes the call safe to retry: 1–${MAX_IDEMPOTENCY_KEY_CHARS} printable ASCII characters, e.g. a UUID, scoped to your account. The first response is replayed ` +
        'for 24 hours for the same key and parameters; other parameters, or a duplicate while the first still runs, answer 409.',
      schema: { type: 'string', pattern: IDEMPOTENCY_KEY_PATTERN.source },
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
        'with another method answers 405 `method_not_allowed` with an `Allow` header. A request HTTP cannot parse is answered in the same ' +
        'body with code `invalid_request` before any route sees it: 431 when the request line and headers exceed 16 KB, 400 for a missing ' +
        '`Host`, a NUL or control character in a header, Content-Length together with Transfer-Encoding, a bad chunk size or an unknown ' +
        'method. Two `Authorization` headers answer 400 `invalid_request` (`param`: `Authorization`).',
      '',
      '**AI Credits and limits**: `POST /transcribe` and `POST /convert` spend AI Credits (monthly first, then prepaid) and share a rate ' +
        'limit of 10 requests a minute per user (a sliding window), reported both as `RateLimit-Limit`, `RateLimit-Remaining` and ' +
        '`RateLimit-Reset` and as the current IETF draft’s `RateLimit-Policy: "ai";q=10;w=60` and `RateLimit: "ai";r=8;t=40` ' +
        '(`t` and `RateLimit-Reset`: seconds until the next used slot frees).',
    ].join('\n'),
  };
}

let cached: { version: string; doc: OpenApiDocument } | undefined;

/** The document for `version` (the gateway's release). Built once; callers get their own copy. */
export function buildOpenApiDocument(version: string): OpenApiDocument {
  if (cached?.version !== version) cached = { version, doc: build(version) };
  return structuredClone(cached.doc);
}

/**
 * The paths, from the route table (routes.ts): each route's operation, with its path parameters
 * first, then one parameter per query rule of the route, then its headers.
 */
function paths(): OpenApiDocument['paths'] {
  const described = operations();
  const out: OpenApiDocument['paths'] = {};
  for (const route of ROUTES) {
    const operation = described[route.operationId];
    const given = operation.parameters ?? [];
    const inPath = given.filter((p) => p.in === 'path');
    const query = Object.keys('query' in route ? route.query : {}).map((name) => ({ $ref: `#/components/parameters/${name}` }));
    const parameters = [...inPath, ...query, ...given.filter((p) => p.in !== 'path')];
    out[route.path] = { ...out[route.path], [route.method]: { ...operation, parameters } };
  }
  return out;
}

function build(version: string): OpenApiDocument {
  return {
    openapi: '3.1.1',
    info: info(version),
    servers: [{ url: API_BASE, description: 'This server' }],
    tags: [
      { name: 'Account', description: 'Your profile, plan and usage.' },
      { name: 'AI', description: 'Transcription and conversion; spend AI Credits and count against the rate limit.' },
      { name: 'Library', description: 'Your recordings, Thought Threads, folders and knowledge bases (read-only).' },
      { name: 'Live', description: 'Live transcription over a WebSocket (GET /api/v1/listen, see docs/live.md) and the tokens browsers open it with.' },
      { name: 'Meta', description: 'About the API itself.' },
    ],
    security: [{ bearerAuth: [] }],
    paths: paths(),
    components: {
      schemas: componentSchemas(),
      parameters: parameters(),
      headers: {
        'X-Request-Id': header(
          'The id of this request (yours if you sent a well-formed one); in every log line and error body. Quote it to support.',
          { type: 'string', pattern: REQUEST_ID_PATTERN.source },
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
