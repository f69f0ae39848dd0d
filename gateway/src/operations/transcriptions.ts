/**
 * Transcription jobs (POST/GET /transcriptions…, and the MCP tools on top of them): the audio
 * is streamed into the transcription service's SubmitTranscription exactly as POST /transcribe
 * streams it into Transcribe, and the job is read, listed, canceled and watched through the
 * service. Every call is the key owner's: another user's job id is not_found.
 */
import { AsyncResource } from 'node:async_hooks';
import type { Readable } from 'node:stream';
import { invalidParam, isErrorCode, JOB_STATUS_NAMES, JOB_STATUSES, MurmurError, type JobStatusName } from '@murmur/contract';
import { transcription } from '@murmur/proto';
import type { OperationContext } from './context';
import type { ChargeContext } from './convert';
import { pageRequest, type PageInput } from './paging';
import { presentJob } from './present';
import { audioCallConfig, streamAudio, timelineChanged, type CheckedTranscribeOptions } from './transcribe';

/** The upload of a job can take as long as the upload of a synchronous call. */
const SUBMIT_DEADLINE_MS = 3 * 60 * 60 * 1000;
/** A watcher's stream lives as long as a job may (the service ends it when the job ends). */
const WATCH_DEADLINE_MS = 24 * 60 * 60 * 1000;

/**
 * Streams the upload into a new job; answers the queued job (or, for a repeated Idempotency-Key,
 * the job it made). `options` may still change while the audio flows (REST fields after the
 * file complete it before the audio ends): whatever differs from the config once the audio has
 * ended is sent as the stream's last message, so every field that arrived is applied.
 */
export async function submitTranscription(
  ctx: OperationContext,
  audio: Readable,
  file: { filename: string; contentType: string },
  options: CheckedTranscribeOptions,
  charge: ChargeContext,
) {
  const config: transcription.SubmitTranscriptionConfig = {
    ...audioCallConfig(ctx, file, options, charge),
    save: options.save,
    title: options.title,
    folderId: options.folderId,
    webhookUrl: options.webhookUrl,
  };
  const lateOptions = (): transcription.SubmitTranscriptionRequest | undefined => {
    const late: transcription.SubmitTranscriptionLateOptions = {
      save: options.save,
      title: options.title,
      folderId: options.folderId,
      webhookUrl: options.webhookUrl,
      timeline: options.timeline,
    };
    const changed =
      late.save !== config.save ||
      late.title !== config.title ||
      late.folderId !== config.folderId ||
      late.webhookUrl !== config.webhookUrl ||
      timelineChanged(config.timeline, options.timeline);
    return changed ? { payload: { $case: 'lateOptions', value: late } } : undefined;
  };
  const { job } = await streamAudio<transcription.SubmitTranscriptionRequest, transcription.SubmitTranscriptionResponse>(
    ctx.clients.transcription.submitTranscription({ signal: charge.signal, deadlineMs: SUBMIT_DEADLINE_MS }),
    { payload: { $case: 'config', value: config } },
    audio,
    (chunk) => ({ payload: { $case: 'audioChunk', value: chunk } }),
    lateOptions,
  );
  if (!job) throw new Error('SubmitTranscription answered without a job');
  return presentJob(job);
}

/** One job; `words`: with the result's words (a two-hour recording holds ~20,000). */
export async function getTranscription(ctx: OperationContext, id: string, options: { words?: boolean } = {}) {
  const { job } = await ctx.clients.transcription.getTranscription({ ownerId: ctx.principal.userId, id });
  if (!job) throw new Error('GetTranscription answered without a job');
  return presentJob(job, options);
}

export interface ListTranscriptionsInput extends PageInput {
  status?: string;
}

export async function listTranscriptions(ctx: OperationContext, input: ListTranscriptionsInput) {
  if (input.status !== undefined && !(JOB_STATUS_NAMES as readonly string[]).includes(input.status)) {
    throw invalidParam('status', `\`status\` must be one of ${JOB_STATUS_NAMES.join(', ')}.`);
  }
  const page = pageRequest(input);
  const res = await ctx.clients.transcription.listTranscriptions({
    ownerId: ctx.principal.userId,
    limit: page.limit,
    cursor: page.cursor,
    status: input.status ? JOB_STATUSES[input.status as JobStatusName] : transcription.JobStatus.JOB_STATUS_UNSPECIFIED,
  });
  return {
    object: 'list' as const,
    data: res.jobs.map((j) => presentJob(j)),
    has_more: res.hasMore,
    next_cursor: res.hasMore ? res.nextCursor : null,
  };
}

