/**
 * The request log's rules (GET /api/v1/requests, docs/request-log.md): how long entries are
 * kept, how the gateway queues them off the hot path, and the status filter's forms. The auth
 * service (which stores the log), the gateway (which writes and reads it) and the app's Logs page
 * all take their numbers from here.
 */
import { invalidParam } from './errors';

/** Days an entry is kept: the log is partitioned by day (UTC) and older days are dropped. */
export const REQUEST_LOG_RETENTION_DAYS = 30;
/** Days of partitions made ahead of today, so a write at midnight never finds none. */
export const REQUEST_LOG_DAYS_AHEAD = 2;
/** Entries the gateway holds for writing; one more is dropped (and counted), never waited for. */
export const REQUEST_LOG_QUEUE_CAPACITY = 10_000;
/** Entries sent to auth in one RecordRequests call. */
export const REQUEST_LOG_BATCH_SIZE = 500;
/** How often the gateway sends what it holds. */
export const REQUEST_LOG_FLUSH_MS = 500;
/** Longest route template, MCP tool or JSON-RPC method stored; a longer one is cut. */
export const REQUEST_LOG_NAME_MAX_CHARS = 200;

/**
 * The `status_code` filter: an exact status (`404`) or a class (`4xx`). Answers the RPC's form: the
 * status itself, or the class's first digit (2–5). Anything else is a 400 naming `status`.
 */
export function statusFilterOf(value: string | undefined): number {
  if (value === undefined || value === '') return 0;
  const cls = /^([1-5])xx$/.exec(value);
  if (cls) return Number(cls[1]);
  if (/^[1-5][0-9]{2}$/.test(value)) return Number(value);
  throw invalidParam('status_code', '`status_code` must be a status class (`2xx`, `3xx`, `4xx`, `5xx`) or an exact status such as `404`.');
}

/** The status filter's SQL bounds: [low, high) of an exact status or of a class. */
export function statusBounds(filter: number): [number, number] | null {
  if (filter === 0) return null;
  if (filter < 10) return [filter * 100, filter * 100 + 100];
  return [filter, filter + 1];
}
