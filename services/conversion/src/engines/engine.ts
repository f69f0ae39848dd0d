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

/** One passage an answer may draw on, numbered from 1 as the engine cites it. */
export interface AnswerPassage {
  n: number;
  title: string;
  text: string;
  /** Seconds into the recording; null for passages without times. */
  start: number | null;
  /** The speaker's name or id; "" when unknown. */
  speaker: string;
}

export interface AnswerInput {
  question: string;
  /** Best first. */
  passages: AnswerPassage[];
  signal: AbortSignal;
}

/** An engine's answer: its text, with the numbers of the passages it cites (in `[n]` marks too). */
export interface EngineAnswer {
  answer: string;
  citations: number[];
  mode: 'extractive' | 'generative';
}

export interface ConversionEngine {
  /** "local", "llama" or "openai": reported in ConvertResponse.engine. */
  readonly name: string;
  convert(input: EngineInput): Promise<Artifact>;
  /** Answers a question from the passages only, citing them; throws when it cannot. */
  answer(input: AnswerInput): Promise<EngineAnswer>;
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
