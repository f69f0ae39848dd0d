/**
 * The durable queue of transcription jobs: pg-boss over the transcription service's own
 * Postgres (its tables in schema `transcription_queue`, {@link queueSchemaOf}), through the service's pool, so it
 * runs on the embedded PGlite of `npm start` exactly as on a real server. A job row
 * (job-store.ts) and its queue entry are written in one transaction.
 *
 * Every replica is a worker with bounded concurrency. A worker heartbeats each job it holds;
 * one that stops (kill -9, a lost machine) has its jobs failed by the supervisor of any live
 * replica after `heartbeatSeconds` and retried elsewhere, up to `retryLimit` times; after that
 * the job goes to the dead-letter queue, whose handler ends it as failed (credits released).
 *
 * pg-boss is an ES module: it is loaded here, once, with a real dynamic import.
 */
import { randomUUID } from 'node:crypto';
import type { PoolClient } from 'pg';
import { untracedUnlessInCall, type Database, type Logger } from '@murmur/kit';
import type { Db as IDatabase, JobWithMetadata, PgBoss } from 'pg-boss' with { 'resolution-mode': 'import' };

export const JOB_QUEUE = 'transcription-jobs';
export const DEAD_LETTER_QUEUE = 'transcription-jobs-dead';
/** Webhook delivery attempts (webhooks/webhooks.ts): each a queue entry, due when it should run. */
export const WEBHOOK_QUEUE = 'transcription-webhooks';
/** pg-boss's schema beside the service's own: `transcription_queue` (a test schema gets its own). */
export function queueSchemaOf(serviceSchema: string): string {
  return `${serviceSchema}_queue`;
}

export interface QueueSettings {
  /** Jobs this replica runs at once. */
  concurrency: number;
  /** A held job not heard of for this long is taken back (≥ 10). */
  heartbeatSeconds: number;
  /** How often a replica's supervisor looks for such jobs. */
  superviseSeconds: number;
  /** How often an idle worker looks for work. */
  pollingSeconds: number;
  /** Attempts after the first (a dead worker or a failed engine each use one). */
  retryLimit: number;
  retryDelaySeconds: number;
  /** Longest a single attempt may run. */
  expireSeconds: number;
}

export const DEFAULT_QUEUE_SETTINGS: QueueSettings = {
  concurrency: 2,
  heartbeatSeconds: 30,
  superviseSeconds: 15,
  pollingSeconds: 0.5,
  retryLimit: 3,
  retryDelaySeconds: 2,
  expireSeconds: 8 * 60 * 60,
};

export interface JobMessage {
  jobId: string;
}

export interface WebhookMessage {
  deliveryId: string;
}

export interface Attempt {
  /** Aborted when the queue took the job away (canceled, or a lapsed heartbeat). */
  signal: AbortSignal;
  /** 0 for the first attempt. */
  retryCount: number;
  /** Whether a failure now ends the job (no attempt follows). */
  last: boolean;
}

type PgBossModule = typeof import('pg-boss', { with: { 'resolution-mode': 'import' } });

/** A real dynamic import in this CommonJS package (see conversion's esm.ts for why not `new Function`). */
function loadPgBoss(): Promise<PgBossModule> {
  return import('pg-boss') as Promise<PgBossModule>;
}

/**
 * pg-boss statements on a connection of ours: the pool, or one transaction's client. The result
 * goes back as `pg` gives it — for a multi-statement text (the supervisor's locked sweeps) that is
 * one result per statement, which pg-boss reads as such, as from its own pool.
 */
function adapter(target: Pick<PoolClient, 'query'>): IDatabase {
  return {
    executeSql: (text, values) => untracedUnlessInCall(() => target.query(text, values as unknown[])) as unknown as ReturnType<IDatabase['executeSql']>,
  };
}

export class JobQueue {
  /** The first of this replica's job workers, once it works (woken when this replica queues a job). */
  private workerId: string | undefined;
  private webhookWorkerId: string | undefined;

  private constructor(
    private readonly boss: PgBoss,
    private readonly settings: QueueSettings,
    private readonly log: Logger,
  ) {}

