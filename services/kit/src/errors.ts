/**
 * The one error model: a public code (DESIGN.md §3) ↔ gRPC status + google.rpc.ErrorInfo
 * reason ↔ HTTP status and body. Services throw {@link MurmurError}; the gRPC server factory
 * turns it into a status, the gRPC client turns the status back into a MurmurError, and the
 * gateway renders it. Nothing else maps errors.
 */
import { Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { protobufAny, rpcErrorDetails, rpcStatus } from '@murmur/proto';
import {
  ClientClosedError,
  ClientOfflineError,
  ConnectionTimeoutError,
  ReconnectStrategyError,
  SocketClosedUnexpectedlyError,
  SocketTimeoutError,
  TimeoutError as RedisTimeoutError,
} from 'redis';
import type { Logger } from './log';

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
  grpc: GrpcStatus;
  message: string;
}

/** Every public error code with its HTTP status, family, gRPC status and default message. */
export const ERROR_CODES = {
  missing_api_key: {
    http: 401, type: 'authentication_error', grpc: GrpcStatus.UNAUTHENTICATED,
    message: 'No API key was sent. Send it as "Authorization: Bearer svc_…"; create one in Settings → Developer.',
  },
  invalid_api_key: {
    http: 401, type: 'authentication_error', grpc: GrpcStatus.UNAUTHENTICATED,
    message: 'The API key is malformed, unknown or revoked. Check it, or create a new key in Settings → Developer.',
  },
  expired_api_key: {
    http: 401, type: 'authentication_error', grpc: GrpcStatus.UNAUTHENTICATED,
    message: 'The API key has expired. Create a new key in Settings → Developer.',
  },
  invalid_credentials: {
    http: 401, type: 'authentication_error', grpc: GrpcStatus.UNAUTHENTICATED,
    message: 'The workload token or principal assertion of this call is forged, expired or meant for another service. Internal teams: send your API key as `authorization` metadata.',
  },
  permission_denied: {
    http: 403, type: 'permission_error', grpc: GrpcStatus.PERMISSION_DENIED,
    message: 'This caller may not call this RPC. docs/authorization.md lists who may call each one.',
  },
  invalid_request: {
    http: 400, type: 'invalid_request_error', grpc: GrpcStatus.INVALID_ARGUMENT,
    message: 'The request is not valid. Check the parameter named in `param`.',
  },
  missing_audio: {
    http: 400, type: 'invalid_request_error', grpc: GrpcStatus.INVALID_ARGUMENT,
    message: 'No audio was sent. Send a multipart field `audio`, a JSON field `audio_base64`, or a link to the file in `audio_url`.',
  },
  unsupported_audio: {
    http: 415, type: 'invalid_request_error', grpc: GrpcStatus.INVALID_ARGUMENT,
    message: 'The audio could not be decoded. Send a common format such as WAV, MP3, M4A, OGG, FLAC or WebM.',
  },
  audio_too_large: {
    http: 413, type: 'invalid_request_error', grpc: GrpcStatus.INVALID_ARGUMENT,
    message: 'The audio is larger than 500 MB. Split it into shorter files.',
  },
  audio_url_forbidden: {
    http: 400, type: 'invalid_request_error', grpc: GrpcStatus.INVALID_ARGUMENT,
    message: '`audio_url` must be a public http(s) address on port 80 or 443; this one is not (or redirects to one that is not), so nothing was fetched. Host the file publicly, or upload it instead.',
  },
  audio_url_unreachable: {
    http: 422, type: 'invalid_request_error', grpc: GrpcStatus.FAILED_PRECONDITION,
    message: 'The audio at `audio_url` could not be downloaded; nothing was charged. Check that the link works without signing in, then try again, or upload the file instead.',
  },
  request_timeout: {
    http: 408, type: 'invalid_request_error', grpc: GrpcStatus.DEADLINE_EXCEEDED,
    message: 'The request body stopped arriving before it was complete; nothing was charged. Send the request again.',
  },
  // OAuth 2.1 (RFC 6749 §5.2): a code or refresh token the token endpoint refuses. Answered by
  // the app's token endpoint in the RFC's own error format, never by the REST API.
  invalid_grant: {
    http: 400, type: 'invalid_request_error', grpc: GrpcStatus.INVALID_ARGUMENT,
    message: 'The authorization grant is invalid, expired, revoked, or was issued to another client. Start the authorization again.',
  },
  // CreateApiKey past MAX_ACTIVE_API_KEYS (kit limits.ts). Internal (the app and the admin CLI
  // create keys; the public API never does), so never a REST answer.
  api_key_limit_reached: {
    http: 409, type: 'invalid_request_error', grpc: GrpcStatus.FAILED_PRECONDITION,
    message: 'This user already holds the most active API keys allowed. Revoke a key you no longer use in Settings → Developer, then create the new one.',
  },
  // CreateAuthorizationCode past MAX_ACTIVE_OAUTH_CONNECTIONS (kit oauth-rules.ts): the app's
  // consent screen answers it as a page; never a REST answer.
  oauth_connection_limit_reached: {
    http: 409, type: 'invalid_request_error', grpc: GrpcStatus.FAILED_PRECONDITION,
    message: 'This user already has the most connected apps allowed. Revoke one in Settings → Developer (Connected apps), then connect this one again.',
  },
  not_found: {
    http: 404, type: 'invalid_request_error', grpc: GrpcStatus.NOT_FOUND,
    message: 'No such resource. Check the id or the path.',
  },
  method_not_allowed: {
    http: 405, type: 'invalid_request_error', grpc: GrpcStatus.UNIMPLEMENTED,
    message: 'This method is not allowed on this path. See the `Allow` header.',
  },
  insufficient_scope: {
    http: 403, type: 'permission_error', grpc: GrpcStatus.PERMISSION_DENIED,
    message: 'This key or access token lacks the scope this call needs: a read-only API key cannot spend AI Credits or change state. Use a key with full access, or connect the client again and allow the scope.',
  },
  forbidden_origin: {
    http: 403, type: 'invalid_request_error', grpc: GrpcStatus.PERMISSION_DENIED,
    message: 'This Origin may not call the MCP server.',
  },
  insufficient_tokens: {
    http: 402, type: 'billing_error', grpc: GrpcStatus.FAILED_PRECONDITION,
    message: 'No AI Credits are left. Buy prepaid credits or upgrade your plan in Settings → Billing; nothing was charged.',
  },
  spending_cap_reached: {
    http: 402, type: 'billing_error', grpc: GrpcStatus.FAILED_PRECONDITION,
    message: "This month's spending cap is reached. Raise the cap in Settings → Billing or wait for the monthly reset.",
  },
  // The gateway's bound on unknown keys per client address (gateway/src/http/failed-keys.ts).
  too_many_invalid_keys: {
    http: 429, type: 'rate_limit_error', grpc: GrpcStatus.RESOURCE_EXHAUSTED,
    message: 'Too many requests from your address sent unknown or revoked API keys. Wait for the number of seconds in `Retry-After`, and check the key you send.',
  },
  rate_limit_exceeded: {
    http: 429, type: 'rate_limit_error', grpc: GrpcStatus.RESOURCE_EXHAUSTED,
    message: 'Too many AI requests. Wait for the number of seconds in `Retry-After` and try again.',
  },
  idempotency_conflict: {
    http: 409, type: 'idempotency_error', grpc: GrpcStatus.ABORTED,
    message: 'This Idempotency-Key was used with other parameters, or its first request is still running (retry later), or completed and its response is no longer kept. Use a new key for a new request.',
  },
  conversion_failed: {
    http: 502, type: 'api_error', grpc: GrpcStatus.INTERNAL,
    message: 'The conversion could not be completed; your credits were returned. Try again.',
  },
  transcription_not_cancelable: {
    http: 409, type: 'invalid_request_error', grpc: GrpcStatus.FAILED_PRECONDITION,
    message: 'The transcription has already ended (completed, failed or canceled); there is nothing to cancel.',
  },
  transcription_not_ready: {
    http: 409, type: 'invalid_request_error', grpc: GrpcStatus.FAILED_PRECONDITION,
    message: 'The transcription has not completed, so there is no transcript to format yet. Wait for status "completed" (GET /transcriptions/{id} or its events), then ask again.',
  },
  transcription_canceled: {
    http: 409, type: 'invalid_request_error', grpc: GrpcStatus.FAILED_PRECONDITION,
    message: 'The transcription was canceled before it completed, so there is no transcript; nothing was charged. Submit the audio again to transcribe it.',
  },
  transcription_failed: {
    http: 502, type: 'api_error', grpc: GrpcStatus.INTERNAL,
    message: 'The transcription engine failed; your credits were returned. Try again.',
  },
  service_unavailable: {
    http: 503, type: 'api_error', grpc: GrpcStatus.UNAVAILABLE,
    message: 'A Murmur service is unavailable right now; nothing was charged. Retry in a few seconds.',
  },
  internal_error: {
    http: 500, type: 'api_error', grpc: GrpcStatus.INTERNAL,
    message: 'Something went wrong on our side. Retry; if it persists, contact support with the request id.',
  },
} as const satisfies Record<string, CodeSpec>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Extra facts an error can carry across gRPC (as ErrorInfo metadata) to the HTTP layer. */
export type ErrorMeta = Record<string, string>;

