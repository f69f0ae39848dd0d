/**
 * Audio for POST /transcribe and POST /transcriptions, streamed, never buffered: a file path
 * (read as it is sent), a Blob or File, bytes, a web or Node stream, or a public URL the server
 * downloads itself (`audio_url`). The multipart body is built as a stream, with its length when
 * the audio's is known, and reports progress as the audio's bytes go out.
 */
import { MurmurError } from './errors.js';
import type { Platform } from './platform.js';

/** Audio to transcribe. A string is a file path, or an http(s) URL Murmur downloads. */
export type AudioInput =
  | string
  | URL
  | Blob
  | ArrayBuffer
  | Uint8Array
  | ReadableStream<Uint8Array>
  | AsyncIterable<Uint8Array>
  | { url: string }
  | { path: string };

/** Upload progress: bytes of audio sent, and the total when known. */
export interface UploadProgress {
  loaded: number;
  total: number | null;
}

/** A body ready for the HTTP core: made afresh for each try (a one-shot stream cannot be). */
export interface PreparedBody {
  make: () => ReadableStream<Uint8Array> | string;
  contentType: string;
  length?: number;
  replayable: boolean;
}

type Fields = Record<string, string | number | boolean | readonly string[] | undefined>;

const isUrl = (s: string) => /^https?:\/\//i.test(s);

/** The audio's URL when it is one (sent as `audio_url`), else undefined. */
export function audioUrlOf(audio: AudioInput): string | undefined {
  if (audio instanceof URL) return audio.toString();
  if (typeof audio === 'string' && isUrl(audio)) return audio;
  if (typeof audio === 'object' && audio !== null && 'url' in audio && typeof audio.url === 'string') return audio.url;
  return undefined;
}

/** A source of the audio's bytes: how to open it (again, when it can be) and its size when known. */
interface Source {
  open: () => ReadableStream<Uint8Array>;
  size: number | null;
  name: string;
  type: string;
  replayable: boolean;
}

async function sourceOf(audio: AudioInput, openFile: Platform['openFile']): Promise<Source> {
  if (typeof audio === 'string' || (typeof audio === 'object' && audio !== null && 'path' in audio && typeof audio.path === 'string')) {
    const file = typeof audio === 'string' ? audio : (audio as { path: string }).path;
    if (!openFile) throw new MurmurError(`A file path (${file}) needs Node.js; here, pass a Blob or File, bytes, a stream, or an http(s) URL.`);
    // Node: a Blob backed by the file, read as it is sent (never loaded whole).
    const blob = await openFile(file);
    return { open: () => blob.stream() as ReadableStream<Uint8Array>, size: blob.size, name: file.split(/[\\/]/).pop() || 'audio', type: 'application/octet-stream', replayable: true };
  }
  if (audio instanceof Blob) {
    const name = 'name' in audio && typeof audio.name === 'string' && audio.name ? audio.name : 'audio';
    return { open: () => audio.stream() as ReadableStream<Uint8Array>, size: audio.size, name, type: audio.type || 'application/octet-stream', replayable: true };
  }
  if (audio instanceof ArrayBuffer || ArrayBuffer.isView(audio)) {
    const bytes = audio instanceof ArrayBuffer ? new Uint8Array(audio) : new Uint8Array(audio.buffer, audio.byteOffset, audio.byteLength);
    return { open: () => new Blob([bytes as Uint8Array<ArrayBuffer>]).stream() as ReadableStream<Uint8Array>, size: bytes.byteLength, name: 'audio', type: 'application/octet-stream', replayable: true };
  }
  if (audio instanceof ReadableStream) {
    let used = false;
    return {
      open: () => {
        if (used) throw new MurmurError('A stream can be sent once; pass a path, Blob or bytes to allow retries.');
        used = true;
        return audio;
      },
      size: null,
      name: 'audio',
      type: 'application/octet-stream',
      replayable: false,
    };
  }
  if (typeof audio === 'object' && audio !== null && Symbol.asyncIterator in audio) {
    const iterable = audio as AsyncIterable<Uint8Array>;
    return { open: () => streamOf(iterable), size: null, name: 'audio', type: 'application/octet-stream', replayable: false };
  }
  throw new MurmurError('audio must be a file path, an http(s) URL, a Blob, bytes, or a stream.');
}

/** A Node stream (any async iterable of bytes) as a web stream, pulled as the upload reads it. */
function streamOf(iterable: AsyncIterable<Uint8Array | string>): ReadableStream<Uint8Array> {
  const it = iterable[Symbol.asyncIterator]();
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await it.next();
      if (done) controller.close();
      else controller.enqueue(typeof value === 'string' ? encoder.encode(value) : value);
    },
    async cancel() {
      await it.return?.();
    },
  });
}

/** The multipart text parts of `fields` (a list field: one part per entry, as the API reads it). */
function fieldParts(boundary: string, fields: Fields): string {
  let out = '';
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) {
      out += `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${String(v)}\r\n`;
    }
  }
  return out;
}

/**
 * A streamed multipart body: the fields, then the audio as part `audio`, counted as it goes out.
 * Its length is known when the audio's is, so no chunked encoding is needed then.
 */
export async function multipartBody(audio: AudioInput, fields: Fields, onProgress: ((p: UploadProgress) => void) | undefined, openFile: Platform['openFile']): Promise<PreparedBody> {
  const source = await sourceOf(audio, openFile);
  const boundary = `murmur-${globalThis.crypto.randomUUID()}`;
  const encoder = new TextEncoder();
  const head = encoder.encode(
    `${fieldParts(boundary, fields)}--${boundary}\r\nContent-Disposition: form-data; name="audio"; filename="${source.name.replace(/"/g, '')}"\r\nContent-Type: ${source.type}\r\n\r\n`,
  );
  const tail = encoder.encode(`\r\n--${boundary}--\r\n`);
  const make = () => {
    const reader = source.open().getReader();
    let stage: 'head' | 'audio' | 'tail' | 'done' = 'head';
    let loaded = 0;
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (stage === 'head') {
          stage = 'audio';
          controller.enqueue(head);
          return;
        }
        if (stage === 'audio') {
          const { value, done } = await reader.read();
          if (!done) {
            loaded += value.byteLength;
            onProgress?.({ loaded, total: source.size });
            controller.enqueue(value);
            return;
          }
          stage = 'tail';
        }
        if (stage === 'tail') {
          stage = 'done';
          controller.enqueue(tail);
          return;
        }
        controller.close();
      },
      async cancel(reason) {
        await reader.cancel(reason);
      },
    });
  };
  return {
    make,
    contentType: `multipart/form-data; boundary=${boundary}`,
    ...(source.size !== null ? { length: head.byteLength + source.size + tail.byteLength } : {}),
    replayable: source.replayable,
  };
}
