/**
 * One live stream (StreamTranscription, docs/live.md), from its config to its `closed`:
 *  1. the config is checked (format, language, saving) and one of the user's
 *     {@link MAX_LIVE_STREAMS_PER_USER} stream slots taken, before anything is held;
 *  2. the first minute is held (live-hold.ts), the recognizer started, `opened` answered;
 *  3. audio flows client → decoder (live-audio.ts) → recognizer, whose events are answered as
 *     they come; each block of PCM is checked against the hold, the pace (at most
 *     {@link LIVE_MAX_SPEED}× real time) and the longest stream; an utterance running past
 *     {@link LIVE_MAX_UTTERANCE_SECONDS} is finalized there;
 *  4. the end — the client's CLOSE or half-close, or a limit reached — flushes the last
 *     utterance, saves the finals (save), commits the seconds received and answers `closed`
 *     (or, after a limit, the limit's error, everything before it final and charged).
 * A stream whose caller vanished (cancelled) or whose recognizer failed keeps what was final
 * (saved when asked), and is charged for the audio its answered words cover — finals and
 * partials alike, so cancelling before each final gets no words free — no more.
 */
import {
  LIVE_DEFAULT_SAMPLE_RATE,
  LIVE_MAX_SAMPLE_RATE,
  LIVE_MAX_SECONDS,
  LIVE_MIN_SAMPLE_RATE,
  LIVE_MAX_SPEED,
  LIVE_MAX_UTTERANCE_SECONDS,
  LIVE_SPEED_ALLOWANCE_SECONDS,
  MurmurError,
  type LiveEncoding,
} from '@murmur/contract';
import { newId, type Logger } from '@murmur/kit';
import { transcription } from '@murmur/proto';
import type { CallerLimits } from '../caller-limits';
import { EngineError, type SpeechEngine } from '../engines/engine';
import { segmentsFromWords } from '../engines/words';
import { BYTES_PER_SECOND } from '../pcm';
import { checkSaveOptions, saveRecording, type LibraryPort } from '../saving';
import type { BillingPort } from '../service';
import { EventChannel } from './event-channel';
import { openLiveAudio, type LiveAudio } from './live-audio';
import { LiveHold } from './live-hold';
import type { LiveEvent, LiveRecognizer, LiveWord } from './live-events';

type Request = transcription.StreamTranscriptionRequest;
type Response = transcription.StreamTranscriptionResponse;

export interface LiveDeps {
  billing: BillingPort;
  engine: SpeechEngine;
  limits: CallerLimits;
  log: Logger;
  /** "pocketsphinx/en-us": what `opened` names. */
  model: string;
  /** Lease of the credit hold (MURMUR_HOLD_LEASE_SECONDS). */
  leaseSeconds: number;
  library?: LibraryPort;
  ffmpegPath?: string;
  /** Clock of the pace check (ms). */
  now?: () => number;
  /** Default {@link LIVE_MAX_UTTERANCE_SECONDS}. */
  maxUtteranceSeconds?: number;
}

const ENCODINGS: Record<number, LiveEncoding | undefined> = {
  [transcription.AudioEncoding.AUDIO_ENCODING_LINEAR16]: 'linear16',
  [transcription.AudioEncoding.AUDIO_ENCODING_WEBM]: 'webm',
  [transcription.AudioEncoding.AUDIO_ENCODING_OGG]: 'ogg',
};

/** Why a stream stops taking audio before its client asked it to. */
class Stop {
  constructor(readonly error: MurmurError) {}
}

/** The stream's words, kept as they become final (what a save stores). */
interface Finals {
  words: LiveWord[];
  /**
   * How far the words answered reach into the audio — finals, and partials too: a partial is
   * recognised text delivered, so a caller that cancels before the final still pays for it.
   */
  endSeconds: number;
}

