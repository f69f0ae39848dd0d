/**
 * The body of POST /transcribe, read as a stream so memory stays flat for a 500 MB file or a
 * 670 MB base64 JSON body: the audio is handed on while it uploads, at the consumer's pace.
 *
 * Body kinds (DESIGN.md §3):
 * - `multipart/form-data`: text fields are options, the file part `audio` is the audio.
 * - `application/json`: a flat object; `audio_base64` is the audio (see base64-decoder.ts for
 *   what base64 is accepted, including a `data:audio/…;base64,` prefix).
 * - Anything else is 400 `invalid_request` (param null): 415 `unsupported_audio` is kept for
 *   audio that cannot be decoded, not for a wrong request format. A request with no body at
 *   all, whatever its Content-Type, is 400 `missing_audio`.
 *
 * Options may come in any order, before or after the audio (upload-fields.ts): the common
 * case, options first, is known when the audio begins; options after it are added to `fields`
 * while the audio flows, and are all there once `audio` has ended. Unknown, repeated or
 * mistyped options are `invalid_request` naming them.
 *
 * Outcome: the promise resolves at the first audio byte, with the options read so far; errors
 * before that reject it (`missing_audio` when the body ends without audio). Later errors —
 * over `maxBytes` (`audio_too_large`, raised the moment the count passes it), bad base64, bad
 * JSON, a bad option after the audio — destroy `audio` with the MurmurError. `audio` ends only
 * after the whole body has been read and found valid. A client disconnect, `signal`, or the
 * consumer destroying `audio` fail it with an AbortError; a body that stops arriving for
 * `idleTimeoutMs` fails it with `request_timeout` (body-idle-timeout.ts).
 *
 * On any failure the request is left paused and partly unread: answer with
 * `Connection: close` so the rest of the upload is not read (a 500 MB body would be).
 */
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { MurmurError } from '@murmur/contract';
import { AUDIO_BASE64, readJson } from './json-audio-stream';
import { AUDIO_PART, readMultipart } from './multipart-audio';
import type { AudioUploadFields } from './upload-fields';
import { UploadStream } from './upload-stream';
import { abortError, clientGone, goneError } from '../http/client-gone';
import { DEFAULT_BODY_IDLE_TIMEOUT_MS, watchBodyIdle } from '../http/body-idle-timeout';

export type { AudioUploadFields } from './upload-fields';

/** A transcription upload whose audio is still arriving. */
export interface AudioUpload {
  /** The options read so far: those before the audio at first, all of them once `audio` has ended. */
  fields: AudioUploadFields;
  /** Whether `language` came before the audio (it cannot change); if not, one may still follow it. */
  languageKnown: boolean;
  /** Raw audio bytes (base64 already decoded), paced by the reader. */
  audio: Readable;
  /** The multipart file name, or `audio` for JSON. */
  filename: string;
  /** The file part's Content-Type, or a data URL's media type, else application/octet-stream. */
  contentType: string;
}

export interface AudioUploadOptions {
  /** Largest accepted audio in bytes (decoded, for base64). */
  maxBytes: number;
  signal?: AbortSignal;
  /** The body idle timeout (see body-idle-timeout.ts); default {@link DEFAULT_BODY_IDLE_TIMEOUT_MS}. */
  idleTimeoutMs?: number;
  /** Opens an `audio_url` (a body of options only); without it such a body is refused. */
  openUrl?(url: string): Promise<{ stream: Readable; filename: string; contentType: string }>;
}

/** Starts reading the upload; resolves when its audio begins (see the file comment for the rules). */
export function parseAudioUpload(req: IncomingMessage, opts: AudioUploadOptions): Promise<AudioUpload> {
  const { signal } = opts;
  if (signal?.aborted) return Promise.reject(abortError('The upload was cancelled.', signal.reason));
  // Gone before this began: its close event is past, so nothing below would ever settle.
  if (clientGone(req)) return Promise.reject(goneError());
  if (!hasBody(req)) return Promise.reject(new MurmurError('missing_audio'));
  const mediaType = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  const multipart = mediaType === 'multipart/form-data';
  if (!multipart && mediaType !== 'application/json') {
    return Promise.reject(
      new MurmurError(
        'invalid_request',
        'Send the audio as multipart/form-data with a file field `audio`, or as application/json with `audio_base64`.',
        { param: null },
      ),
    );
  }

  const onAbort = () => upload.fail(abortError('The upload was cancelled.', signal?.reason));
  const onClose = () => {
    if (!req.complete) upload.fail(abortError('The client disconnected before the upload finished.'));
  };
  let stopIdle = () => {};
  const upload = new UploadStream({
    maxBytes: opts.maxBytes,
    param: multipart ? AUDIO_PART : AUDIO_BASE64,
    openUrl: opts.openUrl,
    onSettled: () => {
      stopIdle();
      signal?.removeEventListener('abort', onAbort);
      req.off('close', onClose);
      req.off('error', onClose);
    },
  });
  signal?.addEventListener('abort', onAbort, { once: true });
  req.on('close', onClose);
  req.on('error', onClose);
  try {
    if (multipart) readMultipart(req, upload);
    else readJson(req, upload);
  } catch (err) {
    upload.fail(err);
  }
  if (!upload.settled) stopIdle = watchBodyIdle(req, opts.idleTimeoutMs ?? DEFAULT_BODY_IDLE_TIMEOUT_MS, (err) => upload.fail(err));
  return upload.ready;
}

/** HTTP/1.1: a request has a body only with Transfer-Encoding or a non-zero Content-Length. */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
