/**
 * The transcribe tool's `audio_base64`, read by the one base64 decoder REST uses (same alphabet,
 * whitespace, padding and data-URL rules; the data URL's media type is the audio's content type).
 * Two ways in:
 * - in a small body the JSON-RPC message already holds the text, but its decoded bytes are never
 *   held whole: the text is read once to check it before any paid work, then decoded again piece
 *   by piece as the transcription call takes it (`readAudioArgument`);
 * - in a large body the text is never held: it is decoded as it arrives and only the bytes are
 *   kept, until the tool runs (`AudioCollector`; handler.ts bounds how many such bodies at once).
 * Either way: audio over the tool's limit is `audio_too_large` when the tool starts, text that is
 * not base64 (or holds no audio) is a `problem` the tool throws after its other checks.
 */
import { Readable } from 'node:stream';
import { invalidParam, MurmurError } from '@murmur/contract';
import { Base64Decoder } from '../upload/base64-decoder';
import { MCP_MAX_AUDIO_BYTES, mcpAudioTooLarge } from './body-limit';

const PARAM = 'audio_base64';
/** Characters of text decoded at a time (3 MiB of audio). */
const PIECE_CHARS = 4 * 1024 * 1024;

/** A checked `audio_base64`: its content type, and its bytes as a stream (decoded as they are read). */
export interface AudioArgument {
  contentType: string;
  /** Refuses the text (invalid base64, empty); thrown only after the caller's other checks, as before. */
  problem: MurmurError | undefined;
  open(): Readable;
}

/** The decoded pieces of `text`, in order. */
function* decode(text: string, decoder: Base64Decoder): Generator<Buffer> {
  for (let at = 0; at < text.length; at += PIECE_CHARS) {
    const bytes = decoder.write(text.slice(at, at + PIECE_CHARS));
    if (bytes.length > 0) yield bytes;
  }
  const tail = decoder.end();
  if (tail.length > 0) yield tail;
}

/** A decoder failure as the tool reports it: audio_too_large thrown, anything else the argument's problem. */
function problemOf(err: unknown): MurmurError {
  if (!(err instanceof MurmurError) || err.code === 'audio_too_large') throw err;
  return err;
}

const emptyProblem = () => invalidParam(PARAM, '`audio_base64` is empty.');

/**
 * Reads `text` once, keeping nothing: audio over the tool's limit throws `audio_too_large` at
 * once; text that is not base64 (or holds no audio) is returned as `problem`.
 */
export function readAudioArgument(text: string): AudioArgument {
  const decoder = new Base64Decoder({ param: PARAM });
  let bytes = 0;
  let problem: MurmurError | undefined;
  try {
    for (const piece of decode(text, decoder)) {
      bytes += piece.length;
      if (bytes > MCP_MAX_AUDIO_BYTES) throw mcpAudioTooLarge();
    }
    if (bytes === 0) problem = emptyProblem();
  } catch (err) {
    problem = problemOf(err);
  }
  return {
    contentType: decoder.mediaType ?? 'application/octet-stream',
    problem,
    open: () => Readable.from(decode(text, new Base64Decoder({ param: PARAM }))),
  };
}

/**
 * `audio_base64` received in pieces as a large body arrives: each piece is decoded at once and
 * only the bytes are kept (at most the tool's limit: past it they are dropped and the argument is
 * `audio_too_large`). Bad base64 stops the decoding; the rest of the text is skipped.
 */
export class AudioCollector {
  private readonly decoder = new Base64Decoder({ param: PARAM });
  private chunks: Buffer[] = [];
  private bytes = 0;
  private tooLarge = false;
  private problem: MurmurError | undefined;

  write(text: string): void {
    if (this.problem || this.tooLarge) return;
    try {
      this.keep(this.decoder.write(text));
    } catch (err) {
      this.problem = problemOf(err);
    }
  }

  end(): void {
    if (this.problem || this.tooLarge) return;
    try {
      this.keep(this.decoder.end());
    } catch (err) {
      this.problem = problemOf(err);
    }
    if (!this.problem && !this.tooLarge && this.bytes === 0) this.problem = emptyProblem();
  }

  /**
   * The argument, as the tool reads it; throws `audio_too_large` for audio over the tool's limit.
   * Its audio can be opened once: each piece is let go as it is read, so the memory it holds
   * shrinks as the transcription call takes it.
   */
  argument(): AudioArgument {
    if (this.tooLarge) throw mcpAudioTooLarge();
    return {
      contentType: this.decoder.mediaType ?? 'application/octet-stream',
      problem: this.problem,
      open: () => Readable.from(this.drain(), { objectMode: false }),
    };
  }

  private *drain(): Generator<Buffer> {
    const chunks = this.chunks;
    this.chunks = [];
    for (let piece = chunks.shift(); piece; piece = chunks.shift()) yield piece;
  }

  private keep(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.bytes += bytes.length;
    if (this.bytes > MCP_MAX_AUDIO_BYTES) {
      this.tooLarge = true;
      this.chunks = [];
      return;
    }
    this.chunks.push(bytes);
  }
}
