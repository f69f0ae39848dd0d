/**
 * The transcription pipeline, one call at a time: spool the upload to a temp file (size limit
 * enforced while it streams) → decode it with ffmpeg to 16 kHz mono PCM on disk while the
 * silence chunker cuts ≤ 30 s pieces → the exact duration is known, so billing reserves the
 * exact price → the pieces become the engine's chunks (plan.ts: silence skipped, joined up to
 * the engine's longest chunk) → recognised in parallel (bounded by the cores, shared by every
 * call) → stitched → billing commits. Any failure after the reservation releases it; a client
 * that goes away kills ffmpeg and the engines and releases too. The temp folder is removed
 * whatever happens. Memory does not depend on the size of the upload.
 *
 * Logs carry ids, sizes, durations and timings — never audio or transcript text.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { AUTO_LANGUAGE, isLanguageOption, MAX_AUDIO_BYTES, MAX_DIARIZED_SECONDS, MurmurError, type Timeline } from '@murmur/contract';
import {
  DEFAULT_HOLD_LEASE_SECONDS,
  holdLapsedError,
  keepReservationHeld,
  type HoldLease,
  newId,
  type Logger,
  type PromiseClient,
} from '@murmur/kit';
import { billing, type transcription } from '@murmur/proto';
import { spoolUpload, UndecodableAudioError } from './audio-files';
import { capabilitiesOf, type SpeechEngine } from './engines/engine';
import { BYTES_PER_SECOND } from './pcm';
import type { ChunkRange } from './chunker';
import { decodeAndCut, recognizeChunks, type DecodedAudio, type RecognizeChunksOptions } from './pipeline';
import { FIRST_HOLD_SECONDS, PaidAudio } from './paid-audio';
import { checkSaveOptions, saveRecording, takeBackRecording, type LibraryPort, type SaveOptions } from './saving';
import { PIECE_SECONDS, planRecognition } from './plan';
import { Semaphore } from './pool';
import type { StitchedTranscript } from './stitch';
import { checkTimelineOptions, type CheckedTimelineOptions, type DiarizationPort } from './timeline-options';
import { timelineOf, timelineToResponse } from './timeline';
import { assignSpeakers } from './diarization/assign-speakers';
import { redactTimeline } from './redaction/redact-timeline';

/** The billing RPCs a transcription uses. */
export type BillingPort = Pick<PromiseClient<billing.BillingServiceClient>, 'reserve' | 'commit' | 'release' | 'renewReservation' | 'extendReservation'>;

/**
 * Longest audio decoded: 12 hours (1.4 GB of PCM on disk). 500 MB of low-bitrate Opus can
 * hold days of audio; without this bound one upload could fill the temp disk.
 */
export const DEFAULT_MAX_AUDIO_SECONDS = 12 * 60 * 60;

export interface TranscriptionServiceOptions {
  billing: BillingPort;
  engine: SpeechEngine;
  log: Logger;
  /** Parent of each call's temp folder (default the OS temp dir). */
  tmpDir?: string;
  /** Chunks recognised at once across all calls (default: the number of CPUs). */
  concurrency?: number;
  /** What ListEngines reports (default: just the active engine). */
  engines?: transcription.Engine[];
  ffmpegPath?: string;
  /** Longest decoded audio accepted (default {@link DEFAULT_MAX_AUDIO_SECONDS}). */
  maxAudioSeconds?: number;
  /** Lease of the credit hold, renewed while the call runs (MURMUR_HOLD_LEASE_SECONDS). */
  leaseSeconds?: number;
  /** Where `save: true` stores a transcript (saving.ts); without it such a call is refused. */
  library?: LibraryPort;
  /** Who finds speakers (`diarize`); without it such a call is refused, naming what is missing. */
  diarization?: DiarizationPort;
}

/** Saving options that followed the audio (TranscribeLateOptions): their final values. */
export type TranscribeLateOptions = transcription.TranscribeLateOptions;

/** A call's config message, as ts-proto decodes it. */
export type TranscribeConfig = transcription.TranscribeConfig;

export interface CallSignal {
  /** Aborted when the client cancels or the deadline passes. */
  signal: AbortSignal;
}

export class TranscriptionService {
  private readonly semaphore: Semaphore;
  private readonly concurrency: number;
  private readonly tmpDir: string;