const ERROR_DOMAIN = 'murmur.dev';
const ERROR_INFO_TYPE_URL = 'type.googleapis.com/google.rpc.ErrorInfo';
const STATUS_DETAILS_KEY = 'grpc-status-details-bin';

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

/** A gRPC error object (what grpc-js accepts in a callback) for a MurmurError. */
export function toGrpcError(err: MurmurError): Partial<ServiceError> {
  const spec = ERROR_CODES[err.code];
  const metadata = new Metadata();
  const info: rpcErrorDetails.ErrorInfo = {
    reason: err.code,
    domain: ERROR_DOMAIN,
    metadata: { ...err.meta, ...(err.param ? { param: err.param } : {}) },
  };
  const statusProto: rpcStatus.Status = {
    code: spec.grpc,
    message: err.message,
    details: [{ typeUrl: ERROR_INFO_TYPE_URL, value: Buffer.from(rpcErrorDetails.ErrorInfo.encode(info).finish()) }],
  };
  metadata.set(STATUS_DETAILS_KEY, Buffer.from(rpcStatus.Status.encode(statusProto).finish()));
  return { code: spec.grpc, details: err.message, metadata };
}

/** Reads the ErrorInfo of a gRPC status, if any. */
export function errorInfoOf(err: Pick<ServiceError, 'metadata'>): rpcErrorDetails.ErrorInfo | undefined {
  const raw = err.metadata?.get(STATUS_DETAILS_KEY)[0];
  if (!raw || typeof raw === 'string') return undefined;
  try {
    const decoded = rpcStatus.Status.decode(raw);
    const any = decoded.details.find((d: protobufAny.Any) => d.typeUrl === ERROR_INFO_TYPE_URL);
    return any ? rpcErrorDetails.ErrorInfo.decode(any.value) : undefined;
  } catch {
    return undefined;
  }
}

