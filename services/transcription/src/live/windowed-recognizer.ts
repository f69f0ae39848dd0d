/**
 * Live recognition for any batch engine (whisper.cpp, an OpenAI-compatible server, even
 * pocketsphinx_continuous): Silero VAD (silero-vad.ts) finds where each utterance starts and
 * ends as the audio arrives, and the engine's ordinary `recognize` runs on WAV files cut from it:
 *
 * - `speech_started` when the detector turns on (its look-back puts `at` ~0.35 s before);
 * - `partial` every `partialMs` of audio within an utterance: the last ≤ 15 s of it recognised
 *   whole (each partial is a full recognition, so the default cadence is 1 s, not the 250 ms of
 *   the incremental pocketsphinx recognizer), skipped when the recognizer is still busy, and
 *   sent only when its text changed;
 * - when the detector ends the utterance (0.5 s of silence), or on finalize() or end(): the
 *   whole utterance recognised, its words in stream time as a `final` (none when it has no
 *   words), then `utterance_end`. An utterance reaching {@link MAX_WINDOW_SECONDS} (whisper's
 *   window) is cut there, and the detector restarts on what follows.
 *
 * Recognitions run one at a time per stream, in the order of the audio, and every event goes
 * through the same queue, so a stream's events are in order (a `speech_started` never overtakes
 * the last utterance's `final`). write() waits while two finals are queued: an engine slower than
 * real time slows the stream down rather than piling up audio. Each recognition's WAV file is
 * written to the stream's own temp folder and deleted after; the folder goes at end() or kill().
 * Nothing here logs audio or text.
 *
 * Cost, measured on this machine (2 cores, busy with other work) over the pocketsphinx batch
 * engine (a pocketsphinx_continuous process per window) on 31 s of LibriVox speech (five
 * utterances, 1.3 s pauses): at real-time pace with partials every 1 s, 23.6 s of CPU
 * (~0.76 s per second of audio; 11 partials, 5 finals), of which 0.76 s in Node.js (the VAD,
 * slicing, WAV files); finals only, 9.1 s (~0.29 per second). Each partial recognises the whole
 * utterance so far, so an utterance's partials cost grows with the square of its length; the
 * incremental ps-live costs ~0.19 per second. The VAD alone: ~5 ms of CPU per second of audio.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { EngineError, type EngineWord, type Recognition, type SpeechEngine } from '../engines/engine';
import { wordsFromSegments } from '../engines/words';
import { BYTES_PER_SAMPLE, SAMPLE_RATE, wavHeader } from '../pcm';
import type { LiveEvent, LiveRecognizer, LiveWord } from './live-events';
import { openVoiceDetector, VAD_FETCH_COMMAND, VAD_WINDOW_SAMPLES, type VoiceDetectorOptions } from './silero-vad';

/** Whisper's window: the longest audio one recognition gets, so the longest utterance. */
export const MAX_WINDOW_SECONDS = 30;
/** The longest audio a partial recognises: the end of the utterance so far. */
export const PARTIAL_WINDOW_SECONDS = 15;
/** Default partial cadence for windowed engines, in milliseconds of audio. */
export const WINDOWED_PARTIAL_MS = 1000;
/** Finals queued before write() waits for the engine. */
const MAX_QUEUED_FINALS = 2;
/** Utterances shorter than this are not worth a recognition (they still get utterance_end). */
const MIN_RECOGNIZED_SAMPLES = 0.1 * SAMPLE_RATE;

export interface WindowedRecognizerOptions {
  /** The batch engine whose `recognize` runs on each window. */
  engine: Pick<SpeechEngine, 'name' | 'recognize'>;
  /** Path of silero_vad_v5.onnx (silero-vad.ts). */
  vadModel: string;
  onEvent(e: LiveEvent): void;
  /** Aborting kills the recognizer, as kill() does. */
  signal?: AbortSignal;
  /** The language hint given to the engine (default: none, the engine decides). */
  language?: string;
  /** Milliseconds of audio between partials (default {@link WINDOWED_PARTIAL_MS}; 0: no partials). */
  partialMs?: number;
  /** Parent of the stream's temp folder (default the OS's). */
  tmpDir?: string;
  vad?: VoiceDetectorOptions;
}

/** What an engine's configuration says about its live streams on sliding windows. */
export interface WindowedLiveOptions {
  /** The Silero VAD model file; absent or missing: streams are refused, naming {@link VAD_FETCH_COMMAND}. */
  vadModel?: string;
  tmpDir?: string;
  /** Default {@link WINDOWED_PARTIAL_MS}. */
  partialMs?: number;
}

