/**
 * The rules of the request headers the contract defines (DESIGN.md §2, §7): Authorization,
 * Idempotency-Key (also the RPCs' `idempotency_key`) and X-Request-Id.
 *
 * Parsing of the Authorization header value, kept pure so the whole order of checks of
 * DESIGN.md §2 up to (and excluding) the database is one table-tested function: a malformed
 * header is rejected here, before any hashing, cache or database work. Auth's VerifyKey and the
 * gateway both apply it, so a missing or malformed key is refused without asking auth (also
 * while auth is down).
 */
import { invalidParam } from './errors';
import { MAX_IDEMPOTENCY_KEY_CHARS } from './limits';
import { ACCESS_TOKEN_PATTERN } from './oauth-rules';

/** The only shape a Murmur API key has: "svc_" + 64 lowercase hex (256 random bits). */
export const API_KEY_PATTERN = /^svc_[0-9a-f]{64}$/;

/**
 * The only shape a listen token has: "lst_" + 43 base64url (32 random bytes). A browser sends
 * it as the `token` query parameter of GET /api/v1/listen, where it cannot set Authorization;
 * anything else there is refused before any lookup.
 */
export const LISTEN_TOKEN_PATTERN = /^lst_[A-Za-z0-9_-]{43}$/;

/** Why a header was rejected before any lookup. */
export type AuthorizationFailure = 'missing_api_key' | 'invalid_api_key';

export type ParsedAuthorization = { ok: true; key: string } | { ok: false; code: AuthorizationFailure };

/**
 * Reads "Bearer <key>" (scheme case-insensitive, surrounding whitespace ignored).
 *
 * - empty or whitespace only → missing_api_key;
 * - "Bearer" with no token → missing_api_key (nothing that could be a key was sent, so the
 *   helpful answer is how to send one);
 * - any other scheme, extra parts, or a token that is neither exactly `svc_` + 64 lowercase hex
 *   nor an OAuth access token (`mat_` + 43 base64url) → invalid_api_key.
 */
export function parseAuthorization(header: string | undefined | null): ParsedAuthorization {
  const value = (header ?? '').trim();
  if (value === '') return { ok: false, code: 'missing_api_key' };
  const parts = value.split(/\s+/);
  const [scheme, key, ...rest] = parts;
  if (scheme === undefined || scheme.toLowerCase() !== 'bearer') return { ok: false, code: 'invalid_api_key' };
  if (key === undefined) return { ok: false, code: 'missing_api_key' };
  if (rest.length > 0 || (!API_KEY_PATTERN.test(key) && !ACCESS_TOKEN_PATTERN.test(key))) return { ok: false, code: 'invalid_api_key' };
  return { ok: true, key };
}

/**
 * An idempotency key: 1–{@link MAX_IDEMPOTENCY_KEY_CHARS} printable ASCII characters without
 * spaces — the Idempotency-Key header's rule, and the RPCs' `idempotency_key`. The OpenAPI
 * document publishes this pattern.
 */
export const IDEMPOTENCY_KEY_PATTERN = new RegExp(`^[\\x21-\\x7e]{1,${MAX_IDEMPOTENCY_KEY_CHARS}}$`);

export function isIdempotencyKey(value: string): boolean {
  return IDEMPOTENCY_KEY_PATTERN.test(value);
}

/** The one refusal of a malformed idempotency key (invalid_request naming `param`); returns the key. */
export function checkIdempotencyKey(value: string, param: string): string {
  if (!isIdempotencyKey(value)) {
    throw invalidParam(param, `${param} must be 1–${MAX_IDEMPOTENCY_KEY_CHARS} printable ASCII characters without spaces, e.g. a UUID.`);
  }
  return value;
}

/**
 * A request id we keep when a caller sends one (X-Request-Id, gRPC `x-request-id`): `req_` and
 * 8–64 letters, digits, `_` or `-`. The OpenAPI document publishes this pattern.
 */
export const REQUEST_ID_PATTERN = /^req_[A-Za-z0-9_-]{8,64}$/;