  constructor(private readonly opts: TranscriptionServiceOptions) {
    this.concurrency = Math.max(1, Math.floor(opts.concurrency ?? os.availableParallelism()));
    this.semaphore = new Semaphore(this.concurrency);
    this.tmpDir = opts.tmpDir ?? os.tmpdir();
  }

  listEngines(): transcription.ListEnginesResponse {
    const { engine } = this.opts;
    const engines = this.opts.engines ?? [{ name: engine.name, model: engine.model, available: true, detail: '', capabilities: capabilitiesOf(engine) }];
    return { engines, active: engine.name };
  }

  /** The active engine, e.g. "pocketsphinx/en-us" (what a result's `model` says). */
  get model(): string {
    return `${this.opts.engine.name}/${this.opts.engine.model}`;
  }

  /** Longest decoded audio accepted, in seconds. */
  get maxAudioSeconds(): number {
    return this.opts.maxAudioSeconds ?? DEFAULT_MAX_AUDIO_SECONDS;
  }

  /** The engine's chunks for decoded pieces (the plan a job stores, so a resumed job keeps it). */
  plan(pieces: DecodedAudio['pieces']): ChunkRange[] {
    return planRecognition(pieces, { maxChunkSeconds: this.opts.engine.maxChunkSeconds ?? PIECE_SECONDS, concurrency: this.concurrency });
  }

  /** Recognises `chunks` of the PCM on this process's shared engine slots (see pipeline.ts recognizeChunks). */
  recognize(
    chunks: ReadonlyArray<Pick<ChunkRange, 'startByte' | 'endByte'>>,
    pcmFile: string,
    dir: string,
    opts: { language: string; signal: AbortSignal } & Pick<RecognizeChunksOptions, 'done' | 'onChunk' | 'keyterms'>,
  ): Promise<{ transcript: StitchedTranscript; language: string }> {
    // "auto" is the engine's to decide: it gets no hint.
    const language = opts.language === AUTO_LANGUAGE ? '' : opts.language;
    return recognizeChunks(chunks, pcmFile, dir, { engine: this.opts.engine, semaphore: this.semaphore, limit: this.concurrency, ...opts, language });
  }

  /** The timeline options of a call, checked before anything is read or held (timeline-options.ts). */
  checkTimeline(config: Pick<TranscribeConfig, 'timeline'>): Promise<CheckedTimelineOptions> {
    return checkTimelineOptions(this.opts.engine, config.timeline, this.opts.diarization);
  }

  /**
   * A recognised transcript as the timeline a call answers and stores: with `diarize`, who
   * speaks when (in the decoded PCM) put on its words and segments.
   */
  async finishTimeline(transcript: StitchedTranscript, options: CheckedTimelineOptions, pcmFile: string, signal: AbortSignal): Promise<Timeline> {
    let timeline = timelineOf(transcript);
    if (options.diarize) {
      if (!this.opts.diarization) throw new Error('diarize was accepted without a diarizer');
      const turns = await this.opts.diarization.diarize(pcmFile, { speakersExpected: options.speakersExpected, signal });
      timeline = assignSpeakers(timeline, turns);
    }
    // Last, on the whole transcript (the numbered style counts values across all of it); what
    // leaves this function — answered, stored, captioned — is the redacted timeline only.
    if (options.redaction) timeline = redactTimeline(timeline, options.redaction).timeline;
    return timeline;
  }

  /** `diarize` on audio longer than {@link MAX_DIARIZED_SECONDS}: refused once its length is known (the hold is released). */
  checkDiarizedLength(options: CheckedTimelineOptions, durationSeconds: number): void {
    if (options.diarize && durationSeconds > MAX_DIARIZED_SECONDS) {
      throw new MurmurError('audio_too_large', `Speaker diarization takes at most ${MAX_DIARIZED_SECONDS / 3600} hours of audio; this is longer. Send it without \`diarize\`, or in parts.`, { param: 'diarize' });
    }
  }

  tooLong(): MurmurError {
    const seconds = this.opts.maxAudioSeconds ?? DEFAULT_MAX_AUDIO_SECONDS;
    const round = (n: number) => Math.round(n * 10) / 10;
    const limit = seconds >= 3600 ? `${round(seconds / 3600)} hours` : seconds >= 60 ? `${round(seconds / 60)} minutes` : `${seconds} seconds`;
    return new MurmurError('audio_too_large', `The audio is longer than ${limit}. Split it into shorter files.`, { param: 'audio' });
  }

