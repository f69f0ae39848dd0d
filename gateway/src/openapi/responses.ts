/** The pieces of responses every operation shares: headers, error responses, JSON bodies. */
import { ERROR_CODES, type ErrorCode } from '@murmur/contract';
import * as ex from './examples';
import { ref, REST_ERROR_CODES, type JsonSchema } from './schemas';
import type { Json, ResponseObject } from './types';

export const AUTH_CODES: ErrorCode[] = ['missing_api_key', 'invalid_api_key', 'expired_api_key'];
/** What any authenticated call can answer besides its own errors. */
export const EVERY_CALL: ErrorCode[] = [...AUTH_CODES, 'too_many_invalid_keys', 'invalid_request', 'internal_error', 'service_unavailable'];
/** What a call that spends credits or changes state answers besides EVERY_CALL: a read-only key's refusal. */
export const CHANGES: ErrorCode[] = ['insufficient_scope'];
export const AI_CALL: ErrorCode[] = [
  ...EVERY_CALL,
  ...CHANGES,
  'insufficient_tokens',
  'spending_cap_reached',
  'not_found',
  'idempotency_conflict',
  'rate_limit_exceeded',
];

const STATUS_DESCRIPTIONS: Record<number, string> = {
  400: 'The request is not valid: a query parameter, a body field or a header (named in `param`).',
  401: 'No API key, or a malformed, unknown, revoked or expired one. `WWW-Authenticate` carries the challenge.',
  403: 'The API key is read-only: it may read, but not make a call that spends AI Credits or changes state. Nothing was read, charged or counted against the rate limit. Use a key with full access (create one in Settings → Developer). `WWW-Authenticate` names the scope (`ai`).',
  402: 'No AI Credits are left, or this month’s spending cap is reached. Refused before any work (on `/transcribe`, and on a `/convert` body over 64 KB, before the body is read); nothing was charged.',
  404: 'No such resource — or one that belongs to someone else: both answer the same.',
  409: 'A conflict with the state of things: the Idempotency-Key was used with other parameters or its first request still runs, or the transcription job has already ended (cancel) or has not completed yet (a text format).',
  413: 'The audio is larger than 500 MB (a file, or base64 once decoded); refused while it uploads.',
  415: 'The audio could not be decoded.',
  429: 'Over a limit; wait `Retry-After` seconds. `rate_limit_exceeded`: over the AI rate limit (transcribe and convert together, REST and MCP together; policy `"ai"`). `too_many_invalid_keys`: too many requests from this client address sent unknown or revoked keys (policy `"keys"`; keys verified lately still work).',
  500: 'A bug on our side, logged with the request id; retry.',
  502: 'The engine failed; the credits reserved for the call were returned. Retry with a new Idempotency-Key (the failure is replayed for the old one).',
  503: 'A Murmur service is unavailable; nothing was charged. Retry in a few seconds.',
};

export function header(description: string, schema: JsonSchema, required: boolean, example: unknown): Json {
  return { description, required, schema, example };
}

/** On every response; `traceparent` whenever the gateway runs with tracing (main.ts starts it first). */
export const COMMON_HEADERS: Record<string, Json> = {
  'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
  traceparent: { $ref: '#/components/headers/traceparent' },
};

/**
 * The rate-limit headers: RateLimit-Limit/-Remaining/-Reset (the earlier IETF drafts' separate
 * form, still the most widely parsed) and RateLimit-Policy/RateLimit (the current
 * draft-ietf-httpapi-ratelimit-headers structured fields), the same numbers in both.
 */
