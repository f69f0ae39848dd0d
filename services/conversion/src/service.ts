/**
 * The conversion rules, knowing no gRPC: validate, find the transcript (inline, or the
 * caller's own recording through library), reserve credits in billing (which refuses a
 * transcript over the plan's size limit before it holds anything), run the engine, store the artifact on the recording, commit — and on any failure
 * after the reservation, release it, so a failed conversion never costs anything.
 *
 * Validation comes before any charge: an unknown kind or format, an empty transcript, a
 * recording that is not the caller's, or a transcript over the plan's limit is refused with
 * nothing reserved.
 */
import {
  ASK_MAX_PASSAGES,
  ASK_QUESTION_MAX_CHARS,
  checkIdempotencyKey,
  invalidParam,
  isId,
  MAX_INSTRUCTIONS_CHARS,
  MurmurError,
} from '@murmur/contract';
import {
  DEFAULT_HOLD_LEASE_SECONDS,
  holdLapsedError,
  keepReservationHeld,
  newId,
  systemClock,
  type Clock,
  type Logger,
  type PromiseClient,
} from '@murmur/kit';
import { createHash } from 'node:crypto';
import { billing, conversion, library } from '@murmur/proto';
import { passageLine, questionQuery } from './answers';
import type { ConversionEngine, EngineAnswer } from './engines/engine';
import { isKindName, KINDS, unknownKind, type KindName } from './kinds';
import { artifactData } from './artifact-data';
import type { Artifact } from './artifacts';
import { renderArtifact, type OutputFormatName } from './render';

/** The billing RPCs conversion uses. */
export type BillingClient = Pick<PromiseClient<billing.BillingServiceClient>, 'reserve' | 'commit' | 'release' | 'renewReservation'>;
/** The library RPCs conversion uses. */
export type LibraryClient = Pick<PromiseClient<library.LibraryServiceClient>, 'getRecording' | 'addArtifact' | 'searchPassages'>;

/** Default time an engine gets before the conversion fails. */
export const DEFAULT_ENGINE_TIMEOUT_MS = 120_000;

export interface ConversionServiceOptions {
  billing: BillingClient;
  library: LibraryClient;
  engine: ConversionEngine;
  log: Logger;
  clock?: Clock;
  /** Longest an engine may run (MURMUR_CONVERSION_TIMEOUT_MS). */
  engineTimeoutMs?: number;
  /** Lease of the credit hold, renewed while the conversion runs (MURMUR_HOLD_LEASE_SECONDS). */
  leaseSeconds?: number;
}

/**
 * Characters as the plan limit and the price count them: Unicode code points, so an emoji or
 * a CJK character outside the BMP is one character, not two UTF-16 units.
 */
export function countCharacters(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        n -= 1;
        i += 1;
      }
    }
  }
  return n;
}

function formatOf(value: conversion.OutputFormat): OutputFormatName {
  switch (value) {
    case conversion.OutputFormat.OUTPUT_FORMAT_UNSPECIFIED:
    case conversion.OutputFormat.OUTPUT_FORMAT_MARKDOWN:
      return 'markdown';
    case conversion.OutputFormat.OUTPUT_FORMAT_PLAIN:
      return 'plain';
    default:
      throw invalidParam('output_format', 'output_format must be "markdown" (the default) or "plain".');
  }
}

const FORMAT_ENUM: Record<OutputFormatName, conversion.OutputFormat> = {
  markdown: conversion.OutputFormat.OUTPUT_FORMAT_MARKDOWN,
  plain: conversion.OutputFormat.OUTPUT_FORMAT_PLAIN,
};
const LIBRARY_FORMAT: Record<OutputFormatName, library.ArtifactFormat> = {
  markdown: library.ArtifactFormat.ARTIFACT_FORMAT_MARKDOWN,
  plain: library.ArtifactFormat.ARTIFACT_FORMAT_PLAIN,
};