/** `startLive` for a batch engine (whisper, OpenAI-compatible): the windowed recognizer over its `recognize`. */
export function windowedStartLive(engine: Pick<SpeechEngine, 'name' | 'recognize'>, live: WindowedLiveOptions = {}): NonNullable<SpeechEngine['startLive']> {
  return async (o) => {
    if (!live.vadModel) {
      throw new EngineError(`live transcription with ${engine.name} needs the Silero VAD model in MURMUR_MODELS_DIR; fetch it with \`${VAD_FETCH_COMMAND}\``);
    }
    return startWindowedRecognizer({
      engine,
      vadModel: live.vadModel,
      ...(live.tmpDir ? { tmpDir: live.tmpDir } : {}),
      ...(live.partialMs !== undefined ? { partialMs: live.partialMs } : {}),
      ...o,
    });
  };
}

/** The audio of the current utterance (and a little before it), by absolute sample position. */
class PcmWindow {
  private chunks: Array<{ at: number; data: Buffer }> = [];
  /** Samples appended so far (the stream's position). */
  end = 0;

  append(data: Buffer): void {
    if (data.length === 0) return;
    this.chunks.push({ at: this.end, data });
    this.end += data.length / BYTES_PER_SAMPLE;
  }

  /** A copy of samples [from, to). */
  slice(from: number, to: number): Buffer {
    const parts: Buffer[] = [];
    for (const { at, data } of this.chunks) {
      const n = data.length / BYTES_PER_SAMPLE;
      if (at + n <= from || at >= to) continue;
      parts.push(data.subarray((Math.max(from, at) - at) * BYTES_PER_SAMPLE, (Math.min(to, at + n) - at) * BYTES_PER_SAMPLE));
    }
    return Buffer.concat(parts);
  }

  /** Forgets whole chunks that end before `sample`. */
  dropBefore(sample: number): void {
    let i = 0;
    while (i < this.chunks.length && this.chunks[i]!.at + this.chunks[i]!.data.length / BYTES_PER_SAMPLE <= sample) i++;
    if (i > 0) this.chunks = this.chunks.slice(i);
  }
}

/** s16le → float samples in [-1, 1]. */
function toFloat(pcm: Buffer): Float32Array {
  const out = new Float32Array(pcm.length / BYTES_PER_SAMPLE);
  for (let i = 0; i < out.length; i++) out[i] = pcm.readInt16LE(i * BYTES_PER_SAMPLE) / 32768;
  return out;
}

/** The words of a recognition: the engine's own when it gives them, else its segments' words spread over them. */
function wordsOf(rec: Recognition): EngineWord[] {
  return rec.words && rec.words.length > 0 ? rec.words : wordsFromSegments(rec.segments);
}