export function rateLimitHeaders(
  required: boolean,
  when = required ? '' : ' Present once billing has admitted the call (not on a 400 for a malformed Idempotency-Key, nor on a 503 from billing itself).',
): Record<string, Json> {
  return {
    'RateLimit-Limit': header(
      `Requests allowed per window of the policy this response reports: AI requests per user (policy \`"ai"\`), or, on a 429 \`too_many_invalid_keys\`, requests with unknown keys per client address (policy \`"keys"\`).${when}`,
      { type: 'integer', minimum: 0 },
      required,
      10,
    ),
    'RateLimit-Remaining': header(`Requests left in the current window.${when}`, { type: 'integer', minimum: 0 }, required, 8),
    'RateLimit-Reset': header(
      `Seconds until the next used request slot frees up (the window slides: each request gives its slot back one window after it was made); 0 only when no slot is in use.${when}`,
      { type: 'integer', minimum: 0 },
      required,
      40,
    ),
    'RateLimit-Policy': header(
      `The quota policy, per draft-ietf-httpapi-ratelimit-headers: policy \`"ai"\` (transcribe and convert, REST and MCP together) or \`"keys"\` (unknown keys per client address), \`q\` requests per \`w\` seconds.${when}`,
      { type: 'string', pattern: '^"(ai|keys)";q=\\d+;w=\\d+$' },
      required,
      '"ai";q=10;w=60',
    ),
    RateLimit: header(
      `The current state of the policy, per draft-ietf-httpapi-ratelimit-headers: \`r\` requests remaining, \`t\` seconds as in RateLimit-Reset.${when}`,
      { type: 'string', pattern: '^"(ai|keys)";r=\\d+;t=\\d+$' },
      required,
      '"ai";r=8;t=40',
    ),
  };
}

export const IDEMPOTENT_REPLAYED = header(
  'Present, `true`, when this is the stored response of an earlier request with the same Idempotency-Key and parameters; nothing was charged again.',
  { type: 'string', enum: ['true'] },
  false,
  'true',
);

/** The error responses of one operation, one per status, each listing the codes it can carry. */
export function errorResponses(
  codes: readonly ErrorCode[],
  opts: { ai?: boolean; replayable?: boolean; /** What a status means on this operation, instead of the shared words. */ describe?: Partial<Record<number, string>> } = {},
): Record<string, ResponseObject> {
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
    if (status === 403) {
      headers['WWW-Authenticate'] = header(
        'The Bearer challenge naming the scope the call needs (RFC 6750 §3.1).',
        { type: 'string', pattern: '^Bearer realm="murmur", error="insufficient_scope", scope="[a-z ]+"$' },
        true,
        'Bearer realm="murmur", error="insufficient_scope", scope="ai"',
      );
    }
    if (status === 429) {
      headers['Retry-After'] = header('Seconds to wait before retrying.', { type: 'integer', minimum: 1 }, true, 42);
    }
    // 401, 402, 403 and 409 are answered before billing admits the call, so they carry no window.
    if (opts.ai && ![401, 402, 403, 409].includes(status)) Object.assign(headers, rateLimitHeaders(status === 429));
    // A 429 too_many_invalid_keys reports its own window (policy "keys"); a per-user cap without
    // a window (event streams open at once, webhook retries) answers Retry-After alone: the
    // headers are documented, not required, off the AI routes.
    else if (status === 429) Object.assign(headers, rateLimitHeaders(false, ' Present on a 429 `too_many_invalid_keys`; absent on a per-user cap without a window.'));
    if (opts.replayable && status >= 500 && status !== 503) headers['Idempotent-Replayed'] = IDEMPOTENT_REPLAYED;
    // One example per code this operation can answer with at this status: the codes a client
    // must expect here (the checker in gateway/test holds real responses to exactly these).
    const examples = Object.fromEntries(statusCodes.map((code) => [code, { summary: code, value: ex.errorExample(code) }]));
    const codeList = statusCodes.map((code) => `\`${code}\``).join(', ');
    out[String(status)] = {
      description: `${opts.describe?.[status] ?? STATUS_DESCRIPTIONS[status] ?? 'An error.'} Codes: ${codeList}.`,
      headers,
      content: { 'application/json': { schema: ref('Error'), examples } },
    };
  }
  return out;
}

export function jsonResponse(description: string, schemaName: string, example: unknown): ResponseObject {
  return {
    description,
    headers: { ...COMMON_HEADERS },
    content: { 'application/json': { schema: ref(schemaName), example } },
  };
}
