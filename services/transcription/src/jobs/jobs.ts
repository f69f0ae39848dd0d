/**
 * The job RPCs' side of transcription jobs: submit (store the audio, price it, hold the
 * credits, queue it), read, list, cancel and watch. The work itself is worker.ts.
 *
 * Submission answers as soon as the upload is stored and held for: the hold is the price of the
 * duration the container's header states (probe.ts), or of one minute when it states none.
 * That is only an estimate — a header can lie — so nothing is decoded here: the worker decodes
 * under the hold, extends it as the decoded audio grows, and commits the decoded length's price
 * (paid-audio.ts). Everything that can be refused from the upload alone is refused here, before a
 * job exists: the audio's size, a format ffprobe cannot read, a stated length over the limit, the
 * language, the folder, and billing (credits, cap, rate limit through the admission). Nothing is
 * queued or held after a refusal.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import * as path from 'node:path';
import { billing, type transcription } from '@murmur/proto';
import { checkIdempotencyKey, hintOf, isId, jobStatusNameOf, MurmurError, pageSizeOf } from '@murmur/contract';
import { DEFAULT_HOLD_LEASE_SECONDS, filterDigest, newId, PageCursors } from '@murmur/kit';
import { spoolUpload } from '../audio-files';
import { checkSaveCombination, checkSaveOptions } from '../saving';
import { FIRST_HOLD_SECONDS } from '../paid-audio';
import { audioLimitOf, safeExtension } from '../service';
import { dropAudio, dropRecording, HELD, JOB_HOLD_SECONDS, releaseHold, type JobDeps } from './deps';
import type { JobRow, JobTimelineOptions } from './job-store';
import { presentJob } from './present';
import { probeDuration, UnreadableAudio } from './probe';
import type { CallerLimits } from '../caller-limits';

/** Options that followed the audio (SubmitTranscriptionLateOptions): their final values. */
export type LateOptions = transcription.SubmitTranscriptionLateOptions;

/** How often a watcher re-reads its job. */
export const WATCH_INTERVAL_MS = 500;

export type SubmitConfig = transcription.SubmitTranscriptionConfig;

/**
 * What a job's submission looked like, as one digest: its options (language, where it is saved,
 * its endpoint) and its audio's bytes. A repeated Idempotency-Key answers the job it made only for
 * the same request.
 */
export function jobFingerprint(config: Pick<SubmitConfig, 'language' | 'save' | 'title' | 'folderId'>, webhookUrl: string, audioSha256: string, options: JobTimelineOptions = {}): string {
  const parts = ['transcription-job/2', config.language, config.save, config.title, config.folderId, webhookUrl, audioSha256, options];
  return `sha256:${createHash('sha256').update(JSON.stringify(parts)).digest('hex')}`;
}

/** The job a repeated key made, when this submission is the same request; a job made before fingerprints is answered as before. */
function sameRequest(existing: JobRow, fingerprint: string): JobRow {
  if (existing.request_fingerprint !== null && existing.request_fingerprint !== fingerprint) {
    throw new MurmurError(
      'idempotency_conflict',
      'This Idempotency-Key was used for another transcription job (other audio or options); a key answers only the request it was first sent with. Use a new key for a new job.',
      { param: 'idempotency_key' },
    );
  }
  return existing;
}

export class TranscriptionJobs {
  private readonly cursors: PageCursors;

  constructor(
    private readonly deps: JobDeps,
    cursorSecret: string,
    /** The per-user cap on watchers (caller-limits.ts). */
    private readonly limits: CallerLimits,
  ) {
    this.cursors = new PageCursors(cursorSecret);
  }

  private notFound(): MurmurError {
    return new MurmurError('not_found', 'No transcription with this id. Check the id returned by POST /transcriptions.', { param: 'id' });
  }

  /**
   * Checks what the audio does not decide. `partial`, before the audio: options may still follow
   * it (late options), so each value is checked but not how they combine; `full` once they are
   * all in, before anything is stored, held or charged.
   */
  async validate(config: SubmitConfig, mode: 'full' | 'partial' = 'full'): Promise<JobTimelineOptions> {
    this.deps.transcriber.validate(config);
    const o = await this.deps.transcriber.checkTimeline(config);
    if (config.idempotencyKey) checkIdempotencyKey(config.idempotencyKey, 'idempotency_key');
    await checkSaveOptions(this.deps.library, config.userId, config, mode);
    return { words: o.words, diarize: o.diarize, speakers_expected: o.speakersExpected, keyterms: o.keyterms, ...(o.redaction ? { redaction: o.redaction } : {}) };
  }

