/**
 * Webhooks of transcription jobs (Standard Webhooks): each user's signing secret and default
 * endpoint; the delivery of each ended job's event — written in the transaction that ends the
 * job, queued on the same durable queue as the jobs, tried at once and then on the retry
 * schedule (schedule.ts) for 27.5 hours, with the same `webhook-id` every time — and its state,
 * shown on the job; every attempt is kept (delivery-store.ts) and listed for the app.
 *
 * The event: `{"type": "transcription.completed" | "transcription.failed" |
 * "transcription.canceled", "timestamp", "data": <the job as GET /transcriptions/{id} shows it>}`.
 * Above {@link MAX_INLINE_TRANSCRIPT_BYTES} of transcript, `data.text` and `data.segments` are
 * null and `data_truncated` is true: fetch the job for them.
 */
import { isId, MurmurError, pageSizeOf, presentJob as presentJobJson, webhookStateNameOf } from '@murmur/contract';
import { filterDigest, newId, PageCursors, type Database, type Logger, type OutboundPolicy, type Resolve } from '@murmur/kit';
import type { transcription } from '@murmur/proto';
import type { JobRow, JobStore, Queryable } from '../jobs/job-store';
import type { JobQueue } from '../jobs/queue';
import { presentJob } from '../jobs/present';
import { nextAttemptDelay, WEBHOOK_RETRY_SECONDS } from './schedule';
import { checkEndpointForm, postWebhook, type AttemptOutcome } from './sender';
import { DeliveryStore, type AttemptTiming } from './delivery-store';
import { presentDeliveries } from './delivery-list';
import { SecretSealer } from './secret-keys';
import type { CallerLimits } from '../caller-limits';
import { newSecret, webhookHeaders } from './signature';
import { countWebhookAttempt } from './webhook-metrics';

/** How long a rotated-out secret keeps signing (receivers switch over meanwhile). */
export const PREVIOUS_SECRET_HOURS = 24;
/** Above this much transcript the event carries the job without it (fetch the job for it). */
export const MAX_INLINE_TRANSCRIPT_BYTES = 256 * 1024;

const EVENT: Record<string, string> = { completed: 'transcription.completed', failed: 'transcription.failed', canceled: 'transcription.canceled' };

interface SettingsRow {
  owner_id: string;
  secret: string | null;
  previous_secret: string | null;
  previous_until: Date | null;
  default_url: string;
}

interface DeliveryRecord {
  id: string;
  job_id: string;
  owner_id: string;
  url: string;
  event: string;
  state: 'pending' | 'delivered' | 'failed';
  round_attempts: number;
}

export interface WebhookOptions {
  /** Where endpoints may be (MURMUR_WEBHOOK_ALLOW_PRIVATE, _ALLOW_CIDRS, _PORTS). */
  policy: OutboundPolicy;
  /** Plain `http://` endpoints too (MURMUR_WEBHOOK_ALLOW_HTTP; local development and tests only). */
  allowHttp?: boolean;
  /** Seals the owners' signing secrets at rest (MURMUR_WEBHOOK_SECRET_KEY). */
  sealer: SecretSealer;
  /** The per-user cap on retries (caller-limits.ts). */
  limits: CallerLimits;
  /** MURMUR_CURSOR_SECRET (page cursors of ListWebhookDeliveries). */
  cursorSecret: string;
  /** Seconds between attempts after each failure (default {@link WEBHOOK_RETRY_SECONDS}). */
  retrySeconds?: readonly number[];
  /** One attempt's limit (default 10 s). */
  timeoutMs?: number;
  /** How an endpoint's host name is resolved at each attempt (default the system's DNS; tests answer for themselves). */
  resolve?: Resolve;
}

/**
 * Seals every stored signing secret not yet sealed with the current key — those written before
 * secrets were sealed (migration 003), and those under a key rotated out — so an old key can be
 * dropped once this has run. The service runs it at start, before serving; each row is
 * compared-and-set, so replicas starting together do not clash. A secret under a key that is not
 * configured stops the start (its owner's deliveries could not be signed).
 */