/** Checks the VAD model, creates the detector and the stream's temp folder; resolves ready for audio. */
export async function startWindowedRecognizer(opts: WindowedRecognizerOptions): Promise<LiveRecognizer> {
  opts.signal?.throwIfAborted();
  const detector = await openVoiceDetector(opts.vadModel, opts.vad);
  opts.signal?.throwIfAborted();
  const dir = await mkdtemp(path.join(opts.tmpDir ?? os.tmpdir(), 'murmur-live-'));
  const partialSamples = Math.round(((opts.partialMs ?? WINDOWED_PARTIAL_MS) / 1000) * SAMPLE_RATE);
  const maxUtterance = MAX_WINDOW_SECONDS * SAMPLE_RATE;
  const partialWindow = PARTIAL_WINDOW_SECONDS * SAMPLE_RATE;

  const audio = new PcmWindow();
  /** A byte of a sample split between two writes. */
  let oddByte: Buffer | undefined;
  /** Samples given to the detector; where its count of samples started (its last reset). */
  let fed = 0;
  let detectorOrigin = 0;
  /** The utterance being spoken. */
  let utterance: { start: number; nextPartial: number } | undefined;
  /** Where the last utterance ended: the next one starts no earlier. */
  let lastEnd = 0;
  let lastPartialText = '';

  const work = new AbortController();
  let stopped = false;
  let ending = false;
  let failure: unknown;
  let queue: Promise<void> = Promise.resolve();
  let queued = 0;
  let queuedFinals = 0;
  let windows = 0;

  let settle: { resolve(): void; reject(err: unknown): void } = { resolve: () => {}, reject: () => {} };
  const done = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  done.catch(() => {});
  let cleaned: Promise<void> | undefined;
  /** Stops all work; done settles once the running recognition gave up and the folder is gone. */
  const stop = (err?: unknown): Promise<void> => {
    if (!stopped) {
      stopped = true;
      if (err !== undefined) failure = err;
      work.abort();
      opts.signal?.removeEventListener('abort', onAbort);
      cleaned = queue
        .then(() => rm(dir, { recursive: true, force: true }))
        .catch(() => undefined)
        .then(() => (failure === undefined ? settle.resolve() : settle.reject(failure)));
    }
    return cleaned!;
  };
  const onAbort = () => void stop();
  opts.signal?.addEventListener('abort', onAbort, { once: true });

  const emit = (e: LiveEvent) => {
    if (stopped) return;
    try {
      opts.onEvent(e);
    } catch (err) {
      void stop(err);
    }
  };
  /** Runs `task` after everything queued before it; a failure stops the stream. */
  const enqueue = (task: () => Promise<void> | void, isFinal = false) => {
    queued++;
    if (isFinal) queuedFinals++;
    queue = queue.then(async () => {
      try {
        if (!stopped) await task();
      } catch (err) {
        if (!stopped) void stop(err instanceof EngineError ? err : new EngineError(`the ${opts.engine.name} engine failed on a live window: ${(err as Error).message}`, { cause: err }));
      } finally {
        queued--;
        if (isFinal) queuedFinals--;
      }
    });
  };

  /** The engine on samples [from, to): its words in stream seconds. */
  const recognize = async (pcm: Buffer, from: number): Promise<LiveWord[]> => {
    const file = path.join(dir, `window-${++windows}.wav`);
    await writeFile(file, Buffer.concat([wavHeader(pcm.length), pcm]));
    try {
      const rec = await opts.engine.recognize(file, { language: opts.language ?? '', signal: work.signal });
      const offset = from / SAMPLE_RATE;
      const limit = pcm.length / BYTES_PER_SAMPLE / SAMPLE_RATE;
      return wordsOf(rec).map((w) => {
        const start = offset + Math.min(Math.max(0, w.start), limit);
        return { text: w.text, start, end: Math.max(start, offset + Math.min(Math.max(0, w.end), limit)), confidence: w.confidence };
      });
    } finally {
      await rm(file, { force: true });
    }
  };

  const closeUtterance = (end: number) => {
    const u = utterance;
    if (!u) return;
    utterance = undefined;
    end = Math.max(u.start, end);
    lastEnd = end;
    const pcm = end - u.start >= MIN_RECOGNIZED_SAMPLES ? audio.slice(u.start, end) : undefined;
    enqueue(async () => {
      const words = pcm ? await recognize(pcm, u.start) : [];
      lastPartialText = '';
      if (words.length > 0) emit({ type: 'final', start: words[0]!.start, end: words[words.length - 1]!.end, words });
      emit({ type: 'utterance_end', at: end / SAMPLE_RATE });
    }, true);
  };

  /** After each window of the detector: speech on, a segment ended, the longest utterance, a partial due. */
  const afterWindow = () => {
    for (const end of detector.takeSegmentEnds()) closeUtterance(Math.min(fed, detectorOrigin + end));
    if (detector.inSpeech && !utterance) {
      const start = Math.max(lastEnd, fed - detector.lookBack);
      utterance = { start, nextPartial: fed + partialSamples };
      enqueue(() => emit({ type: 'speech_started', at: start / SAMPLE_RATE }));
    }
    if (utterance && fed - utterance.start >= maxUtterance) {
      closeUtterance(fed);
      detector.reset();
      detectorOrigin = fed;
    }
    if (utterance && partialSamples > 0 && fed >= utterance.nextPartial) {
      utterance.nextPartial = fed + partialSamples;
      // A partial is only worth it when it comes at once: with work queued it would be stale.
      if (queued === 0) {
        const from = Math.max(utterance.start, fed - partialWindow);
        const to = fed;
        const pcm = audio.slice(from, to);
        enqueue(async () => {
          const words = await recognize(pcm, from);
          const text = words.map((w) => w.text).join(' ');
          if (text && text !== lastPartialText) {
            lastPartialText = text;
            emit({ type: 'partial', text, start: from / SAMPLE_RATE, end: to / SAMPLE_RATE });
          }
        });
      }
    }
  };

  const finalizeNow = () => {
    if (!utterance) return;
    closeUtterance(fed);
    detector.reset();
    detectorOrigin = fed;
  };

  return {
    async write(pcm) {
      if (stopped) {
        if (failure !== undefined) throw failure;
        return;
      }
      if (ending) throw new EngineError('the live recognizer was ended; no more audio');
      let bytes = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
      if (oddByte) bytes = Buffer.concat([oddByte, bytes]);
      const whole = bytes.length - (bytes.length % BYTES_PER_SAMPLE);
      oddByte = whole < bytes.length ? Buffer.from(bytes.subarray(whole)) : undefined;
      // A copy: the caller may reuse its buffer.
      audio.append(Buffer.from(bytes.subarray(0, whole)));
      while (!stopped && audio.end - fed >= VAD_WINDOW_SAMPLES) {
        detector.accept(toFloat(audio.slice(fed, fed + VAD_WINDOW_SAMPLES)));
        fed += VAD_WINDOW_SAMPLES;
        afterWindow();
      }
      audio.dropBefore(utterance ? utterance.start : fed - detector.lookBack - VAD_WINDOW_SAMPLES);
      while (!stopped && queuedFinals >= MAX_QUEUED_FINALS) await queue;
      if (failure !== undefined) throw failure;
    },
    finalize() {
      if (!stopped && !ending) finalizeNow();
    },
    async end() {
      if (!stopped && !ending) {
        ending = true;
        // The audio the detector has not seen yet (less than a window) belongs to the utterance.
        if (utterance) {
          fed = audio.end;
          closeUtterance(fed);
        }
        await queue;
        await stop();
      }
      return done;
    },
    kill() {
      void stop();
    },
    done,
  };
}