  /** The library client saving needs; a call asking to save without one is refused before anything runs (checkSaving). */
  private library(): LibraryPort {
    if (!this.opts.library) throw new MurmurError('service_unavailable', 'Saving transcripts is not enabled on this replica; send the request without save.');
    return this.opts.library;
  }

  /** The saving options, checked before anything is held (saving.ts). */
  private async checkSaving(o: SaveOptions & { userId: string }, mode: 'full' | 'partial'): Promise<void> {
    if (!o.save && !o.title && !o.folderId) return;
    await checkSaveOptions(this.library(), o.userId, o, mode);
  }

  /** Validates the config message before any audio is read. */
  validate(config: Pick<TranscribeConfig, 'userId' | 'maxBytes' | 'language'>): void {
    if (!config.userId) throw new MurmurError('invalid_request', 'user_id is required.', { param: 'user_id' });
    if (config.maxBytes < 0) throw new MurmurError('invalid_request', 'max_bytes must not be negative.', { param: 'max_bytes' });
    // Kit's rule: the one the gateway checks and the library stores by; "auto" detects.
    if (!isLanguageOption(config.language)) {
      throw new MurmurError('invalid_request', 'language must be a language code such as "en" or "en-US", or "auto".', { param: 'language' });
    }
    const { engine } = this.opts;
    if (config.language && config.language !== AUTO_LANGUAGE && engine.supportsLanguage && !engine.supportsLanguage(config.language)) {
      throw new MurmurError('invalid_request', `The ${engine.name} engine does not recognise language "${config.language}". Omit language or send "en".`, {
        param: 'language',
      });
    }
  }

