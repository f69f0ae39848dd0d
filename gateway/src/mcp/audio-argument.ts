/**
 * The transcribe tool's `audio_base64`, read by the one base64 decoder REST uses (same alphabet,
 * whitespace, padding and data-URL rules; the data URL's media type is the audio's content type).
 * The JSON-RPC body already holds the text, but its decoded bytes are never held whole: the text
 * is read once to check it before any paid work, then decoded again piece by piece as the
 * transcription call takes it.
 */
import { Readable } from 'node:stream';
import { invalidParam, MurmurError } from '@murmur/kit';
import { Base64Decoder } from '../http/base64-decoder';
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
    if (bytes === 0) problem = invalidParam(PARAM, '`audio_base64` is empty.');
  } catch (err) {
    if (!(err instanceof MurmurError) || err.code === 'audio_too_large') throw err;
    problem = err;
  }
  return {
    contentType: decoder.mediaType ?? 'application/octet-stream',
    problem,
    open: () => Readable.from(decode(text, new Base64Decoder({ param: PARAM }))),
  };
}
