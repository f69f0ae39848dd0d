/**
 * One attempt at a queued job, on whichever replica the queue gave it to:
 *  1. the job becomes `processing`; its credit hold is renewed (a job queued through a day-long
 *     outage whose hold lapsed fails, charging nothing);
 *  2. the stored audio is decoded afresh into this attempt's temp folder, only as far as the hold
 *     pays for: the hold made at submission priced the header's duration (or one minute), which a
 *     file can misstate, so it is extended as the decoded audio grows, and a job whose audio runs
 *     past what its owner can pay for fails with insufficient_tokens (paid-audio.ts);
 *  3. the recognition plan is read back (stored by the first attempt, so every attempt cuts the
 *     audio the same way, whatever replica it runs on) and only chunks without a stored
 *     transcript are recognised — each recorded as it finishes, with the job's progress;
 *  4. the job ends in one guarded step, with its row locked: with `save`, the recording stored
 *     (under an id derived from the job's, so a retry finds it), then the decoded length's price
 *     committed; then its audio is deleted. A cancel takes the same lock, so it lands wholly
 *     before this step (nothing is stored or charged) or after it (the job has completed).
 * A cancel (seen at the next chunk, or when the queue takes the job back) stops it. A failure
 * fails the attempt: the queue retries it, resuming from the chunks done; the last attempt's
 * failure — or a failure no retry can mend — ends the job as failed with its credits released,
 * and a recording an interrupted end step may have stored is deleted: no transcript is kept
 * without its charge.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import * as path from 'node:path';
import { MurmurError, transcriptionTitle } from '@murmur/contract';
import { keepReservationHeld, type Logger } from '@murmur/kit';
import { BYTES_PER_SECOND } from '../pcm';
import type { ChunkTranscript } from '../stitch';
import type { CheckedTimelineOptions } from '../timeline-options';
import { wireWordsFromBase64, wireWordsToBase64, wordsFromTuples, wordsToTuples } from './job-words';
import { PaidAudio } from '../paid-audio';
import { saveRecording } from '../saving';
import { COMMITTED, dropAudio, dropRecording, HELD, JOB_HOLD_SECONDS, releaseHold, type JobDeps } from './deps';
import type { JobErrorBody, JobResult, JobRow } from './job-store';
import type { Attempt, JobMessage } from './queue';

/** Failures that another attempt cannot mend: the job ends at once. */
const FINAL_CODES = new Set(['unsupported_audio', 'audio_too_large', 'missing_audio', 'invalid_request', 'not_found', 'insufficient_tokens', 'spending_cap_reached']);

/** A decoded length priced by billing must be positive: any audio at all costs the first priced minute. */
const MIN_PRICED_SECONDS = 0.001;

class Canceled extends Error {}

function errorBody(err: unknown): JobErrorBody {
  if (err instanceof MurmurError) return { code: err.code, message: err.message, param: err.param ?? null };
  return { code: 'transcription_failed', message: new MurmurError('transcription_failed').message, param: null };
}

export class JobWorker {
  private readonly log: Logger;

  constructor(private readonly deps: JobDeps) {
    this.log = deps.log;
  }

  /** The queue's handler: one attempt (see the file comment). Throws to have the attempt retried. */
  async run(message: JobMessage, attempt: Attempt): Promise<void> {
    const { deps } = this;
    const row = await deps.store.start(message.jobId);
    if (!row) return; // ended meanwhile (canceled): nothing to do
    const started = Date.now();
    this.log.info({ job_id: row.id, attempt: attempt.retryCount + 1 }, 'transcription job started');
    try {
      await this.process(row, attempt);
      this.log.info({ job_id: row.id, attempt: attempt.retryCount + 1, total_ms: Date.now() - started }, 'transcription job completed');
    } catch (err) {
      if (err instanceof Canceled || (await deps.store.get(row.id))?.status === 'canceled') {
        this.log.info({ job_id: row.id }, 'transcription job stopped: canceled');
        return;
      }
      const body = errorBody(err);
      const final = attempt.last || FINAL_CODES.has(body.code);
      this.log.warn({ job_id: row.id, attempt: attempt.retryCount + 1, code: body.code, final, err: err instanceof Error ? err.message : String(err) }, 'transcription attempt failed');
      if (!final) throw err;
      await this.fail(row.id, body);
    }
  }

  /** The dead-letter handler: a job whose every attempt's worker died ends as failed. */
  async dead(message: JobMessage): Promise<void> {
    await this.fail(message.jobId, {
      code: 'transcription_failed',
      message: 'The transcription stopped on every attempt; your credits were returned. Submit it again.',
      param: null,
    });
  }

  private async fail(id: string, error: JobErrorBody): Promise<void> {
    const ended = await this.deps.store.finish(id, async (live) => ({ status: 'failed', error, holdOpen: !(await releaseHold(this.deps, live, `failed: ${error.code}`)) }));
    if (!ended) return;
    await dropRecording(this.deps, ended);
    await dropAudio(this.deps, ended);
  }

