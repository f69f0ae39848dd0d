/**
 * whisper.cpp through `@fugood/whisper.node` (prebuilt native addon, CPU). One context holds
 * the ggml model for the life of the process; chunks are transcribed one at a time on it
 * (whisper.cpp's state is single-use, and the addon would otherwise block libuv worker
 * threads on its session lock), each with `threads` CPU threads — whisper parallelises inside
 * a chunk rather than across chunks.
 *
 *   initWhisper({ filePath, useGpu: false }) → ctx
 *   ctx.transcribeData(pcm ArrayBuffer, { language, maxThreads, temperature: 0 }) → { stop, promise }
 *   promise → { result, language, segments: [{ text, t0, t1 }] (milliseconds), isAborted }
 */
import { access, readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { WAV_HEADER_BYTES } from '../pcm';
import { EngineError, type Recognition, type RecognizeOptions, type SpeechEngine } from './engine';
import { segmentsFromWords, wordsFromPieces } from './words';
import { whisperCapabilities } from './capabilities';
import { windowedStartLive, type WindowedLiveOptions } from '../live/windowed-recognizer';

export interface WhisperOptions {
  /** Path of a ggml model file (ggml-base.en.bin, …). */
  modelPath: string;
  /** CPU threads per chunk (default 4). */
  threads?: number;
  /** Receives whisper.cpp's own error lines (its info logs are dropped). */
  onNativeError?: (line: string) => void;
  /**
   * Live streams on sliding windows (live/windowed-recognizer.ts): the Silero VAD model they need
   * and where their windows are written. Without the model, streams are refused naming the fetch command.
   */
  live?: WindowedLiveOptions;
}

type WhisperModule = typeof import('@fugood/whisper.node');

/** Whisper engines alive in this process (they share the addon's one native log hook). */
let openEngines = 0;
type WhisperContext = Awaited<ReturnType<WhisperModule['initWhisper']>>;

/** "ggml-base.en" for ".../ggml-base.en.bin". */
export function whisperModelName(modelPath: string): string {
  return path.basename(modelPath).replace(/\.bin$/, '');
}

/** English-only models (`*.en`) take "en"; multilingual ones detect the language when no hint is given. */
function whisperLanguage(model: string, language: string): string {
  if (/\.en(\b|$)/.test(model)) return 'en';
  return language ? (language.split(/[-_]/)[0] ?? language).toLowerCase() : 'auto';
}

/** Loads the model (fails with a clear message when the file or the native addon is missing). */
export async function createWhisperEngine(opts: WhisperOptions): Promise<SpeechEngine> {
  try {
    await access(opts.modelPath);
  } catch {
    throw new EngineError(`whisper model file not found: ${opts.modelPath}; fetch one with \`npm run models -- fetch base.en\``);
  }
  let mod: WhisperModule;
  try {
    mod = await import('@fugood/whisper.node');
  } catch (err) {
    throw new EngineError(`the whisper.cpp binding @fugood/whisper.node could not be loaded: ${(err as Error).message}`);
  }
  const listener = mod.addNativeLogListener((level, text) => {
    if (level === 'error') opts.onNativeError?.(text.trim());
  });
  // Routing native logs to a listener keeps whisper.cpp's chatter (model load, every chunk)
  // off stderr; the native callback holds the event loop open, so the last engine closed
  // turns it off again.
  if (openEngines++ === 0) await mod.toggleNativeLog(true);
  const unhook = async () => {
    listener.remove();
    if (--openEngines === 0) await mod.toggleNativeLog(false);
  };
  let ctx: WhisperContext;
  try {
    ctx = await mod.initWhisper({ filePath: opts.modelPath, useGpu: false });
  } catch (err) {
    await unhook();
    throw new EngineError(`whisper could not load ${opts.modelPath}: ${(err as Error).message}`);
  }
  const model = whisperModelName(opts.modelPath);
  const threads = opts.threads ?? 4;
  let queue: Promise<unknown> = Promise.resolve();

  const run = async (wavPath: string, { language, signal, keyterms }: RecognizeOptions): Promise<Recognition> => {
    signal.throwIfAborted();
    // The chunk (≤ ~1 MB) goes in as PCM: transcribeFile would decode it again and print its
    // path on stderr from native code.
    const wav = await readFile(wavPath);
    const pcm = wav.subarray(WAV_HEADER_BYTES);
    const data = pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.byteLength);
    // Token mode (maxLen 1 with token timestamps, whisper.cpp's own word-timestamp recipe): one
    // segment per token, joined into words here and grouped into segments again. Key terms go
    // in as the prompt (the text the model takes as what came before).
    const { stop, promise } = ctx.transcribeData(data, {
      language: whisperLanguage(model, language),
      maxThreads: threads,
      temperature: 0,
      tokenTimestamps: true,
      maxLen: 1,
      ...(keyterms && keyterms.length > 0 ? { prompt: keyterms.join(', ') } : {}),
    });
    const onAbort = () => void stop().catch(() => undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const result = await promise;
      signal.throwIfAborted();
      if (result.isAborted) throw new EngineError('whisper stopped before the end of the chunk');
      const words = wordsFromPieces(result.segments.map((s) => ({ text: s.text, start: s.t0 / 1000, end: s.t1 / 1000 })));
      return {
        text: words.map((w) => w.text).join(' '),
        segments: segmentsFromWords(words),
        words,
        ...(result.language && result.language !== 'auto' ? { language: result.language } : {}),
      };
    } catch (err) {
      if (signal.aborted || err instanceof EngineError) throw err;
      throw new EngineError(`whisper failed: ${(err as Error).message}`, { cause: err });
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  };

  const recognize: SpeechEngine['recognize'] = (wavPath, opts) => {
    const next = queue.then(() => run(wavPath, opts));
    queue = next.catch(() => undefined);
    return next;
  };
  return {
    name: 'whisper',
    model,
    capabilities: whisperCapabilities(model),
    recognize,
    // Live streams: Silero VAD's utterances, each recognised whole (partials every second of audio).
    startLive: windowedStartLive({ name: 'whisper', recognize }, opts.live),
    async close() {
      await queue;
      await ctx.release();
      await unhook();
    },
  };
}