function wordsMessage(words: readonly LiveWord[]): transcription.FinalTranscript['words'] {
  return {
    text: words.map((w) => w.text),
    startMs: words.map((w) => Math.round(w.start * 1000)),
    endMs: words.map((w) => Math.round(w.end * 1000)),
    // The contract's Words: an empty list when the engine gives no confidences (read as null).
    confidence: words.every((w) => w.confidence !== null) ? words.map((w) => w.confidence!) : [],
    speaker: [],
  };
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

/** The answer of one recognizer event. */
function responseOf(event: LiveEvent): Response {
  switch (event.type) {
    case 'speech_started':
      return { event: { $case: 'speechStarted', value: { atSeconds: round3(event.at) } } };
    case 'partial':
      return { event: { $case: 'partial', value: { text: event.text, startSeconds: round3(event.start), endSeconds: round3(event.end) } } };
    case 'final':
      return {
        event: {
          $case: 'finalTranscript',
          value: { text: event.words.map((w) => w.text).join(' '), startSeconds: round3(event.start), endSeconds: round3(event.end), words: wordsMessage(event.words) },
        },
      };
    case 'utterance_end':
      return { event: { $case: 'utteranceEnd', value: { atSeconds: round3(event.at) } } };
  }
}

export class LiveSessions {
  constructor(private readonly deps: LiveDeps) {}

  /** The config, checked before anything is held. */
  private async check(config: transcription.StreamTranscriptionConfig): Promise<{ encoding: LiveEncoding; sampleRate: number }> {
    const { engine, library } = this.deps;
    if (!config.userId) throw new MurmurError('invalid_request', 'user_id is required.', { param: 'user_id' });
    const encoding = ENCODINGS[config.encoding];
    if (!encoding) throw new MurmurError('invalid_request', 'encoding must be LINEAR16, WEBM or OGG.', { param: 'encoding' });
    const sampleRate = config.sampleRate || LIVE_DEFAULT_SAMPLE_RATE;
    if (encoding === 'linear16' && (sampleRate < LIVE_MIN_SAMPLE_RATE || sampleRate > LIVE_MAX_SAMPLE_RATE)) {
      throw new MurmurError('invalid_request', `sample_rate must be from ${LIVE_MIN_SAMPLE_RATE} to ${LIVE_MAX_SAMPLE_RATE}.`, { param: 'sample_rate' });
    }
    if (!engine.startLive) {
      throw new MurmurError('service_unavailable', `Live transcription needs an engine that decodes as audio arrives; this server runs ${engine.name}, which does not. Use POST /transcribe.`);
    }
    if (config.language && engine.supportsLanguage && !engine.supportsLanguage(config.language)) {
      throw new MurmurError('invalid_request', `The ${engine.name} engine does not recognise language "${config.language}". Omit language or send "en".`, { param: 'language' });
    }
    if (config.save || config.title || config.folderId) {
      if (!library) throw new MurmurError('service_unavailable', 'Saving transcripts is not enabled on this replica; open the stream without save.');
      await checkSaveOptions(library, config.userId, { save: config.save, title: config.title, folderId: config.folderId }, 'full');
    }
    return { encoding, sampleRate };
  }

  /** Runs one stream: `requests` after its config, answers as they come (see the file comment). */
  async *run(requests: AsyncIterable<Request>, signal: AbortSignal): AsyncGenerator<Response> {
    const { deps } = this;
    const it = requests[Symbol.asyncIterator]();
    const first = await it.next();
    if (first.done || first.value.payload?.$case !== 'config') {
      throw new MurmurError('invalid_request', 'The first message of a StreamTranscription stream must be the config.', { param: 'config' });
    }
    const config = first.value.payload.value;
    const format = await this.check(config);
    const slot = await deps.limits.liveStream(config.userId);
    const id = newId('trn');
    const log = deps.log.child({ transcription_id: id, live: true });
    try {
      const hold = await LiveHold.open(deps.billing, { userId: config.userId, id, admissionId: config.admissionId, leaseSeconds: deps.leaseSeconds, maxSeconds: LIVE_MAX_SECONDS, log });
      yield* this.stream(config, format, it, hold, id, log, AbortSignal.any([signal, hold.lapsed]), signal);
    } finally {
      await slot.release().catch(() => undefined);
    }
  }

  private async *stream(
    config: transcription.StreamTranscriptionConfig,
    format: { encoding: LiveEncoding; sampleRate: number },
    it: AsyncIterator<Request>,
    hold: LiveHold,
    id: string,
    log: Logger,
    signal: AbortSignal,
    callSignal: AbortSignal,
  ): AsyncGenerator<Response> {
    const { deps } = this;
    const now = deps.now ?? Date.now;
    const out = new EventChannel<Response>();
    const finals: Finals = { words: [], endSeconds: 0 };
    const started = now();
    let receivedBytes = 0;
    let firstAudioAt: number | undefined;
    let stop: Stop | undefined;
    /** Where the utterance being spoken started (audio seconds), while one is. */
    let utteranceFrom: number | undefined;
    const work = new AbortController();
    const workSignal = AbortSignal.any([signal, work.signal]);

    let recognizer: LiveRecognizer;
    try {
      recognizer = await deps.engine.startLive!({
        signal: workSignal,
        language: config.language,
        onEvent: (event) => {
          if (event.type === 'speech_started') utteranceFrom = event.at;
          if (event.type === 'final') {
            finals.words.push(...event.words);
            finals.endSeconds = Math.max(finals.endSeconds, event.end);
          } else if (event.type === 'utterance_end') {
            finals.endSeconds = Math.max(finals.endSeconds, event.at);
            utteranceFrom = undefined;
          } else if (event.type === 'partial') {
            finals.endSeconds = Math.max(finals.endSeconds, event.end);
          }
          out.push(responseOf(event));
        },
      });
    } catch (err) {
      await hold.release('engine_failed');
      log.error({ err: err instanceof Error ? err.message : String(err) }, 'live recognizer did not start');
      throw err instanceof EngineError ? new MurmurError('service_unavailable', 'Live transcription is not available on this server right now; nothing was charged. Retry later, or use POST /transcribe.') : err;
    }

    /** Each block of PCM: paid for, at an allowed pace, within the longest stream — else the stream stops here. */
    const onPcm = async (pcm: Buffer): Promise<void> => {
      if (stop) return;
      const seconds = (receivedBytes + pcm.length) / BYTES_PER_SECOND;
      firstAudioAt ??= now();
      const elapsed = (now() - firstAudioAt) / 1000;
      if (seconds > LIVE_MAX_SECONDS) {
        stop = new Stop(new MurmurError('audio_too_large', `A live stream lasts at most ${LIVE_MAX_SECONDS / 3600} hours; this one ended there, every word before it final and charged. Open a new stream to go on.`, { param: 'audio' }));
        return;
      }
      if (seconds > LIVE_SPEED_ALLOWANCE_SECONDS + LIVE_MAX_SPEED * elapsed) {
        stop = new Stop(
          new MurmurError('audio_too_fast', `Audio arrived more than ${LIVE_MAX_SPEED}× faster than real time (${seconds.toFixed(1)} s of audio in ${elapsed.toFixed(1)} s); the stream ended there, the audio before it transcribed and charged. Send audio as it is recorded; for a file use POST /transcribe.`, { param: 'audio' }),
        );
        return;
      }
      if (!hold.paysFor(seconds)) {
        await hold.idle();
        if (!hold.paysFor(seconds)) {
          // Refused: out of credits. Not refused but not extended either: billing unreachable.
          stop = new Stop(
            hold.refusal ??
              new MurmurError('service_unavailable', 'Billing could not be reached to pay for more of this stream; it ended there, every word before it final and charged. Open a new stream in a few seconds.'),
          );
          return;
        }
      }
      receivedBytes += pcm.length;
      await recognizer.write(pcm);
      // Someone talking without a pause still gets finals: the utterance is cut every so often.
      if (utteranceFrom !== undefined && seconds - utteranceFrom > (deps.maxUtteranceSeconds ?? LIVE_MAX_UTTERANCE_SECONDS)) {
        utteranceFrom = seconds;
        recognizer.finalize();
      }
    };

    const audio: LiveAudio = openLiveAudio(format, onPcm, { signal: workSignal, ...(deps.ffmpegPath ? { ffmpegPath: deps.ffmpegPath } : {}) });

    // Reads the client's messages until it closes, or the stream stops; then flushes the last utterance.
    const pump = (async () => {
      for (;;) {
        if (stop) break;
        const next = await it.next();
        if (next.done) break;
        const payload = next.value.payload;
        if (payload?.$case === 'audio') await audio.write(payload.value);
        else if (payload?.$case === 'control') {
          if (payload.value === transcription.StreamControl.STREAM_CONTROL_FINALIZE) recognizer.finalize();
          else if (payload.value === transcription.StreamControl.STREAM_CONTROL_CLOSE) break;
        } else if (payload?.$case === 'config') {
          throw new MurmurError('invalid_request', 'Only the first message of the stream may be a config.', { param: 'config' });
        }
      }
      await audio.end();
      await recognizer.end();
    })();
    pump.then(
      () => out.end(),
      (err: unknown) => out.fail(err),
    );
    recognizer.done.catch((err: unknown) => out.fail(err));
    const onAbort = () => out.fail(signal.reason ?? new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });

    yield { event: { $case: 'opened', value: { id, model: deps.model } } };
    let failure: unknown;
    try {
      for await (const event of out) yield event;
    } catch (err) {
      failure = err;
    } finally {
      signal.removeEventListener('abort', onAbort);
      work.abort();
      audio.kill();
      recognizer.kill();
      await pump.catch(() => undefined);
    }
    const receivedSeconds = receivedBytes / BYTES_PER_SECOND;
    const ended = failure === undefined;
    // Ended as asked (or at a limit): everything received was recognised. Otherwise what the words answered cover.
    const chargedSeconds = ended ? receivedSeconds : Math.min(receivedSeconds, finals.endSeconds);
    let recordingId = '';
    let credits = 0;
    try {
      if (config.save && finals.words.length > 0) {
        recordingId = await saveRecording(deps.library!, id, config.userId, { save: true, title: config.title, folderId: config.folderId }, this.transcriptOf(finals, chargedSeconds), new Date(started));
      }
      credits = await hold.settle(chargedSeconds, ended ? 'nothing_streamed' : 'stream_failed');
    } catch (err) {
      await hold.release('settle_failed');
      log.error({ err: err instanceof Error ? err.message : String(err) }, 'live stream not settled');
      if (ended) throw err;
    }
    log.info({ duration_seconds: round3(receivedSeconds), charged_seconds: round3(chargedSeconds), words: finals.words.length, credits, saved: recordingId !== '', total_ms: now() - started, ended: ended ? (stop?.error.code ?? 'closed') : 'failed' }, 'live stream ended');
    if (!ended) throw this.publicFailure(failure, callSignal, log);
    if (stop) throw stop.error;
    yield { event: { $case: 'closed', value: { durationSeconds: round3(receivedSeconds), creditsCharged: credits, recordingId } } };
  }

  /** What a failed stream's client is told (it keeps its finals; the rest was not charged). */
  private publicFailure(err: unknown, callSignal: AbortSignal, log: Logger): MurmurError {
    if (err instanceof MurmurError) return err;
    if (callSignal.aborted) return new MurmurError('service_unavailable', 'The stream was cancelled.');
    if (err instanceof EngineError) {
      log.error({ err: err.message }, 'live recognizer failed');
      return new MurmurError('transcription_failed', 'The live transcription engine failed; the words already final were kept and only their audio was charged. Open a new stream to go on.');
    }
    return new MurmurError('service_unavailable', 'The live stream lost its credit hold (billing unreachable); only the audio of the words already final was charged. Open a new stream to go on.');
  }

  private transcriptOf(finals: Finals, durationSeconds: number) {
    const words = finals.words;
    return {
      text: words.map((w) => w.text).join(' '),
      language: 'en',
      segments: segmentsFromWords(words.map((w) => ({ text: w.text, start: w.start, end: w.end }))).map((s) => ({ startSeconds: s.start, endSeconds: s.end, text: s.text })),
      words: wordsMessage(words),
      speakers: [],
      durationSeconds: round3(durationSeconds),
    };
  }
}
