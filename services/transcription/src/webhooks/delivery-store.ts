/**
 * Webhook deliveries and their attempts in SQL (migrations 002 and 006). An attempt's row is
 * written by the very statement that records its outcome on the delivery — the delivery's
 * compare-and-set (still pending, still at the attempt count the attempt started from) as a CTE
 * whose RETURNING feeds the INSERT — so an attempt is stored exactly when its outcome counted,
 * and two workers racing on one delivery cannot both add one.
 */
import type { WebhookStateName } from '@murmur/contract';
import type { Database, PagePosition } from '@murmur/kit';
import type { Queryable } from '../jobs/job-store';

/** Rounds of attempts kept per delivery: a new round drops the attempts of older ones, so Resend pressed forever keeps a bounded history. */
export const MAX_KEPT_ROUNDS = 10;

/** When an attempt was made and how long it took (until the answer, the failure or the timeout). */
export interface AttemptTiming {
  startedAt: Date;
  latencyMs: number;
}

/** What is stored of one attempt besides its delivery: its outcome as the sender gives it, and its timing. */
export interface AttemptResult extends AttemptTiming {
  /** The HTTP status (0: none came). */
  status: number;
  /** Why it failed ('' when it succeeded); never the response body. */
  error: string;
}

/** The delivery an attempt was made for, as it was read before the attempt (the compare-and-set's expectation). */
export interface AttemptedDelivery {
  id: string;
  round_attempts: number;
}

/** A delivery as its list shows it, with its kept attempts (read in the same statement, so the two agree). */
export interface ListedDeliveryRow {
  id: string;
  job_id: string;
  event: string;
  url: string;
  state: WebhookStateName;
  created_at: Date;
  delivered_at: Date | null;
  next_attempt_at: Date | null;
  attempts: number;
  last_status_code: number;
  /** Oldest first. */
  attempt_list: AttemptRow[];
}

/** One kept attempt, as JSON from the list's statement (`started_ms`: epoch milliseconds). */
export interface AttemptRow {
  round: number;
  attempt: number;
  started_ms: number;
  status_code: number;
  latency_ms: number;
  error: string;
}

/**
 * The attempt's INSERT after a CTE `outcome` (the delivery's UPDATE, RETURNING its id, owner_id,
 * round and new round_attempts; no row when its compare-and-set lost, and then nothing is
 * inserted). The attempt's own values are always $1–$4: {@link attemptParams}.
 */
const INSERT_ATTEMPT = `INSERT INTO webhook_attempts (delivery_id, owner_id, round, attempt, started_at, status_code, latency_ms, error)
  SELECT id, owner_id, round, round_attempts, $1::timestamptz, $2::int, $3::int, $4::text FROM outcome RETURNING delivery_id`;

const attemptParams = (a: AttemptResult) => [a.startedAt, a.status, Math.max(0, Math.round(a.latencyMs)), a.error];

export class DeliveryStore {
  constructor(private readonly db: Database) {}

  /** The attempt succeeded: the delivery is delivered, and the attempt stored, if the attempt still counted. */
  async delivered(d: AttemptedDelivery, a: AttemptResult): Promise<boolean> {
    const rows = await this.db.query(
      `WITH outcome AS (
         UPDATE webhook_deliveries SET state = 'delivered', attempts = attempts + 1, round_attempts = round_attempts + 1, last_status_code = $2::int, last_error = '',
           delivered_at = now(), next_attempt_at = NULL, updated_at = now() WHERE id = $5 AND state = 'pending' AND round_attempts = $6
         RETURNING id, owner_id, round, round_attempts)
       ${INSERT_ATTEMPT}`,
      [...attemptParams(a), d.id, d.round_attempts],
    );
    return rows.length > 0;
  }

  /**
   * The attempt failed: the next one due in `delaySeconds`, or (null) the round over, and the
   * attempt stored, if the attempt still counted. Inside `tx`, where the next attempt is queued.
   */
  async failed(tx: Queryable, d: AttemptedDelivery, a: AttemptResult, delaySeconds: number | null): Promise<boolean> {
    const { rows } = await tx.query(
      `WITH outcome AS (
         UPDATE webhook_deliveries SET state = $7, attempts = attempts + 1, round_attempts = round_attempts + 1, last_status_code = $2::int, last_error = $4::text,
           next_attempt_at = CASE WHEN $8::float8 IS NULL THEN NULL ELSE now() + make_interval(secs => $8::float8) END, updated_at = now()
         WHERE id = $5 AND state = 'pending' AND round_attempts = $6
         RETURNING id, owner_id, round, round_attempts)
       ${INSERT_ATTEMPT}`,
      [...attemptParams(a), d.id, d.round_attempts, delaySeconds === null ? 'failed' : 'pending', delaySeconds],
    );
    return rows.length > 0;
  }

  /** A new round, due now (RetryWebhook); the attempts of rounds beyond the last {@link MAX_KEPT_ROUNDS} go. */
  async startRound(tx: Queryable, id: string): Promise<void> {
    await tx.query(
      `WITH started AS (
         UPDATE webhook_deliveries SET state = 'pending', round = round + 1, round_attempts = 0, next_attempt_at = now(), updated_at = now() WHERE id = $1
         RETURNING id, round)
       DELETE FROM webhook_attempts a USING started WHERE a.delivery_id = started.id AND a.round <= started.round - $2`,
      [id, MAX_KEPT_ROUNDS],
    );
  }

  /** The owner's deliveries newest first, after `after`, `limit + 1` of them (the caller cuts the page). */
  async list(ownerId: string, opts: { after?: PagePosition; limit: number; state?: WebhookStateName }): Promise<ListedDeliveryRow[]> {
    const params: unknown[] = [ownerId];
    let where = 'd.owner_id = $1';
    if (opts.state) {
      params.push(opts.state);
      where += ` AND d.state = $${params.length}`;
    }
    if (opts.after) {
      params.push(opts.after.createdAt, opts.after.id);
      where += ` AND (d.created_at, d.id) < ($${params.length - 1}::timestamptz, $${params.length}::text)`;
    }
    params.push(opts.limit + 1);
    return this.db.query<ListedDeliveryRow>(
      `SELECT d.id, d.job_id, d.event, d.url, d.state, d.created_at, d.delivered_at, d.next_attempt_at, d.attempts, d.last_status_code,
         coalesce((SELECT jsonb_agg(jsonb_build_object('round', a.round, 'attempt', a.attempt, 'started_ms', extract(epoch FROM a.started_at) * 1000,
             'status_code', a.status_code, 'latency_ms', a.latency_ms, 'error', a.error) ORDER BY a.round, a.attempt)
           FROM webhook_attempts a WHERE a.delivery_id = d.id AND a.owner_id = d.owner_id), '[]'::jsonb) AS attempt_list
       FROM webhook_deliveries d WHERE ${where} ORDER BY d.created_at DESC, d.id DESC LIMIT $${params.length}`,
      params,
    );
  }
}
