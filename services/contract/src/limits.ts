/**
 * Limits of the public contract that more than one process enforces — the gateway before any
 * paid work, a service again for its direct gRPC callers — or that the OpenAPI document and the
 * MCP schemas publish, defined once here so they can never drift apart (they once did: 500 MB
 * was 500,000,000 bytes in the gateway and 500 MiB in the transcription service; the cursor was
 * 512 characters in the kit and 1000 in the OpenAPI document). A limit only one process applies
 * and nobody publishes stays in that process.
 */
import { invalidParam } from './errors';

/**
 * Largest audio upload (DESIGN.md §3: "audio over 500 MB"). Decimal, as users read sizes and as
 * docs/decisions/0009-transcription-uploads.md states it: 500 MB = 500,000,000 bytes, counted on the decoded bytes.
 */
export const MAX_AUDIO_BYTES = 500_000_000;

/** Longest `Idempotency-Key` (DESIGN.md §7: at most 255 characters). */
export const MAX_IDEMPOTENCY_KEY_CHARS = 255;

/** Page size of a list when none is asked for (DESIGN.md §3 routes: `limit` default 20). */
export const DEFAULT_PAGE_LIMIT = 20;
/** Largest page a client may ask for (DESIGN.md §3 routes: `limit` 1–100). */
export const MAX_PAGE_LIMIT = 100;

/**
 * The one page-size rule of every list, public or internal (REST `limit`, MCP `limit`, the
 * RPCs' `limit` and `page_size`): absent means {@link DEFAULT_PAGE_LIMIT}, and so does 0 where
 * the wire cannot tell 0 from absent (`zeroMeansDefault`: proto3 integers); anything outside
 * 1–{@link MAX_PAGE_LIMIT} is invalid_request naming `param`.
 */
export function pageSizeOf(value: number | undefined, param: string, options: { zeroMeansDefault: boolean }): number {
  if (value === undefined || (value === 0 && options.zeroMeansDefault)) return DEFAULT_PAGE_LIMIT;
  if (!Number.isInteger(value) || value < 1 || value > MAX_PAGE_LIMIT) {
    throw invalidParam(param, `\`${param}\` must be an integer from 1 to ${MAX_PAGE_LIMIT} (default ${DEFAULT_PAGE_LIMIT}).`);
  }
  return value;
}

/**
 * Longest page cursor a list accepts. The cursors we issue are under 200 characters (a signed
 * list name, position and filter digest); anything longer is not ours. Every front end states
 * the same number: the kit's cursor codec, REST's query rules, the MCP schemas and the OpenAPI
 * document (docs/decisions/0032-contract-package.md, "One cursor length").
 */
export const MAX_CURSOR_CHARS = 512;

/**
 * Longest value of any other REST query parameter, in UTF-16 units, before its own rule (a
 * search, an id, a date) is applied; the OpenAPI document publishes it as each one's maxLength.
 */
export const MAX_QUERY_VALUE_CHARS = 1000;

/**
 * A POST /convert body declared (Content-Length) at most this size is read before billing admits
 * the call, which its reservation then does in the same round trip: a 10,000-word transcript is
 * ~60 KB. Larger or unannounced bodies are admitted first, so a refused caller sends no more.
 * The OpenAPI document states it; the convert benchmark sizes its bodies by it.
 */
export const CONVERT_READ_FIRST_MAX_BYTES = 64 * 1024;

/**
 * Transcription event streams (GET /transcriptions/{id}/events, WatchTranscription) open at once
 * per user: each live one re-reads its job twice a second. Enforced by the transcription
 * service; the gateway's OpenAPI document states it.
 */
export const MAX_WATCHERS_PER_USER = 10;
/** Webhook retries (POST /transcriptions/{id}/webhook/retry, RetryWebhook) per user in a sliding window. */
export const WEBHOOK_RETRY_LIMIT = { limit: 30, windowSeconds: 60 } as const;

/** Longest `instructions` of a conversion, in characters. */
export const MAX_INSTRUCTIONS_CHARS = 2_000;

/**
 * Most API keys one user may hold at once: unrevoked and unexpired (revoked and expired ones
 * stay listed and do not count). Past it CreateApiKey answers `api_key_limit_reached`; revoke a
 * key first. Generous for real use (a key per machine, CI job and teammate's tool), small enough
 * that a user cannot grow the keys table without bound.
 */
export const MAX_ACTIVE_API_KEYS = 50;

/**
 * How long a listen token (POST /api/v1/listen/tokens, docs/live.md "Connecting") can open a
 * live-transcription stream: long enough for a browser to receive it and connect, short enough
 * that one leaked from a page soon dies. Auth sets the expiry; the gateway's response and the
 * OpenAPI document state it as `expires_in`.
 */
export const LISTEN_TOKEN_TTL_SECONDS = 60;