/** Rejects when `signal` aborts first, so an engine that ignores its signal still stops the call. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

interface Source {
  /** What is charged and limited: the transcript as stored or sent. */
  transcript: string;
  /** What the engine reads: the same words, with segment breaks for unpunctuated speech. */
  engineText: string;
  referenceTime: Date;
  recording: library.Recording | null;
}

/** A letter or a digit: a transcript without any has nothing to convert. */
const HAS_WORDS = /[\p{L}\p{N}]/u;

/** Control characters (NUL above all, which Postgres cannot store) become spaces before any engine reads them. */
function withoutControls(text: string): string {
  return text.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g, ' ');
}

/**
 * The text an engine reads for a recording. Speech recognised without punctuation (the
 * offline recogniser writes none) has no sentence ends to split on, but its segments were cut
 * at pauses: one paragraph per segment gives the engine those boundaries instead.
 */
export function recordingText(transcript: library.Transcript): string {
  const turns = speakerTurns(transcript);
  if (turns) return turns;
  const words = transcript.text.split(/\s+/).length;
  const ends = (transcript.text.match(/[.!?](?=\s|$)/g) ?? []).length;
  if (transcript.segments.length < 2 || words <= 60 || ends * 60 >= words) return transcript.text;
  return transcript.segments.map((s) => s.text.trim()).filter(Boolean).join('\n\n');
}

/**
 * A diarized transcript as the labelled lines a meeting transcript has ("Maria: …"), one per
 * speaker turn, so the engines see who said what: the owner of "I will send it" is the speaker's
 * name (issue 32). A speaker not yet named is "Speaker 1", "Speaker 2", …. Null without speakers.
 */
export function speakerTurns(transcript: library.Transcript): string | null {
  const speakers = transcript.timeline?.speakers ?? [];
  if (speakers.length === 0 || !transcript.segments.some((s) => s.speaker)) return null;
  const label = (id: string): string => {
    const named = speakers.find((s) => s.id === id)?.name.replace(/[:\n\r]+/g, ' ').trim();
    return named || `Speaker ${id.replace(/^S/, '')}`;
  };
  const lines: Array<{ speaker: string; text: string }> = [];
  for (const s of transcript.segments) {
    const text = s.text.trim();
    if (!text) continue;
    const last = lines[lines.length - 1];
    if (last && last.speaker === (s.speaker ?? '')) last.text += ` ${text}`;
    else lines.push({ speaker: s.speaker ?? '', text });
  }
  return lines.map((l) => (l.speaker ? `${label(l.speaker)}: ${l.text}` : l.text)).join('\n');
}

/**
 * What a conversion's result depends on, as one digest: billing binds the idempotency key to it,
 * so the key replays only this request (the same source, kind, format, instructions and
 * reference time), never another conversion, and never a transcription.
 */
export function conversionFingerprint(req: conversion.ConvertRequest, kind: KindName, format: OutputFormatName): string {
  const source = req.source ? [req.source.$case, req.source.value] : [];
  const parts = ['convert/1', ...source, kind, format, req.instructions, req.referenceTime?.toISOString() ?? ''];
  return `sha256:${createHash('sha256').update(JSON.stringify(parts)).digest('hex')}`;
}

export class ConversionService {
  private readonly clock: Clock;
  private readonly timeoutMs: number;
  private readonly leaseSeconds: number;

  constructor(private readonly opts: ConversionServiceOptions) {
    this.clock = opts.clock ?? systemClock;
    this.timeoutMs = opts.engineTimeoutMs ?? DEFAULT_ENGINE_TIMEOUT_MS;
    this.leaseSeconds = opts.leaseSeconds ?? DEFAULT_HOLD_LEASE_SECONDS;
  }

  get engineName(): string {
    return this.opts.engine.name;
  }

  listKinds(): conversion.ListKindsResponse {
    return { kinds: KINDS.map((k) => ({ name: k.name, description: k.description })) };
  }