export async function sealStoredSecrets(db: Database, sealer: SecretSealer, log?: Logger): Promise<number> {
  const current = `v1:${sealer.currentKeyId.replace(/[\\%_]/g, '\\$&')}:%`;
  let sealed = 0;
  for (;;) {
    const rows = await db.query<Pick<SettingsRow, 'owner_id' | 'secret' | 'previous_secret'>>(
      `SELECT owner_id, secret, previous_secret FROM webhook_settings
       WHERE (secret IS NOT NULL AND secret NOT LIKE $1) OR (previous_secret IS NOT NULL AND previous_secret NOT LIKE $1)
       ORDER BY owner_id LIMIT 500`,
      [current],
    );
    if (rows.length === 0) break;
    for (const row of rows) {
      const reseal = (value: string | null) => {
        if (value === null || sealer.isCurrent(value)) return value;
        return sealer.seal(SecretSealer.isSealed(value) ? sealer.open(value, row.owner_id) : value, row.owner_id);
      };
      await db.query(
        `UPDATE webhook_settings SET secret = $2, previous_secret = $3
         WHERE owner_id = $1 AND secret IS NOT DISTINCT FROM $4 AND previous_secret IS NOT DISTINCT FROM $5`,
        [row.owner_id, reseal(row.secret), reseal(row.previous_secret), row.secret, row.previous_secret],
      );
      sealed++;
    }
  }
  if (sealed > 0) log?.info({ rows: sealed, key_id: sealer.currentKeyId }, 'webhook secrets sealed with the current key');
  return sealed;
}

export class Webhooks {
  /** Set once the job store exists (it calls {@link onJobEnded} inside its transactions). */
  store!: JobStore;
  private readonly deliveries: DeliveryStore;
  private readonly cursors: PageCursors;

  constructor(
    private readonly db: Database,
    private readonly queue: JobQueue,
    private readonly log: Logger,
    private readonly options: WebhookOptions,
  ) {
    this.deliveries = new DeliveryStore(db);
    this.cursors = new PageCursors(options.cursorSecret);
  }

  // ── settings (the app's calls) ─────────────────────────────────────────────────────────────

  private async settingsRow(userId: string): Promise<SettingsRow | undefined> {
    return (await this.db.query<SettingsRow>(`SELECT owner_id, secret, previous_secret, previous_until, default_url FROM webhook_settings WHERE owner_id = $1`, [userId]))[0];
  }

  private present(row: SettingsRow | undefined): transcription.WebhookSettings {
    const live = row?.previous_until && row.previous_until.getTime() > Date.now() ? row.previous_until : undefined;
    const secret = row?.secret ? this.options.sealer.open(row.secret, row.owner_id) : '';
    return { hasSecret: Boolean(secret), secretHint: secret ? `…${secret.slice(-4)}` : '', previousValidUntil: live, defaultUrl: row?.default_url ?? '' };
  }

  /** The secrets a delivery is signed with, newest first: the owner's, and the previous one while it still signs. */
  private signingSecrets(row: SettingsRow): string[] {
    const { sealer } = this.options;
    if (!row.secret) return [];
    const previous = row.previous_secret && row.previous_until && row.previous_until.getTime() > Date.now() ? [sealer.open(row.previous_secret, row.owner_id)] : [];
    return [sealer.open(row.secret, row.owner_id), ...previous];
  }

  async settings(userId: string): Promise<transcription.WebhookSettings> {
    return this.present(await this.settingsRow(userId));
  }

  /** A new secret, answered this once; the one it replaces signs too for {@link PREVIOUS_SECRET_HOURS} hours. */
  async rotateSecret(userId: string): Promise<{ secret: string; settings: transcription.WebhookSettings }> {
    const secret = newSecret();
    const sealed = this.options.sealer.seal(secret, userId);
    const [row] = await this.db.query<SettingsRow>(
      `INSERT INTO webhook_settings (owner_id, secret) VALUES ($1, $2)
       ON CONFLICT (owner_id) DO UPDATE SET previous_secret = webhook_settings.secret,
         previous_until = CASE WHEN webhook_settings.secret IS NULL THEN NULL ELSE now() + make_interval(hours => $3) END,
         secret = $2, updated_at = now()
       RETURNING owner_id, secret, previous_secret, previous_until, default_url`,
      [userId, sealed, PREVIOUS_SECRET_HOURS],
    );
    this.log.info({ user_id: userId }, 'webhook secret rotated');
    return { secret, settings: this.present(row) };
  }

