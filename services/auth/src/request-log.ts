/**
 * The request log (docs/request-log.md): the gateway's batches stored (each entry checked, a bad
 * one skipped and counted, never failing the batch), one owner's entries read with filters and
 * cursor paging, and the partitions kept: each UTC day's made ahead, days past
 * REQUEST_LOG_RETENTION_DAYS dropped whole — at start and hourly on every replica (each step is
 * idempotent, so replicas doing it together do not clash).
 */
import {
  isId,
  pageSizeOf,
  REQUEST_ID_PATTERN,
  REQUEST_LOG_DAYS_AHEAD,
  REQUEST_LOG_NAME_MAX_CHARS,
  REQUEST_LOG_RETENTION_DAYS,
  statusBounds,
} from '@murmur/contract';
import { filterDigest, PageCursors, untracedUnlessInCall, type Clock, type Database, type Logger, type Page } from '@murmur/kit';
import { dayOf, RequestLogStore, type RequestLogReadRow, type RequestLogRow } from './request-log-store';

const DAY_MS = 86_400_000;
/** How often each replica makes the coming days' partitions and drops the expired ones. */
export const REQUEST_LOG_MAINTENANCE_MS = 3_600_000;

export interface RequestLogFilters {
  ownerId: string;
  limit: number;
  cursor: string;
  /** An exact status or a class digit (contract statusFilterOf); 0 → any. */
  status: number;
  route: string;
  tool: string;
  keyId: string;
  /** One call by its request id; '' → all. */
  requestId: string;
  createdAfter?: Date;
  createdBefore?: Date;
}

const TRACE_ID = /^[0-9a-f]{32}$/;
const METHOD = /^[A-Z]{3,7}$/;
const SHORT = 64;
const MAX_INT32 = 2 ** 31 - 1;

export class RequestLog {
  private readonly store: RequestLogStore;
  private readonly cursors: PageCursors;
  private timer: NodeJS.Timeout | undefined;
  private maintaining: Promise<void> = Promise.resolve();

  constructor(
    db: Database,
    private readonly log: Logger,
    private readonly clock: Clock,
    cursorSecret: string,
  ) {
    this.store = new RequestLogStore(db);
    this.cursors = new PageCursors(cursorSecret);
  }

  /** Why an entry cannot be stored, or null. Entries come from our gateway; this guards the table, not a user. */
  private problem(e: RequestLogRow, now: number): string | null {
    if (!isId('usr', e.owner_id)) return 'owner_id';
    if (!REQUEST_ID_PATTERN.test(e.request_id)) return 'request_id';
    if (!METHOD.test(e.method)) return 'method';
    if (!e.route.startsWith('/') || e.route.length > REQUEST_LOG_NAME_MAX_CHARS || e.tool.length > REQUEST_LOG_NAME_MAX_CHARS) return 'route';
    if (!Number.isInteger(e.status) || e.status < 100 || e.status > 599) return 'status';
    if (!Number.isInteger(e.latency_us) || e.latency_us < 0) return 'latency';
    if (e.error_code.length > SHORT || e.key_id.length > SHORT || e.client_id.length > 255) return 'names';
    if (e.trace_id !== '' && !TRACE_ID.test(e.trace_id)) return 'trace_id';
    if ([e.bytes_in, e.bytes_out, e.credits_charged].some((n) => Number(n) < 0)) return 'counts';
    const at = e.created_at.getTime();
    if (!Number.isFinite(at) || at < now - REQUEST_LOG_RETENTION_DAYS * DAY_MS || at >= dayOf(new Date(now)).getTime() + (REQUEST_LOG_DAYS_AHEAD + 1) * DAY_MS) return 'created_at';
    return null;
  }

  /** Stores a batch: valid entries in one statement (their days' partitions made first), the rest skipped. */
  async record(entries: readonly RequestLogRow[]): Promise<{ stored: number; skipped: number }> {
    const now = this.clock.now().getTime();
    const valid: RequestLogRow[] = [];
    const skipped: Record<string, number> = {};
    for (const e of entries) {
      const problem = this.problem(e, now);
      if (problem) {
        skipped[problem] = (skipped[problem] ?? 0) + 1;
        continue;
      }
      // Millisecond precision: the keyset cursor carries epoch milliseconds.
      valid.push({ ...e, created_at: new Date(e.created_at.getTime()), latency_us: Math.min(e.latency_us, MAX_INT32) });
    }
    // One line a batch, by field: never the entries themselves.
    if (valid.length < entries.length) this.log.warn({ skipped_by_field: skipped }, 'request log entries skipped');
    const days = new Set(valid.map((e) => dayOf(e.created_at).getTime()));
    for (const day of days) await this.store.ensurePartition(new Date(day));
    const stored = await this.store.insert(valid);
    return { stored, skipped: entries.length - valid.length };
  }

  /** One owner's entries, newest first, within the days kept. */
  async list(f: RequestLogFilters): Promise<Page<RequestLogReadRow>> {
    const limit = pageSizeOf(f.limit, 'limit', { zeroMeansDefault: true });
    const now = this.clock.now().getTime();
    const oldest = new Date(now - REQUEST_LOG_RETENTION_DAYS * DAY_MS);
    // Strictly after `created_after` (times are kept to the millisecond).
    const afterBound = f.createdAfter ? new Date(f.createdAfter.getTime() + 1) : undefined;
    const since = afterBound && afterBound > oldest ? afterBound : oldest;
    const until = f.createdBefore ?? new Date(now + (REQUEST_LOG_DAYS_AHEAD + 1) * DAY_MS);
    const filters = filterDigest([f.status, f.route, f.tool, f.keyId, f.requestId, f.createdAfter?.getTime(), f.createdBefore?.getTime()]);
    const after = this.cursors.positionOf(f.ownerId, 'requests', f.cursor || undefined, filters);
    const rows = await this.store.list({
      ownerId: f.ownerId,
      since,
      until,
      status: statusBounds(f.status),
      route: f.route,
      tool: f.tool,
      keyId: f.keyId,
      requestId: f.requestId,
      ...(after ? { after } : {}),
      limit: limit + 1,
    });
    const page = this.cursors.page(
      f.ownerId,
      'requests',
      rows.map((r) => Object.assign(r, { createdAt: r.created_at, id: r.request_id })),
      limit,
      filters,
    );
    return page;
  }

  /** Makes today's partition and the next days', and drops every day wholly past the days kept. */
  async maintain(): Promise<{ dropped: number }> {
    const now = this.clock.now();
    const today = dayOf(now).getTime();
    for (let d = 0; d <= REQUEST_LOG_DAYS_AHEAD; d++) await this.store.ensurePartition(new Date(today + d * DAY_MS));
    const oldest = now.getTime() - REQUEST_LOG_RETENTION_DAYS * DAY_MS;
    let dropped = 0;
    for (const day of await this.store.partitionDays()) {
      if (day.getTime() + DAY_MS <= oldest) {
        await this.store.dropPartition(day);
        dropped++;
      }
    }
    if (dropped > 0) this.log.info({ partitions: dropped }, 'request log: expired days dropped');
    return { dropped };
  }

  /** Maintains now and then hourly; a failure is logged and tried again at the next hour. */
  start(): Promise<void> {
    const run = () => {
      this.maintaining = untracedUnlessInCall(() => this.maintain())
        .then(() => undefined)
        .catch((err: unknown) => this.log.warn({ err: (err as Error).message }, 'request log maintenance failed; tried again within the hour'));
      return this.maintaining;
    };
    this.timer = setInterval(run, REQUEST_LOG_MAINTENANCE_MS);
    this.timer.unref();
    return run();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.maintaining;
  }
}
