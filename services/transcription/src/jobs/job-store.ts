/**
 * The jobs table and each job's chunk results (migrations/001_jobs.sql), in SQL. Status moves
 * only forward (queued → processing → completed | failed | canceled, with processing →
 * queued never needed: a retried job stays processing); every terminal move is one guarded
 * UPDATE, so a cancel and a completion racing each other cannot both win.
 */
import type { ChunkWordTuple } from './job-words';
import type { RedactionOptions } from '@murmur/contract';
import type { PoolClient } from 'pg';
import type { JobStatusName } from '@murmur/contract';
import type { Database, PagePosition } from '@murmur/kit';

export const LIVE_STATUSES: readonly JobStatusName[] = ['queued', 'processing'];

export interface JobSegment {
  start: number;
  end: number;
  text: string;
  /** A speaker id (diarization); absent otherwise. */
  speaker?: string;
}

/** A completed job's result: what Transcribe answers. */
export interface JobResult {
  id: string;
  text: string;
  language: string;
  duration_seconds: number;
  segments: JobSegment[];
  model: string;
  credits_charged: number;
  /** base64 of murmur.timeline.v1.Words (absent in results stored before issue 32). */
  words?: string;
  speakers?: Array<{ id: string; name: string }>;
}

/** What a job was asked for beyond its text (TimelineOptions as the worker needs them). */
export interface JobTimelineOptions {
  words?: boolean;
  diarize?: boolean;
  speakers_expected?: number;
  keyterms?: string[];
  /** What to redact and how (absent: nothing). Such a job keeps no chunk's transcript (see worker.ts). */
  redaction?: RedactionOptions;
}

export interface JobErrorBody {
  code: string;
  message: string;
  param: string | null;
}

export interface JobRow {
  id: string;
  owner_id: string;
  idempotency_key: string;
  status: JobStatusName;
  language: string;
  filename: string;
  content_type: string;
  save: boolean;
  title: string;
  folder_id: string;
  audio_key: string | null;
  upload_bytes: number;
  duration_seconds: number;
  processed_seconds: number;
  reservation_id: string;
  queue_job_id: string | null;
  credits_reserved: number;
  hold_open: boolean;
  attempts: number;
  result: JobResult | null;
  recording_id: string;
  error: JobErrorBody | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  updated_at: Date;
  /** Where the job's end is delivered ('' = nowhere). */
  webhook_url: string;
  /** What its submission looked like (jobFingerprint); null for jobs older than fingerprints. */
  request_fingerprint: string | null;
  timeline_options: JobTimelineOptions;
  /** The delivery of its end, once it ended with an endpoint (webhooks/delivery-store.ts). */
  webhook: DeliveryRow | null;
}

/** One job's webhook delivery (migrations/002_webhooks.sql), as read with its job. */
export interface DeliveryRow {
  id: string;
  event: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  last_status_code: number;
  last_error: string;
  next_attempt_at: string | null;
  delivered_at: string | null;
}

export type NewJob = Pick<
  JobRow,
  | 'id'
  | 'owner_id'
  | 'idempotency_key'
  | 'language'
  | 'filename'
  | 'content_type'
  | 'save'
  | 'title'
  | 'folder_id'
  | 'audio_key'
  | 'upload_bytes'
  | 'duration_seconds'
  | 'reservation_id'
  | 'credits_reserved'
  | 'webhook_url'
  | 'request_fingerprint'
  | 'timeline_options'
>;

/** One chunk of a job's recognition plan, with its transcript once recognised. */
export interface ChunkRow {
  index: number;
  start_byte: number;
  end_byte: number;
  result: { text: string; segments: JobSegment[]; language: string; words?: ChunkWordTuple[] } | null;
}

const COLUMNS = `id, owner_id, idempotency_key, status, language, filename, content_type, save, title, folder_id, audio_key,
  upload_bytes::float8 AS upload_bytes, duration_seconds, processed_seconds, reservation_id, queue_job_id, credits_reserved::float8 AS credits_reserved,
  hold_open, attempts, result, recording_id, error, created_at, started_at, finished_at, updated_at, webhook_url, request_fingerprint, timeline_options,
  (SELECT jsonb_build_object('id', d.id, 'event', d.event, 'state', d.state, 'attempts', d.attempts, 'last_status_code', d.last_status_code,
     'last_error', d.last_error, 'next_attempt_at', d.next_attempt_at, 'delivered_at', d.delivered_at)
   FROM webhook_deliveries d WHERE d.job_id = jobs.id) AS webhook`;

export type Queryable = Pick<PoolClient, 'query'>;

export class JobStore {
  /**
   * `onEnded` runs inside the transaction that ends a job (completed, failed or canceled), after
   * its row changed: what must happen exactly when a job ends (its webhook delivery) commits
   * with the end or not at all.
   */
  constructor(
    private readonly db: Database,
    private readonly onEnded: (tx: Queryable, row: JobRow) => Promise<void> = async () => {},
  ) {}

