/**
 * Limits of the public contract that more than one process enforces — the gateway before any
 * paid work, a service again for its direct gRPC callers — defined once here so the two can
 * never drift apart (they once did: 500 MB was 500,000,000 bytes in the gateway and 500 MiB in
 * the transcription service). A limit only one process applies stays in that process.
 */

/**
 * Largest audio upload (DESIGN.md §3: "audio over 500 MB"). Decimal, as users read sizes and as
 * docs/decisions.md states it: 500 MB = 500,000,000 bytes, counted on the decoded bytes.
 */
export const MAX_AUDIO_BYTES = 500_000_000;

/** Longest `Idempotency-Key` (DESIGN.md §7: at most 255 characters). */
export const MAX_IDEMPOTENCY_KEY_CHARS = 255;

/** Page size of a list when none is asked for (DESIGN.md §3 routes: `limit` default 20). */
export const DEFAULT_PAGE_LIMIT = 20;
/** Largest page a client may ask for (DESIGN.md §3 routes: `limit` 1–100). */
export const MAX_PAGE_LIMIT = 100;

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