  /** Converts one transcript; `signal` aborts when the caller goes away. */
  async convert(req: conversion.ConvertRequest, signal: AbortSignal): Promise<conversion.ConvertResponse> {
    const started = Date.now();
    const userId = req.userId.trim();
    if (userId === '' || userId.length > 64) throw invalidParam('user_id', 'user_id must be the id of the calling user (usr_…).');
    const kindWord = req.kind.trim().toLowerCase();
    if (!isKindName(kindWord)) throw unknownKind(req.kind);
    const kind: KindName = kindWord;
    const format = formatOf(req.outputFormat);
    if (req.instructions.length > MAX_INSTRUCTIONS_CHARS) {
      throw invalidParam('instructions', `instructions must be at most ${MAX_INSTRUCTIONS_CHARS} characters.`);
    }
    if (req.idempotencyKey !== '') checkIdempotencyKey(req.idempotencyKey, 'idempotency_key');

    const source = await this.source(req, userId);
    // Billing refuses a transcript over the plan's max_transcript_chars (invalid_request, param
    // "transcript") before it holds anything: the plan's limits live there.
    const chars = countCharacters(source.transcript);

    const { reservation, rateLimit, replayed } = await this.opts.billing.reserve({
      userId,
      operation: billing.Operation.OPERATION_CONVERT,
      credits: 0,
      idempotencyKey: req.idempotencyKey || `conversion:${newId('cnv')}`,
      admissionId: req.admissionId,
      audioSeconds: 0,
      transcriptChars: chars,
      // A short lease renewed while the work runs: a killed process's hold returns within it.
      holdSeconds: this.leaseSeconds,
      requestFingerprint: conversionFingerprint(req, kind, format),
    });
    if (!reservation) throw new MurmurError('internal_error', 'internal error');
    // A replay never runs the engine again (it would be work nobody pays for): the stored
    // artifact when there is one, else a clear refusal.
    if (replayed) return this.replay(reservation, source, kind, format);

    const lease = keepReservationHeld(this.opts.billing, { userId, reservationId: reservation.id }, { leaseSeconds: this.leaseSeconds, log: this.opts.log });
    let content: string;
    let data: Record<string, unknown>;
    let artifactId = newId('art');
    let createdAt = this.clock.now();
    try {
      try {
        const artifact = await this.runEngine(
          { transcript: source.engineText, kind, instructions: req.instructions, referenceTime: source.referenceTime },
          AbortSignal.any([signal, lease.signal]),
        );
        content = renderArtifact(artifact, format);
        if (content.trim() === '') throw new Error('the engine produced no text');
        data = artifactData(artifact);
      } catch (err) {
        await this.release(userId, reservation.id, lease.lost ? 'hold lapsed' : 'conversion failed');
        if (lease.lost) throw holdLapsedError();
        this.opts.log.warn({ kind, engine: this.opts.engine.name, chars, reason: (err as Error).message, cancelled: signal.aborted }, 'conversion failed; credits released');
        throw new MurmurError('conversion_failed');
      }

      if (source.recording) {
        try {
          const { artifact } = await this.opts.library.addArtifact({
            ownerId: userId,
            recordingId: source.recording.id,
            kind,
            format: LIBRARY_FORMAT[format],
            content,
            creditsCharged: reservation.credits,
            data,
          });
          if (!artifact) throw new MurmurError('internal_error', 'internal error');
          artifactId = artifact.id;
          createdAt = artifact.createdAt ?? createdAt;
        } catch (err) {
          await this.release(userId, reservation.id, 'artifact could not be stored');
          throw err;
        }
      }
      await this.commitOrRelease(userId, reservation, signal, lease);
    } finally {
      lease.stop();
    }
    this.opts.log.info(
      { kind, format, engine: this.opts.engine.name, chars, credits: reservation.credits, stored: source.recording !== null, ms: Date.now() - started },
      'converted',
    );
    return this.response(artifactId, kind, format, content, data, reservation.credits, source.recording?.id ?? '', createdAt, rateLimit);
  }

