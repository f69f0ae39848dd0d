/**
 * The one interface every conversion engine implements. An engine turns a transcript into the
 * structured artifact (artifacts.ts), which the service renders (Markdown or plain text) and
 * publishes as `data`; it throws when it cannot (the service turns any throw into
 * conversion_failed and returns the credits) and stops when `signal` aborts.
 */
import type { Artifact } from '../artifacts';
import type { KindName } from '../kinds';

export interface EngineInput {
  transcript: string;
  kind: KindName;
  /** Free text from the caller ("short", "formal, to Priya"); may be empty. */
  instructions: string;
  /** What relative dates ("by Thursday") are read against: the recording's time, or now. */
  referenceTime: Date;
  /** Aborted when the caller cancels or the engine's time is up. */
  signal: AbortSignal;
}

export interface ConversionEngine {
  /** "local", "llama" or "openai": reported in ConvertResponse.engine. */
  readonly name: string;
  convert(input: EngineInput): Promise<Artifact>;
  /** Frees models, sockets or threads; called when the service stops. */
  close?(): Promise<void>;
}

/** An engine failure with a reason for the log; callers only ever see conversion_failed. */
export class EngineError extends Error {
  override readonly name = 'EngineError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}