  /** Runs `fn` in one transaction (the job row and its queue entry commit together). */
  transactionalInsert<T>(fn: (tx: PoolClient) => Promise<T>): Promise<T> {
    return this.db.transaction(fn);
  }

  /** Inserts a queued job inside `tx`; on an existing (owner, idempotency key) returns that job instead. */
  async insert(tx: Queryable, job: NewJob): Promise<{ row: JobRow; created: boolean }> {
    const inserted = await tx.query<JobRow>(
      `INSERT INTO jobs (id, owner_id, idempotency_key, status, language, filename, content_type, save, title, folder_id, audio_key,
         upload_bytes, duration_seconds, reservation_id, credits_reserved, webhook_url, request_fingerprint, timeline_options)
       VALUES ($1, $2, $3, 'queued', $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
       ON CONFLICT (owner_id, idempotency_key) DO NOTHING
       RETURNING ${COLUMNS}`,
      [job.id, job.owner_id, job.idempotency_key, job.language, job.filename, job.content_type, job.save, job.title, job.folder_id, job.audio_key,
        job.upload_bytes, job.duration_seconds, job.reservation_id, job.credits_reserved, job.webhook_url, job.request_fingerprint, JSON.stringify(job.timeline_options)],
    );
    if (inserted.rows[0]) return { row: inserted.rows[0], created: true };
    const existing = await tx.query<JobRow>(`SELECT ${COLUMNS} FROM jobs WHERE owner_id = $1 AND idempotency_key = $2`, [job.owner_id, job.idempotency_key]);
    return { row: existing.rows[0]!, created: false };
  }

  async byIdempotencyKey(ownerId: string, key: string): Promise<JobRow | undefined> {
    return (await this.db.query<JobRow>(`SELECT ${COLUMNS} FROM jobs WHERE owner_id = $1 AND idempotency_key = $2`, [ownerId, key]))[0];
  }

  /** The job, whoever owns it (workers); undefined when there is none. */
  async get(id: string): Promise<JobRow | undefined> {
    return (await this.db.query<JobRow>(`SELECT ${COLUMNS} FROM jobs WHERE id = $1`, [id]))[0];
  }

  /** The job when `ownerId` owns it. */
  async getOwned(ownerId: string, id: string): Promise<JobRow | undefined> {
    return (await this.db.query<JobRow>(`SELECT ${COLUMNS} FROM jobs WHERE id = $1 AND owner_id = $2`, [id, ownerId]))[0];
  }

  /** The owner's jobs newest first, after `after`, `limit + 1` of them (the caller cuts the page). */
  async list(ownerId: string, opts: { after?: PagePosition; limit: number; status?: JobStatusName }): Promise<JobRow[]> {
    const params: unknown[] = [ownerId];
    let where = 'owner_id = $1';
    if (opts.status) {
      params.push(opts.status);
      where += ` AND status = $${params.length}`;
    }
    if (opts.after) {
      params.push(opts.after.createdAt, opts.after.id);
      where += ` AND (created_at, id) < ($${params.length - 1}, $${params.length})`;
    }
    params.push(opts.limit + 1);
    return this.db.query<JobRow>(`SELECT ${COLUMNS} FROM jobs WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT $${params.length}`, params);
  }

  /** A worker takes the job: processing, one more attempt. Undefined when it is no longer live. */
  async start(id: string): Promise<JobRow | undefined> {
    const rows = await this.db.query<JobRow>(
      `UPDATE jobs SET status = 'processing', attempts = attempts + 1, started_at = coalesce(started_at, now()), updated_at = now()
       WHERE id = $1 AND status IN ('queued', 'processing') RETURNING ${COLUMNS}`,
      [id],
    );
    return rows[0];
  }

  /** The recognition plan of a job: stored on its first attempt, read back on every later one. */
  async plan(id: string, chunks: ReadonlyArray<{ startByte: number; endByte: number }>): Promise<ChunkRow[]> {
    return this.db.transaction(async (tx) => {
      const existing = await tx.query<ChunkRow>(
        `SELECT index, start_byte::float8 AS start_byte, end_byte::float8 AS end_byte, result FROM job_chunks WHERE job_id = $1 ORDER BY index`,
        [id],
      );
      if (existing.rows.length > 0) return existing.rows;
      for (const [index, c] of chunks.entries()) {
        await tx.query(`INSERT INTO job_chunks (job_id, index, start_byte, end_byte) VALUES ($1, $2, $3, $4)`, [id, index, c.startByte, c.endByte]);
      }
      return chunks.map((c, index) => ({ index, start_byte: c.startByte, end_byte: c.endByte, result: null }));
    });
  }