  /** The config with the options that followed the audio, all checked again (nothing is stored or held yet). */
  private async withLateOptions(
    config: SubmitConfig,
    webhookUrl: string,
    timelineOptions: JobTimelineOptions,
    late: LateOptions | undefined,
  ): Promise<{ config: SubmitConfig; webhookUrl: string; timelineOptions: JobTimelineOptions }> {
    if (!late) {
      checkSaveCombination(config);
      return { config, webhookUrl, timelineOptions };
    }
    const final = { ...config, save: late.save, title: late.title, folderId: late.folderId, webhookUrl: late.webhookUrl, timeline: late.timeline ?? config.timeline };
    const checked = await this.validate(final);
    return { config: final, webhookUrl: await this.deps.webhooks.endpointFor(final.userId, final.webhookUrl), timelineOptions: checked };
  }

  /**
   * `lateOptions`: the options that followed the audio, if any (read once the audio has ended);
   * they replace the config's, and the whole is checked again before anything is stored or held.
   */
  async submit(config: SubmitConfig, audio: AsyncIterable<Uint8Array>, signal: AbortSignal, lateOptions: () => LateOptions | undefined = () => undefined): Promise<transcription.TranscriptionJob> {
    const { deps } = this;
    // What is known now is refused now, before the upload is read.
    let timelineOptions = await this.validate(config, 'partial');
    let webhookUrl = await deps.webhooks.endpointFor(config.userId, config.webhookUrl);
    const id = newId('trn');
    const started = Date.now();
    const dir = await mkdtemp(path.join(deps.spoolDir, 'murmur-job-'));
    let reservation: billing.Reservation | undefined;
    let stored = false;
    try {
      const file = path.join(dir, `upload${safeExtension(config.filename)}`);
      const audioHash = createHash('sha256');
      const bytes = await spoolUpload(audio, file, audioLimitOf(config), audioHash);
      ({ config, webhookUrl, timelineOptions } = await this.withLateOptions(config, webhookUrl, timelineOptions, lateOptions()));
      signal.throwIfAborted();
      const fingerprint = jobFingerprint(config, webhookUrl, audioHash.digest('hex'), timelineOptions);
      // The same key again: the job it made, for the same request only (nothing is held or stored for it).
      if (config.idempotencyKey) {
        const existing = await deps.store.byIdempotencyKey(config.userId, config.idempotencyKey);
        if (existing) return presentJob(sameRequest(existing, fingerprint));
      }
      const stated = await this.statedDuration(file, signal);
      ({ reservation } = await deps.billing.reserve({
        userId: config.userId,
        operation: billing.Operation.OPERATION_TRANSCRIBE,
        credits: 0,
        // The job is the reservation's key: a retried or resumed job is charged once.
        idempotencyKey: id,
        admissionId: config.admissionId,
        audioSeconds: stated ?? FIRST_HOLD_SECONDS,
        transcriptChars: 0,
        // Short until the job is safely queued: a crash in between frees the credits within it.
        holdSeconds: DEFAULT_HOLD_LEASE_SECONDS,
        // The job is the request: its id is the key, and no other request can carry it.
        requestFingerprint: `transcription-job:${id}`,
      }));
      if (!reservation) throw new Error('billing answered Reserve without a reservation');
      await deps.audio.put(id, file);
      stored = true;
      const held = reservation;
      const { row, created } = await deps.store.transactionalInsert(async (tx) => {
        const out = await deps.store.insert(tx, {
          id,
          owner_id: config.userId,
          idempotency_key: config.idempotencyKey || id,
          language: config.language,
          filename: hintOf(config.filename),
          content_type: hintOf(config.contentType),
          save: config.save,
          title: config.title,
          folder_id: config.folderId,
          audio_key: id,
          upload_bytes: bytes,
          // The header's word until the worker decodes it (then the decoded length).
          duration_seconds: stated ?? 0,
          reservation_id: held.id,
          credits_reserved: held.credits,
          webhook_url: webhookUrl,
          request_fingerprint: fingerprint,
          timeline_options: timelineOptions,
        });
        if (out.created) await deps.store.setQueueJob(tx, id, await deps.queue.send(tx, id));
        return out;
      });
      if (!created) {
        // The same key raced in from another connection: that job stands, this one never existed.
        await releaseHold(deps, { id, owner_id: config.userId, reservation_id: held.id }, 'duplicate submission');
        await deps.audio.delete(id).catch(() => undefined);
        return presentJob(sameRequest(row, fingerprint));
      }
      deps.queue.wake();
      await this.holdForTheJob(row);
      deps.log.info({ job_id: id, upload_bytes: bytes, duration_seconds: stated ?? null, credits: held.credits, submit_ms: Date.now() - started }, 'transcription job queued');
      return presentJob(row);
    } catch (err) {
      if (reservation) await releaseHold(deps, { id, owner_id: config.userId, reservation_id: reservation.id }, 'submission failed');
      if (stored) await deps.audio.delete(id).catch(() => undefined);
      if (signal.aborted && !(err instanceof MurmurError)) throw new MurmurError('service_unavailable', 'The call was cancelled.');
      throw err;
    } finally {
      await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    }
  }

