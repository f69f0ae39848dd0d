/**
 * The request log's way off the hot path: a bounded in-memory queue that the gateway's calls
 * append to and a timer drains, in batches, to auth's RecordRequests. A full queue drops the
 * entry and counts it — a call is never slowed or failed by its log. A batch auth cannot take
 * (auth restarting) is tried again on later ticks for up to {@link RETRY_WINDOW_MS}, then dropped
 * and counted; a batch is one statement that keeps a repeat once, so a retry never doubles it.
 * The timer is made at start, outside every request, so flushes carry no caller's identity or
 * trace (they run untraced).
 */
import type { auth } from '@murmur/proto';
import { REQUEST_LOG_BATCH_SIZE, REQUEST_LOG_FLUSH_MS, REQUEST_LOG_QUEUE_CAPACITY } from '@murmur/contract';
import { defineCounter, untracedUnlessInCall, type Logger } from '@murmur/kit';

/** How long a batch auth refuses is kept for another try. */
export const RETRY_WINDOW_MS = 60_000;
/** At most one warning about lost entries this often. */
const WARN_EVERY_MS = 60_000;

/** The operators' view of the log's health (decision 0041): entries sent, and dropped by why. */
const entries = defineCounter('murmur_request_log_entries_total', 'Request-log entries the gateway sent to auth, or dropped (queue full, or auth refused them for a minute).', ['outcome']);
const sentEntries = entries.labels('sent');
const droppedFullEntries = entries.labels('dropped_full');
const droppedFailedEntries = entries.labels('dropped_failed');

export type RequestLogSink = (entries: auth.RequestLogEntry[]) => Promise<unknown>;

export interface RequestLogQueueOptions {
  capacity?: number;
  batchSize?: number;
  flushMs?: number;
}

/** What the queue did since it started (read by tests and the operators' metrics). */
export interface RequestLogCounts {
  /** Entries auth stored. */
  sent: number;
  /** Entries dropped because the queue was full. */
  droppedFull: number;
  /** Entries dropped after auth refused their batch for {@link RETRY_WINDOW_MS}. */
  droppedFailed: number;
}

export class RequestLogQueue {
  readonly counts: RequestLogCounts = { sent: 0, droppedFull: 0, droppedFailed: 0 };
  private entries: auth.RequestLogEntry[] = [];
  /** A batch auth refused, with when it first failed. */
  private retry: { batch: auth.RequestLogEntry[]; since: number } | undefined;
  private flushing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastWarning = 0;
  private readonly capacity: number;
  private readonly batchSize: number;
  private readonly flushMs: number;

  constructor(
    private readonly sink: RequestLogSink,
    private readonly log: Logger,
    options: RequestLogQueueOptions = {},
  ) {
    this.capacity = options.capacity ?? REQUEST_LOG_QUEUE_CAPACITY;
    this.batchSize = options.batchSize ?? REQUEST_LOG_BATCH_SIZE;
    this.flushMs = options.flushMs ?? REQUEST_LOG_FLUSH_MS;
  }

  /** Entries waiting (a batch waiting for another try included). */
  get pending(): number {
    return this.entries.length + (this.retry?.batch.length ?? 0);
  }

  /** Appends an entry, or drops and counts it when the queue is full. Never waits, never throws. */
  push(entry: auth.RequestLogEntry): void {
    if (this.pending >= this.capacity) {
      this.counts.droppedFull++;
      droppedFullEntries.inc();
      this.warn(1, 'the queue is full');
      return;
    }
    this.entries.push(entry);
  }

  /** Starts the timer that drains the queue (call once, at start, outside any request). */
  start(): this {
    this.timer ??= setInterval(() => void this.flush(), this.flushMs);
    this.timer.unref();
    return this;
  }

  /** Sends what is queued now, in batches; resolves when done (a flush already running is joined). */
  flush(): Promise<void> {
    this.flushing ??= untracedUnlessInCall(() => this.drain()).finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  /** Stops the timer and sends what is left (one try). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
    if (this.retry) this.drop(this.retry.batch.length, 'the gateway stopped');
  }

  private async drain(): Promise<void> {
    for (;;) {
      const batch = this.retry?.batch ?? this.entries.splice(0, this.batchSize);
      if (batch.length === 0) return;
      try {
        await this.sink(batch);
        this.counts.sent += batch.length;
        sentEntries.inc(batch.length);
        this.retry = undefined;
      } catch (err) {
        const since = this.retry?.since ?? Date.now();
        if (Date.now() - since >= RETRY_WINDOW_MS) {
          this.retry = undefined;
          this.drop(batch.length, (err as Error).message);
        } else {
          this.retry = { batch, since };
        }
        return;
      }
    }
  }

  private drop(count: number, why: string): void {
    this.counts.droppedFailed += count;
    droppedFailedEntries.inc(count);
    this.warn(count, why);
  }

  private warn(count: number, why: string): void {
    const now = Date.now();
    if (now - this.lastWarning < WARN_EVERY_MS) return;
    this.lastWarning = now;
    this.log.warn({ entries: count, dropped_full: this.counts.droppedFull, dropped_failed: this.counts.droppedFailed, err: why }, 'request log entries lost');
  }
}
