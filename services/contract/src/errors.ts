/**
 * The one error table of the public contract (DESIGN.md §3): every code with its HTTP status,
 * family, gRPC status and default message, and {@link MurmurError}, the only error a service
 * throws on purpose. No I/O: carrying an error over gRPC (ErrorInfo) and deciding what an
 * unreachable dependency becomes are the kit's (services/kit/src/errors.ts).
 */
import { GRPC_STATUS, type GrpcStatusCode } from './grpc-status';

export type ErrorType =
  | 'authentication_error'
  | 'permission_error'
  | 'invalid_request_error'
  | 'billing_error'
  | 'rate_limit_error'
  | 'idempotency_error'
  | 'api_error';

interface CodeSpec {
  http: number;
  type: ErrorType;
  grpc: GrpcStatusCode;
  message: string;
}

/** Every public error code with its HTTP status, family, gRPC status and default message. */
export const ERROR_CODES = {
  missing_api_key: {
    http: 401, type: 'authentication_error', grpc: GRPC_STATUS.UNAUTHENTICATED,
    message: 'No API key was sent. Send it as "Authorization: Bearer svc_…"; create one in Settings → Developer.',
  },
  invalid_api_key: {
    http: 401, type: 'authentication_error', grpc: GRPC_STATUS.UNAUTHENTICATED,
    message: 'The API key is malformed, unknown or revoked. Check it, or create a new key in Settings → Developer.',
  },
  expired_api_key: {
    http: 401, type: 'authentication_error', grpc: GRPC_STATUS.UNAUTHENTICATED,
    message: 'The API key has expired. Create a new key in Settings → Developer.',
  },
  invalid_credentials: {
    http: 401, type: 'authentication_error', grpc: GRPC_STATUS.UNAUTHENTICATED,
    message: 'The workload token or principal assertion of this call is forged, expired or meant for another service. Internal teams: send your API key as `authorization` metadata.',
  },
  permission_denied: {
    http: 403, type: 'permission_error', grpc: GRPC_STATUS.PERMISSION_DENIED,
    message: 'This caller may not call this RPC. docs/authorization.md lists who may call each one.',
  },
  invalid_request: {
    http: 400, type: 'invalid_request_error', grpc: GRPC_STATUS.INVALID_ARGUMENT,
    message: 'The request is not valid. Check the parameter named in `param`.',
  },
  missing_audio: {
    http: 400, type: 'invalid_request_error', grpc: GRPC_STATUS.INVALID_ARGUMENT,
    message: 'No audio was sent. Send a multipart field `audio`, a JSON field `audio_base64`, or a link to the file in `audio_url`.',
  },
  unsupported_audio: {
    http: 415, type: 'invalid_request_error', grpc: GRPC_STATUS.INVALID_ARGUMENT,
    message: 'The audio could not be decoded. Send a common format such as WAV, MP3, M4A, OGG, FLAC or WebM.',
  },
  audio_too_large: {
    http: 413, type: 'invalid_request_error', grpc: GRPC_STATUS.INVALID_ARGUMENT,
    message: 'The audio is larger than 500 MB. Split it into shorter files.',
  },
  audio_url_forbidden: {
    http: 400, type: 'invalid_request_error', grpc: GRPC_STATUS.INVALID_ARGUMENT,
    message: '`audio_url` must be a public http(s) address on port 80 or 443; this one is not (or redirects to one that is not), so nothing was fetched. Host the file publicly, or upload it instead.',
  },
  audio_url_unreachable: {
    http: 422, type: 'invalid_request_error', grpc: GRPC_STATUS.FAILED_PRECONDITION,
    message: 'The audio at `audio_url` could not be downloaded; nothing was charged. Check that the link works without signing in, then try again, or upload the file instead.',
  },
  request_timeout: {
    http: 408, type: 'invalid_request_error', grpc: GRPC_STATUS.DEADLINE_EXCEEDED,
    message: 'The request body stopped arriving before it was complete; nothing was charged. Send the request again.',
  },
  // OAuth 2.1 (RFC 6749 §5.2): a code or refresh token the token endpoint refuses. Answered by
  // the app's token endpoint in the RFC's own error format, never by the REST API.
  invalid_grant: {
    http: 400, type: 'invalid_request_error', grpc: GRPC_STATUS.INVALID_ARGUMENT,
    message: 'The authorization grant is invalid, expired, revoked, or was issued to another client. Start the authorization again.',
  },
  // CreateApiKey past MAX_ACTIVE_API_KEYS (contract limits.ts). Internal (the app and the admin CLI
  // create keys; the public API never does), so never a REST answer.
  api_key_limit_reached: {
    http: 409, type: 'invalid_request_error', grpc: GRPC_STATUS.FAILED_PRECONDITION,
    message: 'This user already holds the most active API keys allowed. Revoke a key you no longer use in Settings → Developer, then create the new one.',
  },
  // CreateAuthorizationCode past MAX_ACTIVE_OAUTH_CONNECTIONS (contract oauth-rules.ts): the app's
  // consent screen answers it as a page; never a REST answer.
  oauth_connection_limit_reached: {
    http: 409, type: 'invalid_request_error', grpc: GRPC_STATUS.FAILED_PRECONDITION,
    message: 'This user already has the most connected apps allowed. Revoke one in Settings → Developer (Connected apps), then connect this one again.',
  },
  not_found: {
    http: 404, type: 'invalid_request_error', grpc: GRPC_STATUS.NOT_FOUND,
    message: 'No such resource. Check the id or the path.',
  },
  method_not_allowed: {
    http: 405, type: 'invalid_request_error', grpc: GRPC_STATUS.UNIMPLEMENTED,
    message: 'This method is not allowed on this path. See the `Allow` header.',
  },
  insufficient_scope: {
    http: 403, type: 'permission_error', grpc: GRPC_STATUS.PERMISSION_DENIED,
    message: 'This key or access token lacks the scope this call needs: a read-only API key cannot spend AI Credits or change state. Use a key with full access, or connect the client again and allow the scope.',
  },
  forbidden_origin: {
    http: 403, type: 'invalid_request_error', grpc: GRPC_STATUS.PERMISSION_DENIED,
    message: 'This Origin may not call the MCP server.',
  },
  insufficient_tokens: {
    http: 402, type: 'billing_error', grpc: GRPC_STATUS.FAILED_PRECONDITION,
    message: 'No AI Credits are left. Buy prepaid credits or upgrade your plan in Settings → Billing; nothing was charged.',
  },
  spending_cap_reached: {
    http: 402, type: 'billing_error', grpc: GRPC_STATUS.FAILED_PRECONDITION,
    message: "This month's spending cap is reached. Raise the cap in Settings → Billing or wait for the monthly reset.",
  },
  // The gateway's bound on unknown keys per client address (gateway/src/http/failed-keys.ts).
  too_many_invalid_keys: {
    http: 429, type: 'rate_limit_error', grpc: GRPC_STATUS.RESOURCE_EXHAUSTED,
    message: 'Too many requests from your address sent unknown or revoked API keys. Wait for the number of seconds in `Retry-After`, and check the key you send.',
  },
  // Live transcription (docs/live.md): audio sent much faster than it was spoken.
  audio_too_fast: {
    http: 429, type: 'rate_limit_error', grpc: GRPC_STATUS.RESOURCE_EXHAUSTED,
    message: 'Audio arrived more than 2× faster than real time. Send live audio as it is recorded; for a file, use POST /transcribe or POST /transcriptions.',
  },
  rate_limit_exceeded: {
    http: 429, type: 'rate_limit_error', grpc: GRPC_STATUS.RESOURCE_EXHAUSTED,
    message: 'Too many AI requests. Wait for the number of seconds in `Retry-After` and try again.',
  },
  idempotency_conflict: {
    http: 409, type: 'idempotency_error', grpc: GRPC_STATUS.ABORTED,
    message: 'This Idempotency-Key was used with other parameters, or its first request is still running (retry later), or completed and its response is no longer kept. Use a new key for a new request.',
  },
  conversion_failed: {
    http: 502, type: 'api_error', grpc: GRPC_STATUS.INTERNAL,
    message: 'The conversion could not be completed; your credits were returned. Try again.',
  },
  transcription_not_cancelable: {
    http: 409, type: 'invalid_request_error', grpc: GRPC_STATUS.FAILED_PRECONDITION,
    message: 'The transcription has already ended (completed, failed or canceled); there is nothing to cancel.',
  },
  transcription_not_ready: {
    http: 409, type: 'invalid_request_error', grpc: GRPC_STATUS.FAILED_PRECONDITION,
    message: 'The transcription has not completed, so there is no transcript to format yet. Wait for status "completed" (GET /transcriptions/{id} or its events), then ask again.',
  },
  transcription_canceled: {
    http: 409, type: 'invalid_request_error', grpc: GRPC_STATUS.FAILED_PRECONDITION,
    message: 'The transcription was canceled before it completed, so there is no transcript; nothing was charged. Submit the audio again to transcribe it.',
  },
  transcription_failed: {
    http: 502, type: 'api_error', grpc: GRPC_STATUS.INTERNAL,
    message: 'The transcription engine failed; your credits were returned. Try again.',
  },
  service_unavailable: {
    http: 503, type: 'api_error', grpc: GRPC_STATUS.UNAVAILABLE,
    message: 'A Murmur service is unavailable right now; nothing was charged. Retry in a few seconds.',
  },
  internal_error: {
    http: 500, type: 'api_error', grpc: GRPC_STATUS.INTERNAL,
    message: 'Something went wrong on our side. Retry; if it persists, contact support with the request id.',
  },
} as const satisfies Record<string, CodeSpec>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Extra facts an error can carry across gRPC (as ErrorInfo metadata) to the HTTP layer. */
export type ErrorMeta = Record<string, string>;