  /**
   * The duration the header states, if any (an estimate to hold credits for, never the price).
   * Unreadable → unsupported_audio; a stated length over the limit → audio_too_large.
   */
  private async statedDuration(file: string, signal: AbortSignal): Promise<number | undefined> {
    const { transcriber } = this.deps;
    let seconds: number | undefined;
    try {
      seconds = await probeDuration(file, { signal, ...(this.deps.ffprobePath ? { ffprobePath: this.deps.ffprobePath } : {}) });
    } catch (err) {
      if (err instanceof UnreadableAudio) throw new MurmurError('unsupported_audio', undefined, { param: 'audio' });
      throw err;
    }
    if (seconds !== undefined && seconds > transcriber.maxAudioSeconds) throw transcriber.tooLong();
    return seconds;
  }

  /** Extends the submission's short hold to the job's; retried, and left to the worker's own renewal if billing stays away. */
  private async holdForTheJob(row: JobRow): Promise<void> {
    for (let attempt = 1; attempt <= 3; attempt++) {
      try {
        const { reservation } = await this.deps.billing.renewReservation({ userId: row.owner_id, reservationId: row.reservation_id, holdSeconds: JOB_HOLD_SECONDS });
        if (reservation?.state === HELD) return;
      } catch (err) {
        this.deps.log.warn({ job_id: row.id, attempt, err: (err as Error).message }, 'job hold not extended yet');
      }
      if (attempt < 3) await new Promise((r) => setTimeout(r, 200 * attempt));
    }
  }

  /** The owner's job; anything else — another user's, none, or not a job id at all (NUL, SQL) — not_found. */
  private async owned(ownerId: string, id: string): Promise<JobRow> {
    const row = isId('trn', id) ? await this.deps.store.getOwned(ownerId, id) : undefined;
    if (!row) throw this.notFound();
    return row;
  }

  async get(ownerId: string, id: string): Promise<transcription.TranscriptionJob> {
    return presentJob(await this.owned(ownerId, id));
  }

  async list(req: transcription.ListTranscriptionsRequest): Promise<transcription.ListTranscriptionsResponse> {
    const limit = pageSizeOf(req.limit, 'limit', { zeroMeansDefault: true });
    const status = jobStatusNameOf(req.status);
    const filters = filterDigest([status]);
    const after = this.cursors.positionOf(req.ownerId, 'transcriptions', req.cursor || undefined, filters);
    const rows = await this.deps.store.list(req.ownerId, { limit, ...(after ? { after } : {}), ...(status ? { status } : {}) });
    const page = this.cursors.page(req.ownerId, 'transcriptions', rows.map((r) => Object.assign(r, { createdAt: r.created_at })), limit, filters);
    return { jobs: page.rows.map(presentJob), hasMore: page.hasMore, nextCursor: page.nextCursor };
  }

  /** Ends a live job as canceled: credits released, audio deleted, the queue entry taken back. */
  async cancel(ownerId: string, id: string): Promise<transcription.TranscriptionJob> {
    const { deps } = this;
    await this.owned(ownerId, id);
    const ended = await deps.store.finish(id, async (live) => ({ status: 'canceled', holdOpen: !(await releaseHold(deps, live, 'canceled')) }));
    if (!ended) throw new MurmurError('transcription_not_cancelable', undefined, { param: 'id' });
    if (ended.queue_job_id) await deps.queue.cancel(ended.queue_job_id);
    await dropRecording(deps, ended);
    await dropAudio(deps, ended);
    deps.log.info({ job_id: id }, 'transcription job canceled');
    return presentJob(ended);
  }

  /**
   * Yields the job now and whenever its status or progress changes, until it has ended or
   * `signal` aborts. A live job's watcher holds one of its owner's watcher slots while it runs
   * (over the cap: rate_limit_exceeded); a job that has already ended is answered at once, slot-free.
   */
  async *watch(ownerId: string, id: string, signal: AbortSignal): AsyncGenerator<transcription.TranscriptionJob> {
    let row = await this.owned(ownerId, id);
    const live = (r: JobRow) => r.status === 'queued' || r.status === 'processing';
    if (!live(row)) return void (yield presentJob(row));
    const slot = await this.limits.watcher(ownerId);
    try {
      let last = '';
      for (;;) {
        const job = presentJob(row);
        const seen = `${job.status}:${job.progress}`;
        if (seen !== last) {
          last = seen;
          yield job;
        }
        if (!live(row)) return;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, WATCH_INTERVAL_MS);
          function done() {
            clearTimeout(timer);
            signal.removeEventListener('abort', done);
            resolve();
          }
          signal.addEventListener('abort', done, { once: true });
        });
        if (signal.aborted) return;
        await slot.keep().catch((err: unknown) => this.deps.log.warn({ job_id: id, err: (err as Error).message }, 'watcher slot not renewed'));
        row = await this.owned(ownerId, id);
      }
    } finally {
      await slot.release().catch((err: unknown) => this.deps.log.warn({ job_id: id, err: (err as Error).message }, 'watcher slot not released; it lapses by itself'));
    }
  }
}