  /**
   * Answers a question from the caller's passages (issue 34): search (free), then — only when
   * something was found — reserve like a conversion of the question and the passages the engine
   * reads, run the engine, commit. A failing engine releases the hold (conversion_failed); a
   * question that matches nothing answers so, with nothing reserved or charged.
   */
  async answer(req: conversion.AnswerRequest, signal: AbortSignal): Promise<conversion.AnswerResponse> {
    const started = Date.now();
    const userId = req.userId.trim();
    if (userId === '' || userId.length > 64) throw invalidParam('user_id', 'user_id must be the id of the calling user (usr_…).');
    const question = req.question.trim();
    if (question === '' || !HAS_WORDS.test(question)) throw invalidParam('question', 'question must not be empty: ask something, e.g. "What did we decide about the pricing page?".');
    if (countCharacters(question) > ASK_QUESTION_MAX_CHARS) throw invalidParam('question', `question must be at most ${ASK_QUESTION_MAX_CHARS} characters.`);
    if (req.idempotencyKey !== '') checkIdempotencyKey(req.idempotencyKey, 'idempotency_key');
    const query = questionQuery(question);
    if (query === '') throw invalidParam('question', 'The question has no words to search your library for.');

    let found: library.SearchPassagesResponse;
    try {
      found = await this.opts.library.searchPassages({
        ownerId: userId,
        query,
        page: { limit: ASK_MAX_PASSAGES, cursor: '' },
        sources: req.sources,
        folderId: req.folderId,
        recordingId: req.recordingId,
        createdAfter: req.createdAfter,
        createdBefore: req.createdBefore,
      });
    } catch (err) {
      // The search's `q` is the question here.
      if (err instanceof MurmurError && err.param === 'q') throw invalidParam('question', 'The question has no words to search your library for (only common words such as "what" or "the"): add a distinctive word.');
      throw err;
    }
    const passages = found.passages;
    const id = newId('ans');
    if (passages.length === 0) {
      return { id, answer: 'Nothing in your library matches this question.', mode: this.answerMode(), citedPassageIds: [], passages: [], creditsCharged: 0, engine: this.opts.engine.name, createdAt: this.clock.now(), rateLimit: undefined };
    }
    const numbered = passages.map((p, i) => ({ n: i + 1, title: p.title, text: withoutControls(p.text), start: p.startSeconds ?? null, speaker: p.speakerName || p.speaker }));
    const chars = countCharacters(question) + numbered.reduce((n, p) => n + countCharacters(passageLine(p)) + 1, 0);
    const fingerprint = `sha256:${createHash('sha256')
      .update(JSON.stringify(['ask/1', question, req.sources, req.folderId, req.recordingId, req.createdAfter?.toISOString() ?? '', req.createdBefore?.toISOString() ?? '']))
      .digest('hex')}`;
    const { reservation, rateLimit, replayed } = await this.opts.billing.reserve({
      userId,
      operation: billing.Operation.OPERATION_CONVERT,
      credits: 0,
      idempotencyKey: req.idempotencyKey || `answer:${id}`,
      admissionId: req.admissionId,
      audioSeconds: 0,
      transcriptChars: chars,
      holdSeconds: this.leaseSeconds,
      requestFingerprint: fingerprint,
    });
    if (!reservation) throw new MurmurError('internal_error', 'internal error');
    if (replayed) {
      // An answer is not stored: running the engine again would be work nobody pays for.
      throw new MurmurError(
        'idempotency_conflict',
        reservation.state === billing.ReservationState.RESERVATION_STATE_HELD
          ? 'A question with this Idempotency-Key is still being answered. Retry after it finishes.'
          : 'This Idempotency-Key belongs to a question that was answered and charged; its answer is no longer kept. Use a new key for a new question.',
        { param: 'idempotency_key' },
      );
    }
    const lease = keepReservationHeld(this.opts.billing, { userId, reservationId: reservation.id }, { leaseSeconds: this.leaseSeconds, log: this.opts.log });
    let result: EngineAnswer;
    try {
      try {
        const runSignal = AbortSignal.any([signal, lease.signal, AbortSignal.timeout(this.timeoutMs)]);
        result = await untilAborted(this.opts.engine.answer({ question, passages: numbered, signal: runSignal }), runSignal);
        if (result.answer.trim() === '') throw new Error('the engine produced no text');
      } catch (err) {
        await this.release(userId, reservation.id, lease.lost ? 'hold lapsed' : 'answer failed');
        if (lease.lost) throw holdLapsedError();
        this.opts.log.warn({ engine: this.opts.engine.name, chars, reason: (err as Error).message, cancelled: signal.aborted }, 'answer failed; credits released');
        throw new MurmurError('conversion_failed', 'The answer could not be written; no credits were charged. Try again, or search with GET /search.');
      }
      await this.commitOrRelease(userId, reservation, signal, lease);
    } finally {
      lease.stop();
    }
    this.opts.log.info({ engine: this.opts.engine.name, mode: result.mode, passages: passages.length, chars, credits: reservation.credits, ms: Date.now() - started }, 'answered');
    return {
      id,
      answer: result.answer,
      mode: result.mode === 'generative' ? conversion.AnswerMode.ANSWER_MODE_GENERATIVE : conversion.AnswerMode.ANSWER_MODE_EXTRACTIVE,
      citedPassageIds: result.citations.map((n) => passages[n - 1]!.id),
      passages,
      creditsCharged: reservation.credits,
      engine: this.opts.engine.name,
      createdAt: this.clock.now(),
      rateLimit,
    };
  }