  async setEndpoint(userId: string, url: string): Promise<transcription.WebhookSettings> {
    if (url) this.checkEndpoint(url, 'url');
    const [row] = await this.db.query<SettingsRow>(
      `INSERT INTO webhook_settings (owner_id, default_url) VALUES ($1, $2)
       ON CONFLICT (owner_id) DO UPDATE SET default_url = $2, updated_at = now()
       RETURNING owner_id, secret, previous_secret, previous_until, default_url`,
      [userId, url],
    );
    return this.present(row);
  }

  private checkEndpoint(url: string, param: string): void {
    const problem = url.length > 2048 ? 'is longer than 2,048 characters' : checkEndpointForm(url, this.options.policy, this.options.allowHttp);
    if (problem) throw new MurmurError('invalid_request', `The webhook endpoint ${problem}; use a public https URL.`, { param });
  }

  /** The stored default endpoint, checked again (the rules may have tightened since it was saved). */
  private checkDefault(url: string): void {
    const problem = checkEndpointForm(url, this.options.policy, this.options.allowHttp);
    if (problem) throw new MurmurError('invalid_request', `Your default webhook endpoint ${problem}; change it in Settings → Developer, or pass a public https \`webhook_url\`.`, { param: 'webhook_url' });
  }

  /**
   * The endpoint a new job's end goes to: the one it names, else the owner's default, else none.
   * Either needs the owner's signing secret (made in Settings → Developer).
   */
  async endpointFor(userId: string, asked: string): Promise<string> {
    if (asked) this.checkEndpoint(asked, 'webhook_url');
    const row = await this.settingsRow(userId);
    const url = asked || row?.default_url || '';
    if (url && !asked) this.checkDefault(url);
    if (url && !row?.secret) {
      throw new MurmurError('invalid_request', 'Create a webhook signing secret in Settings → Developer before asking for webhooks; every delivery is signed with it.', { param: 'webhook_url' });
    }
    return url;
  }

  // ── deliveries ─────────────────────────────────────────────────────────────────────────────

  /** Inside the transaction that ends `row`: its delivery, queued for now (none without an endpoint). */
  async onJobEnded(tx: Queryable, row: JobRow): Promise<void> {
    if (!row.webhook_url) return;
    const id = newId('msg');
    await tx.query(
      `INSERT INTO webhook_deliveries (id, job_id, owner_id, url, event, state, next_attempt_at) VALUES ($1, $2, $3, $4, $5, 'pending', now())
       ON CONFLICT (job_id) DO NOTHING`,
      [id, row.id, row.owner_id, row.webhook_url, EVENT[row.status] ?? `transcription.${row.status}`],
    );
    await this.queue.sendWebhook(tx, id, 0);
  }

  /** The queue's handler: one attempt; a failure is scheduled again (never thrown). */
  async deliver(deliveryId: string): Promise<void> {
    const [d] = await this.db.query<DeliveryRecord>(`SELECT id, job_id, owner_id, url, event, state, round_attempts FROM webhook_deliveries WHERE id = $1`, [deliveryId]);
    if (!d || d.state !== 'pending') return;
    const job = await this.store.get(d.job_id);
    const settings = await this.settingsRow(d.owner_id);
    if (!job || !settings?.secret) return void (await this.record(d, { ok: false, status: 0, error: 'no signing secret', startedAt: new Date(), latencyMs: 0 }));
    const body = JSON.stringify(this.event(d.event, job));
    const startedAt = new Date();
    const started = performance.now();
    const outcome = await postWebhook(d.url, webhookHeaders(this.signingSecrets(settings), d.id, new Date(), body), body, this.options.policy, {
      ...(this.options.timeoutMs ? { timeoutMs: this.options.timeoutMs } : {}),
      ...(this.options.allowHttp ? { allowHttp: true } : {}),
      ...(this.options.resolve ? { resolve: this.options.resolve } : {}),
    });
    await this.record(d, { ...outcome, startedAt, latencyMs: performance.now() - started });
  }