/** Socket errors of a peer that is down, restarting or unreachable (Node's `err.code`). */
const UNREACHABLE_SOCKET_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'EHOSTDOWN',
  'ENETUNREACH', 'ENETDOWN', 'ENOTFOUND', 'EAI_AGAIN',
]);

/**
 * SQLSTATEs that mean "the database cannot serve this connection right now", not "this
 * statement is wrong": class 08 (connection exception) as a whole, shutdowns and start-up
 * (57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now), too many connections,
 * and a primary that became a read-only standby during a failover.
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '25006']);

/** What `pg` and pg-pool say, without a code, when the connection is gone or never came. */
const UNAVAILABLE_PG_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect$/,
  /^Client has encountered a connection error and is not queryable$/,
  /^Client was closed and is not queryable$/,
  /^Query read timeout$/,
  /^Cannot use a pool after calling end on the pool$/,
];

/** Redis replies of a server that is loading, failing over or not yet a primary. */
const UNAVAILABLE_REDIS_REPLIES = /^(LOADING|MASTERDOWN|READONLY|TRYAGAIN|CLUSTERDOWN)\b/;

/** Raised by {@link withDeadline}: the dependency did not answer within the caller's budget. */
export class DependencyTimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} did not answer within ${ms} ms`);
    this.name = 'DependencyTimeoutError';
  }
}

/**
 * Why `err` means a dependency (Postgres, Redis, a socket) is unreachable right now — a fact
 * about the infrastructure, not a bug — or undefined. The one table deciding what becomes
 * `service_unavailable` instead of `internal_error`; follows `cause` and AggregateError.
 */
export function unavailableCause(err: unknown, depth = 0): string | undefined {
  if (depth > 4 || typeof err !== 'object' || err === null) return undefined;
  if (
    err instanceof ClientOfflineError ||
    err instanceof ClientClosedError ||
    err instanceof ConnectionTimeoutError ||
    err instanceof SocketClosedUnexpectedlyError ||
    err instanceof SocketTimeoutError ||
    err instanceof RedisTimeoutError ||
    err instanceof ReconnectStrategyError
  ) {
    return `redis: ${(err as Error).message}`;
  }
  if (err instanceof DependencyTimeoutError) return err.message;
  const e = err as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  const code = typeof e.code === 'string' ? e.code : undefined;
  const message = typeof e.message === 'string' ? e.message : '';
  if (code && UNREACHABLE_SOCKET_CODES.has(code)) return `socket: ${code}`;
  if (code && /^[0-9A-Z]{5}$/.test(code) && (code.startsWith('08') || UNAVAILABLE_SQLSTATES.has(code))) return `postgres: SQLSTATE ${code}`;
  if (UNAVAILABLE_PG_MESSAGES.some((re) => re.test(message))) return `postgres: ${message}`;
  if (UNAVAILABLE_REDIS_REPLIES.test(message)) return `redis: ${message.split(' ')[0]}`;
  if (Array.isArray(e.errors)) {
    for (const inner of e.errors) {
      const why = unavailableCause(inner, depth + 1);
      if (why) return why;
    }
  }
  return e.cause !== undefined ? unavailableCause(e.cause, depth + 1) : undefined;
}

/** The service_unavailable error for an unreachable dependency, or undefined for anything else. */
export function unavailableError(err: unknown): MurmurError | undefined {
  if (err instanceof MurmurError) return err.code === 'service_unavailable' ? err : undefined;
  return unavailableCause(err) === undefined ? undefined : new MurmurError('service_unavailable');
}

/**
 * The one way any failure becomes public, for every boundary (the gRPC server, REST, MCP): a
 * MurmurError as it is; an unreachable dependency as service_unavailable (a warning, no stack:
 * an outage, not a bug); anything else is a bug, logged here once with its stack — the line
 * carries the request id of the call — and answered internal_error, its message never sent.
 * `context` says where it happened (method, path, tool); `internalMessage` replaces the
 * contract's default message of internal_error (gRPC statuses say just "internal error").
 */
export function asPublicError(err: unknown, log: Logger, context: Record<string, string> = {}, internalMessage?: string): MurmurError {
  if (err instanceof MurmurError) return err;
  const cause = unavailableCause(err);
  if (cause !== undefined) {
    log.warn({ ...context, cause }, 'a dependency is unavailable; answered service_unavailable');
    return new MurmurError('service_unavailable');
  }
  const e = err as { message?: unknown; stack?: unknown } | null | undefined;
  log.error({ ...context, err: { message: String(e?.message ?? err), stack: e?.stack } }, 'unhandled error');
  return new MurmurError('internal_error', internalMessage);
}

/**
 * Settles like `work`, or rejects with {@link DependencyTimeoutError} after `ms`: a bound for
 * calls to a dependency that may hang (a frozen Redis) where the caller would rather fail fast.
 */
export function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DependencyTimeoutError(what, ms)), ms);
    timer.unref();
  });
  // A late rejection of `work` after the timeout must not become an unhandled rejection.
  work.catch(() => undefined);
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Turns whatever a gRPC call failed with into a MurmurError: the ErrorInfo reason when the
 * peer sent one, otherwise service_unavailable for transport failures (and for an unreachable
 * dependency of the caller itself, see {@link unavailableCause}) and internal_error.
 */
export function fromGrpcError(err: unknown): MurmurError {
  if (err instanceof MurmurError) return err;
  const e = err as Partial<ServiceError>;
  if (e && typeof e.code === 'number') {
    const info = e.metadata ? errorInfoOf(e as ServiceError) : undefined;
    if (info && info.domain === ERROR_DOMAIN && isErrorCode(info.reason)) {
      const { param, ...meta } = info.metadata;
      return new MurmurError(info.reason, e.details || undefined, { param: param ?? null, meta });
    }
    if (e.code === GrpcStatus.UNAVAILABLE || e.code === GrpcStatus.DEADLINE_EXCEEDED || e.code === GrpcStatus.CANCELLED) {
      return new MurmurError('service_unavailable');
    }
  }
  return unavailableError(err) ?? new MurmurError('internal_error');
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
