/**
 * The one error model: a public code (DESIGN.md §3) ↔ gRPC status + google.rpc.ErrorInfo
 * reason ↔ HTTP status and body. Services throw {@link MurmurError}; the gRPC server factory
 * turns it into a status, the gRPC client turns the status back into a MurmurError, and the
 * gateway renders it. Nothing else maps errors.
 */
import { Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { protobufAny, rpcErrorDetails, rpcStatus } from '@murmur/proto';

export type ErrorType =
  | 'authentication_error'
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
  invalid_request: {
    http: 400, type: 'invalid_request_error', grpc: GrpcStatus.INVALID_ARGUMENT,
    message: 'The request is not valid. Check the parameter named in `param`.',
  },
  missing_audio: {
    http: 400, type: 'invalid_request_error', grpc: GrpcStatus.INVALID_ARGUMENT,
    message: 'No audio was sent. Send a multipart field `audio` or a JSON field `audio_base64`.',
  },
  unsupported_audio: {
    http: 415, type: 'invalid_request_error', grpc: GrpcStatus.INVALID_ARGUMENT,
    message: 'The audio could not be decoded. Send a common format such as WAV, MP3, M4A, OGG, FLAC or WebM.',
  },
  audio_too_large: {
    http: 413, type: 'invalid_request_error', grpc: GrpcStatus.INVALID_ARGUMENT,
    message: 'The audio is larger than 500 MB. Split it into shorter files.',
  },
  request_timeout: {
    http: 408, type: 'invalid_request_error', grpc: GrpcStatus.DEADLINE_EXCEEDED,
    message: 'The request body stopped arriving before it was complete; nothing was charged. Send the request again.',
  },
  not_found: {
    http: 404, type: 'invalid_request_error', grpc: GrpcStatus.NOT_FOUND,
    message: 'No such resource. Check the id or the path.',
  },
  method_not_allowed: {
    http: 405, type: 'invalid_request_error', grpc: GrpcStatus.UNIMPLEMENTED,
    message: 'This method is not allowed on this path. See the `Allow` header.',
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
  rate_limit_exceeded: {
    http: 429, type: 'rate_limit_error', grpc: GrpcStatus.RESOURCE_EXHAUSTED,
    message: 'Too many AI requests. Wait for the number of seconds in `Retry-After` and try again.',
  },
  idempotency_conflict: {
    http: 409, type: 'idempotency_error', grpc: GrpcStatus.ABORTED,
    message: 'This Idempotency-Key was used with other parameters, or its first request is still running. Use a new key, or retry later.',
  },
  conversion_failed: {
    http: 502, type: 'api_error', grpc: GrpcStatus.INTERNAL,
    message: 'The conversion could not be completed; your credits were returned. Try again.',
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

/**
 * Turns whatever a gRPC call failed with into a MurmurError: the ErrorInfo reason when the
 * peer sent one, otherwise service_unavailable for transport failures and internal_error.
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
  return new MurmurError('internal_error');
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