  private async process(row: JobRow, attempt: Attempt): Promise<void> {
    const { deps } = this;
    const hold = { userId: row.owner_id, reservationId: row.reservation_id };
    const { reservation } = await deps.billing.renewReservation({ ...hold, holdSeconds: JOB_HOLD_SECONDS });
    if (reservation?.state !== HELD && reservation?.state !== COMMITTED) {
      throw new MurmurError('invalid_request', 'The job waited longer than its credits could be held (24 hours); nothing was charged. Submit it again.');
    }
    const lease = keepReservationHeld(deps.billing, hold, { leaseSeconds: JOB_HOLD_SECONDS, log: this.log });
    const canceled = new AbortController();
    const signal = AbortSignal.any([attempt.signal, lease.signal, canceled.signal]);
    const dir = await mkdtemp(path.join(deps.spoolDir, 'murmur-attempt-'));
    try {
      if (!row.audio_key) throw new Error('the job has no stored audio');
      const audio = await deps.audio.localFile(row.audio_key, dir);
      // A hold committed already (an attempt that charged, then died before the job ended) pays for all of it.
      const paid = reservation.state === HELD ? PaidAudio.holding(deps.billing, row.owner_id, deps.transcriber.maxAudioSeconds, reservation) : undefined;
      const decoded = await deps.transcriber.decode(audio, dir, signal, row.id, paid);
      const options = timelineOptionsOfJob(row);
      deps.transcriber.checkDiarizedLength(options, decoded.durationSeconds);
      const creditsHeld = paid?.creditsHeld ?? reservation.credits;
      if (decoded.durationSeconds !== row.duration_seconds || creditsHeld !== row.credits_reserved) {
        await deps.store.setDecoded(row.id, decoded.durationSeconds, creditsHeld);
      }
      const plan = await deps.store.plan(row.id, deps.transcriber.plan(decoded.pieces));
      const chunks = plan.map((c) => ({ startByte: c.start_byte, endByte: c.end_byte }));
      const total = chunks.reduce((sum, c) => sum + (c.endByte - c.startByte), 0);
      const done = new Map<number, ChunkTranscript & { language?: string }>();
      let doneBytes = 0;
      for (const c of plan) {
        if (!c.result) continue;
        const words = wordsFromTuples(c.result.words);
        done.set(c.index, {
          offset: c.start_byte / BYTES_PER_SECOND,
          duration: (c.end_byte - c.start_byte) / BYTES_PER_SECOND,
          text: c.result.text,
          segments: c.result.segments,
          ...(words ? { words } : {}),
          language: c.result.language,
        });
        doneBytes += c.end_byte - c.start_byte;
      }
      if (done.size > 0) this.log.info({ job_id: row.id, chunks_done: done.size, chunks: plan.length }, 'transcription job resumed');
      const recognized = await deps.transcriber.recognize(chunks, decoded.pcmFile, dir, {
        language: row.language,
        signal,
        done,
        keyterms: row.timeline_options.keyterms ?? [],
        onChunk: async (index, chunk, language) => {
          doneBytes += plan[index]!.end_byte - plan[index]!.start_byte;
          const processed = total > 0 ? (doneBytes / total) * decoded.durationSeconds : 0;
          const words = chunk.words ? { words: wordsToTuples(chunk.words) } : {};
          // A redacted job never stores its original words, not even for a while (job-store.ts saveChunk).
          const kept = options.redaction ? null : { text: chunk.text, segments: chunk.segments, language, ...words };
          const live = await deps.store.saveChunk(row.id, index, kept, processed);
          if (!live) canceled.abort(new Canceled());
        },
      });
      if (canceled.signal.aborted) throw new Canceled();
      const timeline = await deps.transcriber.finishTimeline(recognized.transcript, options, decoded.pcmFile, signal);
      const response = deps.transcriber.response(row.id, timeline, recognized.language, row.language, decoded.durationSeconds, 0);
      const words = wireWordsToBase64(response.words);
      const result: JobResult = {
        id: row.id,
        text: response.text,
        language: response.language,
        duration_seconds: response.durationSeconds,
        segments: response.segments.map((s) => ({ start: s.startSeconds, end: s.endSeconds, text: s.text, ...(s.speaker ? { speaker: s.speaker } : {}) })),
        model: response.model,
        credits_charged: response.creditsCharged,
        ...(words ? { words } : {}),
        ...(response.speakers.length > 0 ? { speakers: response.speakers } : {}),
      };
      // One step under the job's lock (see the file comment): the recording first — a failure
      // there (the folder was deleted) ends the attempt before anything is charged — then the
      // charge for the audio decoded.
      const ended = await deps.store.finish(row.id, async (live) => {
        const recordingId = live.save ? live.recording_id || (await this.saveRecording(live, result)) : undefined;
        const committed = await deps.billing.commit({
          reservationId: live.reservation_id,
          userId: live.owner_id,
          credits: 0,
          usageSeconds: Math.ceil(decoded.durationSeconds),
          audioSeconds: Math.max(decoded.durationSeconds, MIN_PRICED_SECONDS),
        });
        result.credits_charged = committed.reservation?.credits ?? 0;
        return { status: 'completed', result, ...(recordingId ? { recordingId } : {}), holdOpen: false };
      });
      if (!ended) throw new Canceled();
      await dropAudio(deps, ended);
    } finally {
      lease.stop();
      await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    }
  }

  private saveRecording(job: JobRow, result: JobResult): Promise<string> {
    const segments = result.segments.map((s) => ({ startSeconds: s.start, endSeconds: s.end, text: s.text, ...(s.speaker ? { speaker: s.speaker } : {}) }));
    const words = wireWordsFromBase64(result.words);
    const transcript = { text: result.text, language: result.language, durationSeconds: result.duration_seconds, segments, words, speakers: result.speakers ?? [] };
    return saveRecording(this.deps.library, job.id, job.owner_id, { save: job.save, title: job.title, folderId: job.folder_id }, transcript, job.created_at);
  }
}

/** A job's stored timeline options as the service checked them at submission. */
function timelineOptionsOfJob(row: JobRow): CheckedTimelineOptions {
  const o = row.timeline_options;
  return {
    words: o.words ?? false,
    diarize: o.diarize ?? false,
    speakersExpected: o.speakers_expected ?? 0,
    keyterms: o.keyterms ?? [],
    redaction: o.redaction ?? null,
  };
}