  /**
   * `lateOptions`: the saving options that followed the audio, if any (read once the audio has
   * ended); they replace the config's and are checked again before anything is held.
   */
  async transcribe(
    config: TranscribeConfig,
    audio: AsyncIterable<Uint8Array>,
    call: CallSignal,
    lateOptions: () => TranscribeLateOptions | undefined = () => undefined,
  ): Promise<transcription.TranscribeResponse> {
    this.validate(config);
    let timelineOptions = await this.checkTimeline(config);
    // What is known now is refused now, before the upload is read.
    await this.checkSaving(config, 'partial');
    const { log, engine } = this.opts;
    const id = newId('trn');
    const started = Date.now();
    const dir = await mkdtemp(path.join(this.tmpDir, 'murmur-trn-'));
    try {
      const uploadFile = path.join(dir, `upload${safeExtension(config.filename)}`);
      const audioHash = createHash('sha256');
      const uploadBytes = await spoolUpload(audio, uploadFile, audioLimitOf(config), audioHash);
      const late = lateOptions();
      const saving: SaveOptions = late ? { save: late.save, title: late.title, folderId: late.folderId } : { save: config.save, title: config.title, folderId: config.folderId };
      await this.checkSaving({ userId: config.userId, ...saving }, 'full');
      // Timeline options that followed the audio replace the config's, checked before anything is held.
      if (late?.timeline) timelineOptions = await this.checkTimeline({ timeline: late.timeline });
      call.signal.throwIfAborted();

      // Held once ffmpeg yields its first PCM (undecodable bytes hold nothing): one priced
      // minute, extended as the decoded audio grows (paid-audio.ts), so a file whose header lies,
      // or hours of silence, is decoded only as far as the caller can pay for.
      const leaseSeconds = this.opts.leaseSeconds ?? DEFAULT_HOLD_LEASE_SECONDS;
      const fingerprint = transcriptionFingerprint(config, saving, audioHash.digest('hex'), timelineOptions);
      let reservation: billing.Reservation | undefined;
      let lease: HoldLease | undefined;
      const leaseLost = new AbortController();
      const paid = PaidAudio.opening(this.opts.billing, config.userId, this.maxAudioSeconds, async () => {
        const { reservation: made, replayed } = await this.opts.billing.reserve({
          userId: config.userId,
          operation: billing.Operation.OPERATION_TRANSCRIBE,
          credits: 0,
          // A caller without an Idempotency-Key still gets one reservation per call.
          idempotencyKey: config.idempotencyKey || id,
          admissionId: config.admissionId,
          audioSeconds: FIRST_HOLD_SECONDS,
          transcriptChars: 0,
          // A short lease renewed while the work runs: a killed process's hold returns within it.
          holdSeconds: leaseSeconds,
          requestFingerprint: fingerprint,
        });
        if (!made) throw new Error('billing answered Reserve without a reservation');
        // The same request again: recognising it again would be work nobody pays for.
        if (replayed) throw replayRefusal(made);
        reservation = made;
        lease = keepReservationHeld(this.opts.billing, { userId: config.userId, reservationId: made.id }, { leaseSeconds, log });
        lease.signal.addEventListener('abort', () => leaseLost.abort(lease?.signal.reason), { once: true });
        return made;
      });
      const release = async (reason: string) => {
        if (!reservation) return;
        try {
          await this.opts.billing.release({ userId: config.userId, reservationId: reservation.id, reason });
          log.info({ transcription_id: id, reservation_id: reservation.id, reason }, 'reservation released');
        } catch (err) {
          // Billing expires the hold by itself after hold_seconds; log and carry on.
          log.error({ transcription_id: id, reservation_id: reservation.id, reason, err: (err as Error).message }, 'release failed');
        }
      };

      let duration = 0;
      let recordingId = '';
      let chunks: ChunkRange[] = [];
      let decodedAt = started;
      let recognized: { transcript: StitchedTranscript; language: string };
      let timeline: Timeline;
      let charged: number;
      let recognizedAt = decodedAt;
      try {
        const signal = AbortSignal.any([call.signal, leaseLost.signal]);
        try {
          const decoded = await this.decode(uploadFile, dir, signal, id, paid);
          duration = decoded.durationSeconds;
          this.checkDiarizedLength(timelineOptions, duration);
          chunks = this.plan(decoded.pieces);
          decodedAt = Date.now();
          log.info(
            { transcription_id: id, upload_bytes: uploadBytes, duration_seconds: duration, pieces: decoded.pieces.length, chunks: chunks.length, decode_ms: decodedAt - started },
            'audio decoded',
          );
          recognized = await this.recognize(chunks, decoded.pcmFile, dir, { language: config.language, signal, keyterms: timelineOptions.keyterms });
          timeline = await this.finishTimeline(recognized.transcript, timelineOptions, decoded.pcmFile, signal);
          recognizedAt = Date.now();
        } catch (err) {
          if (call.signal.aborted) {
            await release('cancelled');
            throw err;
          }
          if (lease?.lost) {
            await release('hold_lapsed');
            throw holdLapsedError();
          }
          if (err instanceof MurmurError) {
            // Undecodable, too long, more than the credits pay for, a reused key: the caller's to mend.
            await release(err.code);
            throw err;
          }
          await release('engine_failed');
          log.error({ transcription_id: id, engine: engine.name, err: (err as Error).message }, 'engine failed');
          throw new MurmurError('transcription_failed');
        }
        if (!reservation) throw new Error('decoded audio without a hold');
        if (saving.save) {
          try {
            // Stored before the charge: a saved transcript is always a charged one (saving.ts).
            recordingId = await saveRecording(this.library(), id, config.userId, saving, { ...this.response(id, timeline, recognized.language, config.language, duration, 0), durationSeconds: duration }, new Date());
          } catch (err) {
            await release('recording_not_stored');
            throw err;
          }
        }
        try {
          // The decoded length is what is charged, at the rate the hold was made at.
          const committed = await this.opts.billing.commit({
            userId: config.userId,
            reservationId: reservation.id,
            credits: 0,
            usageSeconds: Math.ceil(duration),
            audioSeconds: Math.max(duration, MIN_PRICED_SECONDS),
          });
          charged = committed.reservation?.credits ?? reservation.credits;
        } catch (err) {
          if (recordingId) await takeBackRecording(this.library(), log, config.userId, recordingId, { transcription_id: id });
          await release('commit_failed');
          throw lease?.lost ? holdLapsedError() : err;
        }
      } finally {
        lease?.stop();
      }

      log.info(
        {
          transcription_id: id,
          reservation_id: reservation?.id,
          duration_seconds: duration,
          chunks: chunks.length,
          segments: timeline.segments.length,
          words: timeline.words.length,
          characters: timeline.text.length,
          credits: charged,
          recognize_ms: recognizedAt - decodedAt,
          total_ms: Date.now() - started,
          saved: recordingId !== '',
        },
        'transcribed',
      );
      return this.response(id, timeline, recognized.language, config.language, duration, charged, recordingId);
    } catch (err) {
      if (call.signal.aborted && !(err instanceof MurmurError)) {
        log.info({ transcription_id: id }, 'cancelled by the client');
        throw new MurmurError('service_unavailable', 'The call was cancelled.');
      }
      throw err;
    } finally {
      await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    }
  }