export function isErrorCode(value: string): value is ErrorCode {
  return Object.prototype.hasOwnProperty.call(ERROR_CODES, value);
}

/** A typed domain error carrying a public code; the only error a service throws on purpose. */
export class MurmurError extends Error {
  readonly code: ErrorCode;
  readonly param: string | null;
  readonly meta: ErrorMeta;

  constructor(code: ErrorCode, message?: string, options: { param?: string | null; meta?: ErrorMeta } = {}) {
    super(message ?? ERROR_CODES[code].message);
    this.name = 'MurmurError';
    this.code = code;
    this.param = options.param ?? null;
    this.meta = options.meta ?? {};
  }

  get httpStatus(): number {
    return ERROR_CODES[this.code].http;
  }

  get type(): ErrorType {
    return ERROR_CODES[this.code].type;
  }
}

/** Shorthand for the most common case: a bad parameter. */
export function invalidParam(param: string, message: string): MurmurError {
  return new MurmurError('invalid_request', message, { param });
}

/** The JSON error body of DESIGN.md §3. */
export interface ErrorBody {
  error: {
    type: ErrorType;
    code: ErrorCode;
    message: string;
    param: string | null;
    request_id: string;
  };
}

export function toErrorBody(err: MurmurError, requestId: string): ErrorBody {
  return { error: { type: err.type, code: err.code, message: err.message, param: err.param, request_id: requestId } };
}