  /** The mode this service's engine answers in (the local engine quotes; the LLM engines write). */
  private answerMode(): conversion.AnswerMode {
    return this.opts.engine.name === 'local' ? conversion.AnswerMode.ANSWER_MODE_EXTRACTIVE : conversion.AnswerMode.ANSWER_MODE_GENERATIVE;
  }

  /** The transcript to convert and the time its relative dates are read against. */
  private async source(req: conversion.ConvertRequest, userId: string): Promise<Source> {
    const given = req.referenceTime && !Number.isNaN(req.referenceTime.getTime()) ? req.referenceTime : null;
    const src = req.source;
    if (!src) throw invalidParam('transcript', 'Send the transcript to convert, or the recording_id of a recording with a transcript.');
    if (src.$case === 'transcript') {
      if (src.value.trim() === '') throw invalidParam('transcript', 'The transcript is empty. Send the text to convert.');
      if (!HAS_WORDS.test(src.value)) throw invalidParam('transcript', 'The transcript has no words to convert.');
      return { transcript: src.value, engineText: withoutControls(src.value), referenceTime: given ?? this.clock.now(), recording: null };
    }
    const recordingId = src.value.trim();
    if (!isId('rec', recordingId)) throw new MurmurError('not_found', 'No recording with this id. Check the id.', { param: 'recording_id' });
    const { recording } = await this.opts.library.getRecording({ ownerId: userId, recordingId, includeWords: false });
    if (!recording) throw new MurmurError('not_found', 'No recording with this id. Check the id.', { param: 'recording_id' });
    const transcript = recording.transcript?.text ?? '';
    if (transcript.trim() === '') {
      throw invalidParam('recording_id', 'This recording has no transcript yet. Transcribe it first, or send the transcript itself.');
    }
    if (!HAS_WORDS.test(transcript)) throw invalidParam('recording_id', 'This recording\'s transcript has no words to convert.');
    return { transcript, engineText: withoutControls(recordingText(recording.transcript!)), referenceTime: given ?? recording.createdAt ?? this.clock.now(), recording };
  }

  private async runEngine(input: { transcript: string; kind: KindName; instructions: string; referenceTime: Date }, callerSignal: AbortSignal): Promise<Artifact> {
    const signal = AbortSignal.any([callerSignal, AbortSignal.timeout(this.timeoutMs)]);
    const artifact = await untilAborted(this.opts.engine.convert({ ...input, signal }), signal);
    if (artifact?.kind !== input.kind) throw new Error(`the engine produced ${String(artifact?.kind)}, not ${input.kind}`);
    return artifact;
  }