export async function cancelTranscription(ctx: OperationContext, id: string) {
  const { job } = await ctx.clients.transcription.cancelTranscription({ ownerId: ctx.principal.userId, id });
  if (!job) throw new Error('CancelTranscription answered without a job');
  return presentJob(job);
}

/** Sends an ended job's webhook event again now (a new round of attempts, the same webhook-id). */
export async function retryWebhook(ctx: OperationContext, id: string) {
  const { job } = await ctx.clients.transcription.retryWebhook({ ownerId: ctx.principal.userId, id });
  if (!job) throw new Error('RetryWebhook answered without a job');
  return presentJob(job);
}

/** The job now and at every change of status or progress, until it has ended; leaving the loop ends the watch. */
export async function* watchTranscription(ctx: OperationContext, id: string, signal: AbortSignal): AsyncGenerator<ReturnType<typeof presentJob>> {
  for await (const { job } of ctx.clients.transcription.watchTranscription({ ownerId: ctx.principal.userId, id }, { signal, deadlineMs: WATCH_DEADLINE_MS })) {
    if (job) yield presentJob(job);
  }
}

/** Whether a presented job has ended. */
export function jobEnded(job: { status: string }): boolean {
  return job.status === 'completed' || job.status === 'failed' || job.status === 'canceled';
}

/** A completed job's transcript in a text format; before completion there is none yet. */
export function completedResult(job: ReturnType<typeof presentJob>) {
  if (job.status !== 'completed' || job.text === null) {
    throw new MurmurError('transcription_not_ready', undefined, { param: 'response_format' });
  }
  return {
    id: job.id,
    text: job.text,
    segments: job.segments ?? [],
    speakers: job.speakers ?? [],
    words: 'words' in job ? job.words : null,
    credits_charged: job.credits_charged ?? 0,
    recording_id: job.recording_id,
  };
}

/**
 * The `transcribe` tool with a progressToken: the upload runs as a job, `progress` hears the
 * recognised seconds of the total at each change, and the answer is what a synchronous
 * transcription answers. A call the client cancels, or whose watch fails, cancels the job
 * (nothing is charged).
 */
export async function transcribeAsJob(
  ctx: OperationContext,
  audio: Readable,
  file: { filename: string; contentType: string },
  options: CheckedTranscribeOptions,
  charge: ChargeContext & { signal: AbortSignal },
  progress: (done: number, total: number, message: string) => Promise<void>,
) {
  const submitted = await submitTranscription(ctx, audio, file, options, charge);
  // Bound to this call's async context: the abort fires from the socket's close, outside it, and
  // the cancel must still travel with the caller's credentials and trace (kit's call context).
  const cancel = AsyncResource.bind(() => void cancelTranscription(ctx, submitted.id).catch(() => undefined));
  charge.signal.addEventListener('abort', cancel, { once: true });
  try {
    let job = submitted;
    try {
      for await (const next of watchTranscription(ctx, submitted.id, charge.signal)) {
        job = next;
        await progress(job.processed_seconds, job.duration_seconds, job.status).catch(() => undefined);
      }
    } catch (err) {
      // The call fails (e.g. over the cap on watchers) and its caller never learns the job's id:
      // the job must not run on and be charged for a result nobody can fetch.
      if (!jobEnded(job)) await cancelTranscription(ctx, submitted.id).catch(() => undefined);
      throw err;
    }
    // The watch carries no words (a job's words are read once, at its end).
    if (job.status === 'completed' && options.timeline.words) job = await getTranscription(ctx, submitted.id, { words: true });
    return jobResult(job);
  } finally {
    charge.signal.removeEventListener('abort', cancel);
  }
}

/**
 * What a transcription that has ended gives its caller: a completed job's transcript as the
 * synchronous route answers it; a failed one's error, thrown; a canceled one, thrown as
 * transcription_canceled (nothing was charged).
 */
export function jobResult(job: ReturnType<typeof presentJob>) {
  if (job.status === 'completed') {
    return {
      id: job.id,
      object: 'transcription' as const,
      text: job.text ?? '',
      language: job.language,
      language_confidence: job.language_confidence,
      duration_seconds: job.duration_seconds,
      segments: job.segments ?? [],
      speakers: job.speakers ?? [],
      ...('words' in job && job.words ? { words: job.words } : {}),
      model: job.model ?? '',
      credits_charged: job.credits_charged ?? 0,
      recording_id: job.recording_id,
    };
  }
  if (job.status === 'canceled') throw new MurmurError('transcription_canceled');
  if (job.error && isErrorCode(job.error.code)) throw new MurmurError(job.error.code, job.error.message, { param: job.error.param });
  throw new MurmurError('service_unavailable', `The transcription ended ${job.status} before it completed; nothing was charged. Try again.`);
}
