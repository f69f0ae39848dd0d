/**
 * What a live recognizer is (the engine interface, engines/engine.ts, names it; live-recognizer.ts
 * implements it for PocketSphinx, windowed-recognizer.ts for batch engines on Silero VAD's
 * utterances): audio in as it arrives, events out as speech is recognised.
 */

/**
 * One recognised word: times in seconds from the stream's start, confidence 0–1 (the word's
 * posterior), or null from an engine that reports none (whisper, OpenAI-compatible).
 */
export interface LiveWord {
  text: string;
  start: number;
  end: number;
  confidence: number | null;
}

/** What the recognizer reports, in order, times in seconds from the stream's start. */
export type LiveEvent =
  | { type: 'speech_started'; at: number }
  | { type: 'partial'; text: string; start: number; end: number }
  | { type: 'final'; start: number; end: number; words: LiveWord[] }
  | { type: 'utterance_end'; at: number };

export interface LiveRecognizer {
  /** 16 kHz mono s16le PCM; resolves once the pipe took it (backpressure). */
  write(pcm: Uint8Array): Promise<void>;
  /** Ends the current utterance now (its final and utterance_end follow). */
  finalize(): void;
  /** No more audio: resolves after the last events were delivered and the process exited 0. */
  end(): Promise<void>;
  /** Stops at once (kills the process); end()/done settle. */
  kill(): void;
  /**
   * Rejects with EngineError when the process fails (spawn error, non-zero exit, killed by a
   * signal not ours); resolves after end() or kill(). Marked handled here: a failure also
   * rejects the write() or end() that meets it.
   */
  readonly done: Promise<void>;
}
