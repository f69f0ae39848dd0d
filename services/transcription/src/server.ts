/**
 * gRPC handlers of murmur.transcription.v1.TranscriptionService: the client stream becomes a
 * config plus an iterable of audio chunks, then the service does the work.
 */
import { MurmurError } from '@murmur/contract';
import { bindService, type BoundService, type HandlerContext } from '@murmur/kit';
import type { TranscriptionJobs } from './jobs/jobs';
import { presentJob } from './jobs/present';
import type { Webhooks } from './webhooks/webhooks';
import { transcription } from '@murmur/proto';
import type { TranscriptionService } from './service';
import type { LiveSessions } from './live/live-session';

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

/** A Transcribe or SubmitTranscription message: a config, a chunk of audio, or (SubmitTranscription) the options that followed the audio. */
type AudioStreamMessage = {
  payload?: { $case: 'config'; value: unknown } | { $case: 'audioChunk'; value: Uint8Array } | { $case: 'lateOptions'; value: unknown } | undefined;
};

/**
 * The audio chunks after the config message, and the late options when they close the stream
 * (kept in `late.value`). A second config, or audio after the late options, is a client bug.
 */
async function* audioChunks(it: AsyncIterator<AudioStreamMessage>, late: { value?: unknown } = {}): AsyncGenerator<Uint8Array> {
  for (;;) {
    const next = await it.next();
    if (next.done) return;
    const payload = next.value.payload;
    if (payload?.$case === 'config') throw new MurmurError('invalid_request', 'Only the first message of the stream may be a config.', { param: 'config' });
    if (late.value !== undefined) throw new MurmurError('invalid_request', 'late_options must be the last message of the stream.', { param: 'late_options' });
    if (payload?.$case === 'audioChunk') yield payload.value;
    else if (payload?.$case === 'lateOptions') late.value = payload.value;
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

/**
 * Runs `work` with a config-then-audio stream's config and audio, the upload bounded by the
 * idle limit and the call's cancellation; whatever the client still sends after is discarded.
 */
async function withConfigAndAudio<C, R>(
  requests: AsyncIterable<AudioStreamMessage>,
  ctx: HandlerContext,
  rpc: string,
  idleMs: number | undefined,
  work: (config: C, audio: AsyncIterable<Uint8Array>, signal: AbortSignal, late: () => unknown) => Promise<R>,
): Promise<R> {
  const signal = cancellation(requests, ctx.signal);
  const it = readUntil(requests, signal, idleMs)[Symbol.asyncIterator]();
  const first = await it.next().catch((err: unknown) => {
    if (signal.aborted) throw new MurmurError('service_unavailable', 'The call was cancelled.');
    throw err;
  });
  if (first.done || first.value.payload?.$case !== 'config') {
    throw new MurmurError('invalid_request', `The first message of a ${rpc} stream must be the config.`, { param: 'config' });
  }
  const late: { value?: unknown } = {};
  try {
    return await work(first.value.payload.value as C, audioChunks(it, late), signal, () => late.value);
  } finally {
    // Stop reading whatever the client still sends (grpc-js discards it).
    await it.return?.(undefined);
  }
}

export function transcriptionHandlers(service: TranscriptionService, opts: { uploadIdleMs?: number; jobs?: TranscriptionJobs; webhooks?: Webhooks; live?: LiveSessions } = {}): BoundService {
  const { jobs, webhooks } = opts;
  const jobsOff = (): never => {
    throw new MurmurError('service_unavailable', 'Transcription jobs are not enabled on this replica.');
  };
  return bindService(transcription.TranscriptionServiceService, {
    transcribe: (requests, ctx) =>
      withConfigAndAudio<transcription.TranscribeConfig, transcription.TranscribeResponse>(requests, ctx, 'Transcribe', opts.uploadIdleMs, (config, audio, signal, late) =>
        service.transcribe(config, audio, { signal }, late as () => transcription.TranscribeLateOptions | undefined),
      ),
    async listEngines() {
      return service.listEngines();
    },
    submitTranscription: (requests, ctx) =>
      withConfigAndAudio<transcription.SubmitTranscriptionConfig, transcription.SubmitTranscriptionResponse>(
        requests,
        ctx,
        'SubmitTranscription',
        opts.uploadIdleMs,
        async (config, audio, signal, late) => ({ job: await (jobs ?? jobsOff()).submit(config, audio, signal, late as () => transcription.SubmitTranscriptionLateOptions | undefined) }),
      ),
    async getTranscription(req) {
      return { job: await (jobs ?? jobsOff()).get(req.ownerId, req.id) };
    },
    async listTranscriptions(req) {
      return (jobs ?? jobsOff()).list(req);
    },
    async cancelTranscription(req) {
      return { job: await (jobs ?? jobsOff()).cancel(req.ownerId, req.id) };
    },
    async rotateWebhookSecret(req) {
      return (webhooks ?? jobsOff()).rotateSecret(req.userId);
    },
    async getWebhookSettings(req) {
      return { settings: await (webhooks ?? jobsOff()).settings(req.userId) };
    },
    async setWebhookEndpoint(req) {
      return { settings: await (webhooks ?? jobsOff()).setEndpoint(req.userId, req.url) };
    },
    async retryWebhook(req) {
      return { job: presentJob(await (webhooks ?? jobsOff()).retry(req.ownerId, req.id)) };
    },
    async listWebhookDeliveries(req) {
      return (webhooks ?? jobsOff()).listDeliveries(req);
    },
    streamTranscription: (requests, ctx) => {
      if (!opts.live) throw new MurmurError('service_unavailable', 'Live transcription is not enabled on this replica.');
      return opts.live.run(requests, cancellation(requests, ctx.signal));
    },
    async *watchTranscription(req, ctx) {
      for await (const job of (jobs ?? jobsOff()).watch(req.ownerId, req.id, ctx.signal)) yield { job };
    },
  });
}
