/**
 * The runtime half of the one error model (the table and MurmurError are the contract's,
 * services/contract/src/errors.ts): a MurmurError ↔ gRPC status + google.rpc.ErrorInfo reason,
 * and what an unreachable dependency becomes. Services throw MurmurError; the gRPC server
 * factory turns it into a status, the gRPC client turns the status back into a MurmurError, and
 * the gateway renders it. Nothing else maps errors.
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
import { ERROR_CODES, isErrorCode, MurmurError } from '@murmur/contract';
import type { Logger } from './log';

const ERROR_DOMAIN = 'murmur.dev';
const ERROR_INFO_TYPE_URL = 'type.googleapis.com/google.rpc.ErrorInfo';
const STATUS_DETAILS_KEY = 'grpc-status-details-bin';

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