  /** Records one recognised chunk and the job's progress; false when the job is no longer processing (canceled). */
  /**
   * Records a recognised chunk: the job's progress, and the chunk's transcript so a resumed
   * attempt skips it — `null` keeps no transcript (a job whose transcript is redacted stores no
   * original text, so it recognises all of it again after a crash).
   */
  async saveChunk(id: string, index: number, result: ChunkRow['result'], processedSeconds: number): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const job = await tx.query<{ status: string }>(`UPDATE jobs SET processed_seconds = greatest(processed_seconds, $2), updated_at = now() WHERE id = $1 AND status = 'processing' RETURNING status`, [
        id,
        processedSeconds,
      ]);
      if (!job.rows[0]) return false;
      if (result) await tx.query(`UPDATE job_chunks SET result = $3 WHERE job_id = $1 AND index = $2`, [id, index, JSON.stringify(result)]);
      return true;
    });
  }

  /**
   * Ends a live job in one guarded step: `settle` runs inside the transaction with the row
   * locked (the credit commit or release), and its outcome is written only if the job was
   * still live. Returns the ended row, or undefined when the job had already ended.
   */
  async finish(
    id: string,
    settle: (row: JobRow) => Promise<{ status: 'completed' | 'failed' | 'canceled'; result?: JobResult; recordingId?: string; error?: JobErrorBody; holdOpen: boolean }>,
  ): Promise<JobRow | undefined> {
    return this.db.transaction(async (tx) => {
      const locked = await tx.query<JobRow>(`SELECT ${COLUMNS} FROM jobs WHERE id = $1 FOR UPDATE`, [id]);
      const row = locked.rows[0];
      if (!row || !LIVE_STATUSES.includes(row.status)) return undefined;
      const out = await settle(row);
      const updated = await tx.query<JobRow>(
        `UPDATE jobs SET status = $2, result = $3, recording_id = coalesce($4, recording_id), error = $5, hold_open = $6,
           processed_seconds = CASE WHEN $2 = 'completed' THEN duration_seconds ELSE processed_seconds END,
           finished_at = now(), updated_at = now()
         WHERE id = $1 RETURNING ${COLUMNS}`,
        [id, out.status, out.result ? JSON.stringify(out.result) : null, out.recordingId ?? null, out.error ? JSON.stringify(out.error) : null, out.holdOpen],
      );
      await this.onEnded(tx, updated.rows[0]!);
      // Read again: the end's webhook delivery (if any) was just written.
      return (await tx.query<JobRow>(`SELECT ${COLUMNS} FROM jobs WHERE id = $1`, [id])).rows[0];
    });
  }

  async setQueueJob(tx: Queryable, id: string, queueJobId: string): Promise<void> {
    await tx.query(`UPDATE jobs SET queue_job_id = $2 WHERE id = $1`, [id, queueJobId]);
  }

  /** What decoding found: the audio's real length and the credits now held for it (the hold grows with decoded audio). */
  async setDecoded(id: string, durationSeconds: number, creditsReserved: number): Promise<void> {
    await this.db.query(`UPDATE jobs SET duration_seconds = $2, credits_reserved = $3, updated_at = now() WHERE id = $1`, [id, durationSeconds, creditsReserved]);
  }

  /** The job's audio is gone from the store. */
  async audioDeleted(id: string): Promise<void> {
    await this.db.query(`UPDATE jobs SET audio_key = NULL, updated_at = now() WHERE id = $1`, [id]);
  }

  /** A hold whose release failed at the job's end was released later (maintenance). */
  async holdClosed(id: string): Promise<void> {
    await this.db.query(`UPDATE jobs SET hold_open = false, updated_at = now() WHERE id = $1`, [id]);
  }

  /** Ended jobs whose credit hold or audio is still there: what maintenance finishes. */
  async unsettled(limit = 100): Promise<JobRow[]> {
    return this.db.query<JobRow>(
      `SELECT ${COLUMNS} FROM jobs WHERE status IN ('failed', 'canceled', 'completed') AND (hold_open OR audio_key IS NOT NULL) ORDER BY updated_at LIMIT $1`,
      [limit],
    );
  }

  /** Which of `ids` are jobs still live (their audio must stay). */
  async liveAmong(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.db.query<{ id: string }>(`SELECT id FROM jobs WHERE id = ANY($1) AND status IN ('queued', 'processing')`, [ids]);
    return new Set(rows.map((r) => r.id));
  }

  /** Queued jobs and the age of the oldest, for the depth gauge. */
  async depth(): Promise<{ queued: number; processing: number; oldestQueuedSeconds: number }> {
    const [row] = await this.db.query<{ queued: number; processing: number; oldest: number | null }>(
      `SELECT count(*) FILTER (WHERE status = 'queued')::int AS queued, count(*) FILTER (WHERE status = 'processing')::int AS processing,
         extract(epoch FROM now() - min(created_at) FILTER (WHERE status = 'queued'))::float8 AS oldest
       FROM jobs WHERE status IN ('queued', 'processing')`,
    );
    return { queued: row?.queued ?? 0, processing: row?.processing ?? 0, oldestQueuedSeconds: row?.oldest ?? 0 };
  }
}