  /**
   * Transcribe's answer for a recognised transcript (a job's result is the same). `reported`: the
   * language the engine recognised ("" when it says none); `requested`: the one asked for.
   */
  response(id: string, timeline: Timeline, reported: string, requested: string, duration: number, charged: number, recordingId = ''): transcription.TranscribeResponse {
    return {
      id,
      ...timelineToResponse(timeline),
      language: reported || normalizeLanguage(requested === AUTO_LANGUAGE ? '' : requested),
      durationSeconds: Math.round(duration * 1000) / 1000,
      model: this.model,
      creditsCharged: charged,
      recordingId,
    };
  }

  /**
   * ffmpeg → PCM on disk, cutting pieces on the way; undecodable → unsupported_audio. With
   * `paid`, decoding goes only as far as the credit hold pays for (see paid-audio.ts).
   */
  async decode(uploadFile: string, dir: string, signal: AbortSignal, id: string, paid?: PaidAudio): Promise<DecodedAudio> {
    try {
      return await decodeAndCut(uploadFile, dir, {
        signal,
        maxPcmBytes: (this.opts.maxAudioSeconds ?? DEFAULT_MAX_AUDIO_SECONDS) * BYTES_PER_SECOND,
        tooLong: () => this.tooLong(),
        ...(this.opts.ffmpegPath ? { ffmpegPath: this.opts.ffmpegPath } : {}),
        ...(paid ? { paid: (bytes: number) => paid.cover(bytes) } : {}),
      });
    } catch (err) {
      if (err instanceof UndecodableAudioError) {
        this.opts.log.info({ transcription_id: id, reason: err.message }, 'audio could not be decoded');
        throw new MurmurError('unsupported_audio', undefined, { param: 'audio' });
      }
      throw err;
    }
  }
}

/**
 * The most bytes of audio a call may send: DESIGN.md §3's 500 MB — kit's MAX_AUDIO_BYTES
 * (decimal), the limit the gateway applies — or a smaller max_bytes the caller asks for. A
 * direct gRPC caller meets the same limit as the gateway's: a larger max_bytes does not raise it.
 */
export function audioLimitOf(config: Pick<TranscribeConfig, 'maxBytes'>): number {
  return config.maxBytes > 0 ? Math.min(config.maxBytes, MAX_AUDIO_BYTES) : MAX_AUDIO_BYTES;
}

/**
 * Decoded audio shorter than this is priced as this much: a commit by audio needs a positive
 * length, and any audio at all costs the first priced minute (billing's minimum of one credit).
 */
const MIN_PRICED_SECONDS = 0.001;

/**
 * What a transcription's result depends on, as one digest: the audio's bytes, the language asked
 * for and where it is saved. Billing binds the idempotency key to it, so the key replays only this request —
 * never other audio, and never a conversion or a job.
 */
export function transcriptionFingerprint(config: Pick<TranscribeConfig, 'language'>, saving: SaveOptions, audioSha256: string, options: CheckedTimelineOptions): string {
  const parts = ['transcribe/2', config.language, saving.save, saving.title, saving.folderId, audioSha256, options.words, options.diarize, options.speakersExpected, options.keyterms, options.redaction];
  return `sha256:${createHash('sha256').update(JSON.stringify(parts)).digest('hex')}`;
}

/**
 * Why a replayed idempotency key gets no transcript: the request's first call still runs (its
 * hold is held), or it completed and was charged (its response is kept by the caller that made it,
 * the gateway, not here). A key whose call failed is free again: billing does not replay it.
 */
export function replayRefusal(reservation: billing.Reservation): MurmurError {
  const message =
    reservation.state === billing.ReservationState.RESERVATION_STATE_HELD
      ? 'A transcription with this Idempotency-Key is still running. Retry after it finishes.'
      : 'This Idempotency-Key belongs to a transcription that completed and was charged; its response is no longer kept. Use a new key for a new transcription.';
  return new MurmurError('idempotency_conflict', message, { param: 'idempotency_key' });
}

/** "en-US" → "en": the response carries ISO 639-1 like the engines report. */
function normalizeLanguage(language: string): string {
  return (language.split(/[-_]/)[0] ?? '').toLowerCase();
}

/** The upload keeps a short alphanumeric extension of the original name, a hint for ffmpeg's probe. */
export function safeExtension(filename: string): string {
  const m = /\.([A-Za-z0-9]{1,8})$/.exec(filename);
  return m ? `.${m[1]!.toLowerCase()}` : '';
}
