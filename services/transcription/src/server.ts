/**
 * gRPC handlers of murmur.transcription.v1.TranscriptionService: the client stream becomes a
 * config plus an iterable of audio chunks, then the service does the work.
 */
import { bindService, MurmurError, type BoundService } from '@murmur/kit';
import { transcription } from '@murmur/proto';
import type { TranscriptionService } from './service';

/** How long an upload may go without a message before it is abandoned (default 2 minutes). */
export const DEFAULT_UPLOAD_IDLE_MS = 120_000;

/**
 * Iterates `source` until it ends, `signal` aborts, or no message arrives for `idleMs`. A
 * cancelled client stream does not always end its iterator (and a grpc-js client that cancels
 * right after writing may never tell the server at all), so the upload must be able to stop
 * on its own: the idle limit frees the call and its temp files.
 */
export async function* readUntil<T>(source: AsyncIterable<T>, signal: AbortSignal, idleMs = DEFAULT_UPLOAD_IDLE_MS): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  for (;;) {
    // A fresh race per message, with every listener and timer removed once it settles: a race
    // against one promise living as long as the call would keep a reaction (and so the message)
    // per chunk, and the whole upload would stay in memory.
    const next = await new Promise<IteratorResult<T>>((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal.reason ?? new Error('aborted'));
      };
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        reject(new MurmurError('invalid_request', `No audio arrived for ${Math.round(idleMs / 1000)} s; the upload was abandoned. Send the file again.`, { param: 'audio' }));
      }, idleMs);
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      it.next().then(
        (result) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          resolve(result);
        },
        (err: unknown) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          reject(err);
        },
      );
    });
    if (next.done) return;
    yield next.value;
  }
}

/** The audio chunks after the config message; a second config is a client bug. */
async function* audioChunks(it: AsyncIterator<transcription.TranscribeRequest>): AsyncGenerator<Uint8Array> {
  for (;;) {
    const next = await it.next();
    if (next.done) return;
    const payload = next.value.payload;
    if (payload?.$case === 'audioChunk') yield payload.value;
    else if (payload?.$case === 'config') throw new MurmurError('invalid_request', 'Only the first message of the stream may be a config.', { param: 'config' });
  }
}

/**
 * The call's signal, also aborted when grpc-js marked the call cancelled before the handler
 * could listen (a client that cancels right after sending gets no 'cancelled' event otherwise,
 * and its stream never ends).
 */
function cancellation(requests: unknown, signal: AbortSignal): AbortSignal {
  const call = requests as { cancelled?: boolean; once?: (event: 'cancelled', fn: () => void) => unknown };
  if (typeof call.once !== 'function') return signal;
  const controller = new AbortController();
  const abort = () => controller.abort(signal.reason ?? new Error('cancelled by the client'));
  if (signal.aborted || call.cancelled) abort();
  else {
    signal.addEventListener('abort', abort, { once: true });
    call.once('cancelled', abort);
  }
  return controller.signal;
}

export function transcriptionHandlers(service: TranscriptionService, opts: { uploadIdleMs?: number } = {}): BoundService {
  return bindService(transcription.TranscriptionServiceService, {
    async transcribe(requests, ctx) {
      const signal = cancellation(requests, ctx.signal);
      const it = readUntil(requests, signal, opts.uploadIdleMs)[Symbol.asyncIterator]();
      const first = await it.next().catch((err: unknown) => {
        if (signal.aborted) throw new MurmurError('service_unavailable', 'The call was cancelled.');
        throw err;
      });
      if (first.done || first.value.payload?.$case !== 'config') {
        throw new MurmurError('invalid_request', 'The first message of a Transcribe stream must be the config.', { param: 'config' });
      }
      const config = first.value.payload.value;
      try {
        return await service.transcribe(config, audioChunks(it), { signal });
      } finally {
        // Stop reading whatever the client still sends (grpc-js discards it).
        await it.return?.(undefined);
      }
    },
    async listEngines() {
      return service.listEngines();
    },
  });
}