  static async open(db: Database, settings: QueueSettings, log: Logger): Promise<JobQueue> {
    const { PgBoss } = await loadPgBoss();
    const boss = new PgBoss({
      db: adapter(db.pool),
      schema: queueSchemaOf(db.schema),
      supervise: true,
      superviseIntervalSeconds: settings.superviseSeconds,
      monitorIntervalSeconds: settings.superviseSeconds,
      schedule: false,
    });
    boss.on('error', (err: Error) => log.warn({ err: err.message }, 'job queue error'));
    // Its install, timers and polling are background work: untraced (kit background-work.ts).
    await untracedUnlessInCall(async () => {
      await boss.start();
      await ensureQueue(boss, DEAD_LETTER_QUEUE, { retryLimit: 5, retryDelay: 5, retryBackoff: true });
      await ensureQueue(boss, JOB_QUEUE, {
        deadLetter: DEAD_LETTER_QUEUE,
        retryLimit: settings.retryLimit,
        retryDelay: settings.retryDelaySeconds,
        retryBackoff: true,
        heartbeatSeconds: settings.heartbeatSeconds,
        expireInSeconds: settings.expireSeconds,
      });
      // An attempt's handler records its outcome and queues the next itself; the queue's own
      // retries only cover a worker that died mid-attempt (an attempt is at most 10 s).
      await ensureQueue(boss, WEBHOOK_QUEUE, { retryLimit: 5, retryDelay: 30, retryBackoff: true, heartbeatSeconds: settings.heartbeatSeconds, expireInSeconds: 120 });
    });
    return new JobQueue(boss, settings, log);
  }

  /** Queues `jobId` inside the transaction of `tx`; returns the queue entry's id (kept on the job for cancel). */
  async send(tx: Pick<PoolClient, 'query'>, jobId: string): Promise<string> {
    const id = randomUUID();
    await this.boss.send(JOB_QUEUE, { jobId } satisfies JobMessage, { id, db: adapter(tx) } as Parameters<PgBoss['send']>[2]);
    return id;
  }

  /** Runs `handle` for every job, `concurrency` at a time; a throw fails the attempt (retried, then dead-lettered). */
  async work(handle: (message: JobMessage, attempt: Attempt) => Promise<void>, onDead: (message: JobMessage) => Promise<void>): Promise<void> {
    const run = async (jobs: JobWithMetadata<JobMessage>[]) => {
      for (const job of jobs) {
        await handle(job.data, { signal: job.signal, retryCount: job.retryCount, last: job.retryCount >= job.retryLimit });
      }
    };
    this.workerId = await this.boss.work<JobMessage>(
      JOB_QUEUE,
      { localConcurrency: this.settings.concurrency, pollingIntervalSeconds: this.settings.pollingSeconds, includeMetadata: true, batchSize: 1 },
      run as never,
    );
    await this.boss.work<JobMessage>(DEAD_LETTER_QUEUE, { pollingIntervalSeconds: Math.max(1, this.settings.pollingSeconds) }, async (jobs) => {
      for (const job of jobs) await onDead(job.data);
    });
  }

  /** Queues attempt of delivery `deliveryId` inside `tx`, due in `afterSeconds`. */
  async sendWebhook(tx: Pick<PoolClient, 'query'>, deliveryId: string, afterSeconds: number): Promise<void> {
    await this.boss.send(WEBHOOK_QUEUE, { deliveryId } satisfies WebhookMessage, { db: adapter(tx), startAfter: new Date(Date.now() + Math.max(0, afterSeconds) * 1000) } as Parameters<PgBoss['send']>[2]);
    if (afterSeconds <= 0 && this.webhookWorkerId) this.boss.notifyWorker(this.webhookWorkerId);
  }

  /** Runs `deliver` for every due attempt. */
  async workWebhooks(deliver: (deliveryId: string) => Promise<void>): Promise<void> {
    this.webhookWorkerId = await this.boss.work<WebhookMessage>(
      WEBHOOK_QUEUE,
      { localConcurrency: 4, pollingIntervalSeconds: Math.max(0.5, this.settings.pollingSeconds), batchSize: 1 },
      async (jobs) => {
        for (const job of jobs) await deliver(job.data.deliveryId);
      },
    );
  }

  /**
   * A job was just queued here: this replica's first worker looks now instead of at its next poll
   * (a busy one, or another replica, still finds it within the polling interval).
   */
  wake(): void {
    if (this.workerId) this.boss.notifyWorker(this.workerId);
  }

  /** Takes a job out of the queue (a canceled job); a running attempt's signal aborts at its next heartbeat. */
  async cancel(queueJobId: string): Promise<void> {
    await this.boss.cancel(JOB_QUEUE, queueJobId).catch((err: unknown) => this.log.warn({ err: (err as Error).message }, 'queue cancel failed'));
  }

  /** Stops taking work and waits for running handlers up to `graceMs` (their jobs are retried elsewhere otherwise). */
  async stop(graceMs = 10_000): Promise<void> {
    await this.boss.stop({ graceful: true, timeout: graceMs, close: false } as Parameters<PgBoss['stop']>[0]);
  }
}

async function ensureQueue(boss: PgBoss, name: string, options: Parameters<PgBoss['createQueue']>[1]): Promise<void> {
  if (await boss.getQueue(name)) await boss.updateQueue(name, options as Parameters<PgBoss['updateQueue']>[1]);
  else await boss.createQueue(name, options);
}