  /**
   * The answer to a replayed idempotency key (the same request, still held or committed, billing
   * says): the artifact it stored on the recording when it completed; otherwise a refusal, since
   * running the engine again would be work nobody pays for.
   */
  private replay(reservation: billing.Reservation, source: Source, kind: KindName, format: OutputFormatName): conversion.ConvertResponse {
    const State = billing.ReservationState;
    if (reservation.state === State.RESERVATION_STATE_HELD) {
      throw new MurmurError('idempotency_conflict', 'A conversion with this Idempotency-Key is still running. Retry after it finishes.', { param: 'idempotency_key' });
    }
    // Committed (billing replays no key whose call failed: that key is free again).
    if (source.recording) {
      const stored = this.storedArtifact(source.recording, kind, format);
      if (stored) return this.response(stored.id, kind, format, stored.content, stored.data, stored.creditsCharged, source.recording.id, stored.createdAt ?? this.clock.now(), undefined);
    }
    throw new MurmurError(
      'idempotency_conflict',
      'This Idempotency-Key belongs to a conversion that completed and was charged; its response is no longer kept. Use a new key for a new conversion.',
      { param: 'idempotency_key' },
    );
  }

  /** The newest artifact of this kind and format on the recording (a replayed, committed key). */
  private storedArtifact(recording: library.Recording, kind: KindName, format: OutputFormatName): library.Artifact | undefined {
    return recording.artifacts
      .filter((a) => a.kind === kind && a.format === LIBRARY_FORMAT[format])
      .sort((a, b) => (b.createdAt?.getTime() ?? 0) - (a.createdAt?.getTime() ?? 0))[0];
  }

  /** Best effort: a release that fails leaves a hold that billing expires by itself. */
  /**
   * Charges a finished conversion. A commit that fails as service_unavailable may still have
   * landed (billing's database went away between its COMMIT and the answer), so it is retried —
   * billing's commit is idempotent — for up to half the hold's lease, while the lease keeps the
   * hold alive, and while the caller waits: once billing answers, the caller gets the artifact and
   * is charged exactly once.
   * Only after that is the conversion refused as unavailable and its hold released, so a 503
   * never comes with a charge unless billing stayed unreachable longer than that.
   */
  private async commit(userId: string, reservationId: string, credits: number, signal: AbortSignal): Promise<void> {
    const deadline = Date.now() + (this.leaseSeconds * 1000) / 2;
    for (let pause = 200; ; pause = Math.min(pause * 2, 2_000)) {
      try {
        await this.opts.billing.commit({ reservationId, userId, credits, usageSeconds: 0, audioSeconds: 0 });
        return;
      } catch (err) {
        if (!(err instanceof MurmurError && err.code === 'service_unavailable') || signal.aborted || Date.now() + pause >= deadline) throw err;
        this.opts.log.warn({ reservation_id: reservationId, err: err.message }, 'commit failed; retrying (it is idempotent)');
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }

  /** Charges the finished work; a commit that fails releases the hold (not charged) and fails the call. */
  private async commitOrRelease(userId: string, reservation: billing.Reservation, signal: AbortSignal, lease: { lost: boolean }): Promise<void> {
    try {
      await this.commit(userId, reservation.id, reservation.credits, signal);
    } catch (err) {
      // Not charged: the hold is released here or expires on its own.
      await this.release(userId, reservation.id, 'commit failed');
      throw lease.lost ? holdLapsedError() : err;
    }
  }

  private async release(userId: string, reservationId: string, reason: string): Promise<void> {
    try {
      await this.opts.billing.release({ reservationId, userId, reason });
    } catch (err) {
      this.opts.log.error({ reservation_id: reservationId, err: (err as Error).message }, 'release failed; the hold will expire');
    }
  }

  private response(
    id: string,
    kind: KindName,
    format: OutputFormatName,
    content: string,
    data: Record<string, unknown> | undefined,
    credits: number,
    recordingId: string,
    createdAt: Date,
    rateLimit: billing.RateLimitState | undefined,
  ): conversion.ConvertResponse {
    return { id, kind, format: FORMAT_ENUM[format], content, data, creditsCharged: credits, recordingId, createdAt, engine: this.opts.engine.name, rateLimit };
  }
}
