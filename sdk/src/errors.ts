/**
 * Every failure the SDK reports: the API's own error body (`{error: {type, code, message, param,
 * request_id}}`) as a typed error per case, and the failures that never reached the API.
 * Branch on `instanceof` (or `code`); every API error carries the `requestId` support asks for.
 */

/** The API's error body. */
export interface ApiErrorBody {
  type: string;
  code: string;
  message: string;
  param: string | null;
  request_id: string;
}

/** The base of every error this SDK throws. */
export class MurmurError extends Error {
  override readonly name: string = 'MurmurError';
}

/** An answer of the API that is an error: its status, code, message and request id. */
export class ApiError extends MurmurError {
  override readonly name: string = 'ApiError';
  readonly status: number;
  /** The contract's code (`insufficient_tokens`, `rate_limit_exceeded`, …); branch on this or on the class. */
  readonly code: string;
  /** The family: `authentication_error`, `invalid_request_error`, `billing_error`, `rate_limit_error`, `idempotency_error`, `api_error`. */
  readonly type: string;
  /** The offending parameter, or null. */
  readonly param: string | null;
  /** The request's id (`req_…`): quote it to support. */
  readonly requestId: string;
  readonly headers: Headers;

  constructor(status: number, body: ApiErrorBody, headers: Headers) {
    super(body.message);
    this.status = status;
    this.code = body.code;
    this.type = body.type;
    this.param = body.param;
    this.requestId = body.request_id || headers.get('x-request-id') || '';
    this.headers = headers;
  }
}

/** 400: a parameter is wrong (see `param`). */
export class InvalidRequestError extends ApiError {
  override readonly name = 'InvalidRequestError';
}
/** 401: the key is missing, malformed, unknown, revoked or expired. */
export class AuthenticationError extends ApiError {
  override readonly name = 'AuthenticationError';
}
/** 403: the key may not do this (a read-only key on an AI call). */
export class PermissionDeniedError extends ApiError {
  override readonly name = 'PermissionDeniedError';
}
/** 404: no such id — or it is someone else's (the same answer). */
export class NotFoundError extends ApiError {
  override readonly name = 'NotFoundError';
}
/** 409: an Idempotency-Key reused with other parameters, or while its first request still runs; or a state conflict. */
export class ConflictError extends ApiError {
  override readonly name = 'ConflictError';
}
/** 402 `insufficient_tokens`: no AI Credits left; nothing was charged. */
export class InsufficientCreditsError extends ApiError {
  override readonly name = 'InsufficientCreditsError';
}
/** 402 `spending_cap_reached`: the month's spending cap is reached. */
export class SpendingCapError extends ApiError {
  override readonly name = 'SpendingCapError';
}
/** 413: the audio is over the size limit. */
export class AudioTooLargeError extends ApiError {
  override readonly name = 'AudioTooLargeError';
}
/** 415: the audio cannot be decoded. */
export class UnsupportedAudioError extends ApiError {
  override readonly name = 'UnsupportedAudioError';
}
/** 429: over 10 AI calls a minute (the SDK has retried already, honouring Retry-After). */
export class RateLimitError extends ApiError {
  override readonly name = 'RateLimitError';
  /** Seconds to wait before the next try, from `Retry-After`; null when not given. */
  get retryAfterSeconds(): number | null {
    return retryAfterSeconds(this.headers);
  }
}
/** 502: the engine failed (`transcription_failed`, `conversion_failed`); credits were returned. */
export class EngineFailedError extends ApiError {
  override readonly name = 'EngineFailedError';
}
/** 503: a dependency is down; nothing was charged (the SDK has retried already). */
export class ServiceUnavailableError extends ApiError {
  override readonly name = 'ServiceUnavailableError';
}
/** Any other 5xx. */
export class InternalServerError extends ApiError {
  override readonly name = 'InternalServerError';
}

/** The request never got an answer: refused connection, reset, DNS. */
export class ConnectionError extends MurmurError {
  override readonly name: string = 'ConnectionError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}
/** No answer within the client's timeout. */
export class TimeoutError extends MurmurError {
  override readonly name = 'TimeoutError';
}

/** The typed error of an API answer. */
export function apiError(status: number, body: ApiErrorBody, headers: Headers): ApiError {
  switch (body.code) {
    case 'insufficient_tokens':
      return new InsufficientCreditsError(status, body, headers);
    case 'spending_cap_reached':
      return new SpendingCapError(status, body, headers);
  }
  switch (status) {
    case 400:
      return new InvalidRequestError(status, body, headers);
    case 401:
      return new AuthenticationError(status, body, headers);
    case 403:
      return new PermissionDeniedError(status, body, headers);
    case 404:
      return new NotFoundError(status, body, headers);
    case 409:
      return new ConflictError(status, body, headers);
    case 413:
      return new AudioTooLargeError(status, body, headers);
    case 415:
      return new UnsupportedAudioError(status, body, headers);
    case 429:
      return new RateLimitError(status, body, headers);
    case 502:
      return new EngineFailedError(status, body, headers);
    case 503:
      return new ServiceUnavailableError(status, body, headers);
  }
  return status >= 500 ? new InternalServerError(status, body, headers) : new ApiError(status, body, headers);
}

/** `Retry-After` in seconds (a number or an HTTP date), or null. */
export function retryAfterSeconds(headers: Headers): number | null {
  const value = headers.get('retry-after');
  if (value === null) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, (date - Date.now()) / 1000);
}
