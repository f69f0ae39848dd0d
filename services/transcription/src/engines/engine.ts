/**
 * The one interface every speech engine implements. The service hands an engine one chunk at
 * a time (a 16 kHz mono s16le WAV file of at most {@link SpeechEngine.maxChunkSeconds}, cut at
 * silences) and stitches the results; an engine never sees a whole upload, so each can stay
 * simple and memory stays bounded.
 */
import type { TimedSegment } from '../stitch';
import type { LiveEvent, LiveRecognizer } from '../live/live-events';

export interface RecognizeOptions {
  /** BCP-47 hint ("en", "de-AT"); empty to let the engine decide. */
  language: string;
  /** Terms to recognise (checked by the service against {@link EngineCapabilities.keyterms}). */
  keyterms?: readonly string[];
  /** Aborted when the caller cancels or another chunk failed: stop work and reject. */
  signal: AbortSignal;
}

/** One recognised word, times relative to the start of the chunk, in seconds. */
export interface EngineWord {
  text: string;
  start: number;
  end: number;
  /** 0–1, or null when the engine reports none. */
  confidence: number | null;
}

/** One chunk's transcript; segment times are relative to the start of the chunk, in seconds. */
export interface Recognition {
  text: string;
  segments: TimedSegment[];
  /** The words with their times, from an engine whose capabilities say `words`. */
  words?: EngineWord[];
  /**
   * The language the engine recognised, when it reports one (ISO 639-1). No engine here reports
   * how sure it is (whisper.cpp's binding and verbose_json give no probability), so results
   * carry `language_confidence: null` (docs/timelines.md).
   */
  language?: string;
}

/**
 * What an engine can do beyond text (docs/timelines.md, "Engines"): the service refuses a call
 * that asks for more before anything is held.
 */
export interface EngineCapabilities {
  /** Word times (and, where the engine has them, confidences). */
  words: boolean;
  /** `language: "auto"` finds the language (else the engine is single-language). */
  languageDetection: boolean;
  /**
   * How key terms are used: `prompt` (given to the model as context, any term), `dictionary`
   * (only terms whose every word is in the engine's dictionary; the others are refused).
   */
  keyterms: 'prompt' | 'dictionary';
}

export interface SpeechEngine {
  /** "pocketsphinx", "whisper" or "openai". */
  readonly name: string;
  /** The model in use, e.g. "en-us", "ggml-base.en", "whisper-1". */
  readonly model: string;
  /**
   * The longest chunk this engine should get, in seconds (default 30, Whisper's window). An
   * engine with a fixed cost per call and its own segmentation of long audio (PocketSphinx)
   * sets more: the service then joins silence-cut pieces up to this length.
   */
  readonly maxChunkSeconds?: number;
  /** Absent: none beyond text ({@link capabilitiesOf}). */
  readonly capabilities?: EngineCapabilities;
  /**
   * The words of `terms` this engine cannot recognise (a `dictionary` engine); empty when all
   * are known. Checked before any audio is read.
   */
  unknownWords?(terms: readonly string[]): Promise<string[]>;
  /** Recognises one WAV chunk. Failures reject with any Error (the service maps them). */
  recognize(wavPath: string, opts: RecognizeOptions): Promise<Recognition>;
  /** False for a language the engine cannot recognise (checked before any audio is read). */
  supportsLanguage?(language: string): boolean;
  /**
   * Starts live recognition of one stream; resolves once it takes audio. PocketSphinx decodes as
   * the audio arrives; batch engines recognise Silero VAD's utterances on sliding windows
   * (live/windowed-recognizer.ts). `language` is the stream's hint. Absent: the engine does not
   * stream (docs/live.md).
   */
  startLive?(opts: { onEvent(e: LiveEvent): void; signal?: AbortSignal; language?: string }): Promise<LiveRecognizer>;
  /** Frees native resources (whisper's model). */
  close?(): Promise<void>;
}

/** What `engine` can do; an engine that does not say knows no words and detects no language. */
export function capabilitiesOf(engine: Pick<SpeechEngine, 'capabilities'>): EngineCapabilities {
  return engine.capabilities ?? { words: false, languageDetection: false, keyterms: 'prompt' };
}

/**
 * An engine failure whose message is safe to log: it names what went wrong (exit code, HTTP
 * status) and never carries audio or transcript text.
 */
export class EngineError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EngineError';
  }
}

/** True for "en", "en-US", "EN_gb" …; the empty hint counts as English for English-only engines. */
export function isEnglish(language: string): boolean {
  return language === '' || /^en([-_][a-z0-9]+)*$/i.test(language);
}