  private event(type: string, job: JobRow) {
    const { webhook: _delivery, ...data } = presentJobJson(presentJob({ ...job, webhook: null }), { words: job.timeline_options.words ?? false });
    const words = 'words' in data ? data.words : undefined;
    const transcriptBytes = Buffer.byteLength(JSON.stringify([data.text, data.segments, words ?? null]));
    const truncated = transcriptBytes > MAX_INLINE_TRANSCRIPT_BYTES;
    return {
      type,
      timestamp: (job.finished_at ?? new Date()).toISOString(),
      data: truncated ? { ...data, text: null, segments: null, ...(words !== undefined ? { words: null } : {}) } : data,
      ...(truncated ? { data_truncated: true } : {}),
    };
  }

  /**
   * Records an attempt, with its own row (delivery-store.ts): delivered; or the next attempt
   * queued in the same transaction; or the round over.
   */
  private async record(d: DeliveryRecord, outcome: AttemptOutcome & AttemptTiming): Promise<void> {
    countWebhookAttempt(outcome);
    const attempt = d.round_attempts + 1;
    if (outcome.ok) {
      await this.deliveries.delivered(d, outcome);
      this.log.info({ delivery_id: d.id, job_id: d.job_id, attempt, status: outcome.status }, 'webhook delivered');
      return;
    }
    const delay = nextAttemptDelay(attempt, this.options.retrySeconds ?? WEBHOOK_RETRY_SECONDS);
    await this.db.transaction(async (tx) => {
      const counted = await this.deliveries.failed(tx, d, outcome, delay);
      if (counted && delay !== null) await this.queue.sendWebhook(tx, d.id, delay);
    });
    this.log.warn({ delivery_id: d.id, job_id: d.job_id, attempt, status: outcome.status, error: outcome.error, next_in_seconds: delay === null ? null : Math.round(delay) }, 'webhook attempt failed');
  }

  /** Sends an ended job's event again now: a new round of attempts, the same webhook-id (at most WEBHOOK_RETRY_LIMIT a window per user). */
  async retry(ownerId: string, jobId: string): Promise<JobRow> {
    const row = isId('trn', jobId) ? await this.store.getOwned(ownerId, jobId) : undefined;
    if (!row) throw new MurmurError('not_found', 'No transcription with this id. Check the id returned by POST /transcriptions.', { param: 'id' });
    if (!row.webhook_url) throw new MurmurError('invalid_request', 'This transcription has no webhook endpoint; pass `webhook_url` when you submit one.', { param: 'id' });
    if (!row.webhook) throw new MurmurError('invalid_request', 'The transcription has not ended yet; its event is sent when it does.', { param: 'id' });
    await this.options.limits.webhookRetry(ownerId);
    await this.db.transaction(async (tx) => {
      await this.deliveries.startRound(tx, row.webhook!.id);
      await this.queue.sendWebhook(tx, row.webhook!.id, 0);
    });
    return (await this.store.get(jobId))!;
  }

  /** The owner's deliveries, newest first, each with its kept attempts (ListWebhookDeliveries). */
  async listDeliveries(req: transcription.ListWebhookDeliveriesRequest): Promise<transcription.ListWebhookDeliveriesResponse> {
    const limit = pageSizeOf(req.limit, 'limit', { zeroMeansDefault: true });
    const state = webhookStateNameOf(req.state);
    const filters = filterDigest([state]);
    const after = this.cursors.positionOf(req.ownerId, 'webhook_deliveries', req.cursor || undefined, filters);
    const rows = await this.deliveries.list(req.ownerId, { limit, ...(after ? { after } : {}), ...(state ? { state } : {}) });
    const page = this.cursors.page(req.ownerId, 'webhook_deliveries', rows.map((r) => Object.assign(r, { createdAt: r.created_at })), limit, filters);
    return { deliveries: presentDeliveries(page.rows), hasMore: page.hasMore, nextCursor: page.nextCursor };
  }
}
