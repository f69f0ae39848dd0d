/**
 * Transcription jobs (POST /transcriptions …): create, read, list, cancel, wait for the end, or
 * follow its progress live over Server-Sent Events.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { MurmurError } from './errors.js';
import type { HttpCore } from './http.js';
import { PagePromise, type Page } from './pagination.js';
import { audioUrlOf, multipartBody, type AudioInput, type UploadProgress } from './uploads.js';
import type { components } from './generated/openapi.js';

export type TranscriptionJob = components['schemas']['TranscriptionJob'];
export type JobStatus = TranscriptionJob['status'];
/** A transcript as a file reads it: plain text (speaker turns labelled), SRT or WebVTT captions. */
export type TranscriptFormat = 'text' | 'srt' | 'vtt';

/** The options of a transcription (POST /transcribe and POST /transcriptions alike). */
export interface TranscriptionOptions {
  language?: string;
  save?: boolean;
  title?: string;
  folder_id?: string;
  words?: boolean;
  diarize?: boolean;
  speakers_expected?: number;
  keyterms?: string[];
  redact_pii?: boolean;
  redact_pii_policies?: string[];
  redact_pii_sub?: string;
}

export interface CallOptions {
  /** Makes the call safe to retry: the same key replays the first answer, charging once. Default: a fresh key per call. */
  idempotencyKey?: string;
  signal?: AbortSignal;
  /** Bytes of audio sent so far. */
  onUploadProgress?: (progress: UploadProgress) => void;
}

export interface CreateJobParams extends TranscriptionOptions {
  audio: AudioInput;
  /** Called when the job ends, signed with Standard Webhooks (verify with `client.webhooks.verify`). */
  webhook_url?: string;
}

/** A job that ended without a transcript (failed or canceled). */
export class JobEndedError extends MurmurError {
  override readonly name = 'JobEndedError';
  constructor(readonly job: TranscriptionJob) {
    super(`The transcription ${job.id} ended ${job.status}${job.error ? `: ${job.error.message}` : ''}.`);
  }
}

const ENDED: ReadonlySet<string> = new Set(['completed', 'failed', 'canceled']);

/** A transcription's request: JSON with `audio_url` for a URL, else a streamed multipart upload (a path opened by the runtime's platform). */
export async function transcriptionBody(http: HttpCore, audio: AudioInput, fields: Record<string, string | number | boolean | readonly string[] | undefined>, onProgress?: (p: UploadProgress) => void) {
  const url = audioUrlOf(audio);
  if (url !== undefined) return { json: { audio_url: url, ...Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) } };
  return { body: await multipartBody(audio, fields, onProgress, http.platform.openFile) };
}

export class Transcriptions {
  constructor(private readonly http: HttpCore) {}

  /** Submits audio as a job: answers once the audio is stored and priced (status `queued`). */
  async create(params: CreateJobParams, options: CallOptions = {}): Promise<TranscriptionJob> {
    const { audio, ...fields } = params;
    const body = await transcriptionBody(this.http, audio, fields, options.onUploadProgress);
    const res = await this.http.request<TranscriptionJob>({ method: 'POST', path: '/transcriptions', ...body, idempotencyKey: options.idempotencyKey ?? true, ...(options.signal ? { signal: options.signal } : {}) });
    return res.data;
  }

  async get(id: string, options: { words?: boolean; signal?: AbortSignal } = {}): Promise<TranscriptionJob> {
    return (await this.http.request<TranscriptionJob>({ method: 'GET', path: `/transcriptions/${encodeURIComponent(id)}`, query: { words: options.words }, ...(options.signal ? { signal: options.signal } : {}) })).data;
  }

  list(params: { status?: JobStatus; limit?: number } = {}): PagePromise<TranscriptionJob> {
    return new PagePromise((cursor) => this.http.request<Page<TranscriptionJob>>({ method: 'GET', path: '/transcriptions', query: { ...params, cursor } }).then((r) => r.data));
  }

  /** A completed job's transcript as text, SRT or WebVTT (409 `transcription_not_ready` before it completed). */
  async transcript(id: string, format: TranscriptFormat): Promise<string> {
    const res = await this.http.send({ method: 'GET', path: `/transcriptions/${encodeURIComponent(id)}`, query: { response_format: format } });
    return res.text();
  }

  /** Stops a queued or processing job; its credits come back. */
  async cancel(id: string): Promise<TranscriptionJob> {
    return (await this.http.request<TranscriptionJob>({ method: 'POST', path: `/transcriptions/${encodeURIComponent(id)}/cancel` })).data;
  }

  /**
   * The job's states as they change, over Server-Sent Events, until it ends (the first event is
   * its state now).
   */
  async *stream(id: string, options: { signal?: AbortSignal } = {}): AsyncGenerator<TranscriptionJob> {
    const res = await this.http.send({ method: 'GET', path: `/transcriptions/${encodeURIComponent(id)}/events`, headers: { accept: 'text/event-stream' }, ...(options.signal ? { signal: options.signal } : {}), timeoutMs: 24 * 3600_000 });
    if (!res.body) return;
    const queue: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (e) => queue.push(e) });
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        parser.feed(value);
        while (queue.length > 0) {
          const job = JSON.parse(queue.shift()!.data) as TranscriptionJob;
          yield job;
          if (ENDED.has(job.status)) return;
        }
      }
    } finally {
      await reader.cancel().catch(() => undefined);
    }
  }

  /**
   * Waits for the job to end, following its events (and polling if the stream drops); answers
   * the completed job, or throws {@link JobEndedError} for a failed or canceled one.
   */
  async wait(id: string, options: { signal?: AbortSignal; onProgress?: (job: TranscriptionJob) => void; words?: boolean } = {}): Promise<TranscriptionJob> {
    for (let pause = 1_000; ; pause = Math.min(pause * 2, 15_000)) {
      try {
        for await (const job of this.stream(id, options.signal ? { signal: options.signal } : {})) {
          options.onProgress?.(job);
          if (ENDED.has(job.status)) return this.ended(options.words ? await this.get(id, { words: true }) : job);
        }
      } catch (err) {
        if (options.signal?.aborted || !(err instanceof MurmurError) || err instanceof JobEndedError) throw err;
      }
      const job = await this.get(id, { ...(options.words ? { words: true } : {}) });
      if (ENDED.has(job.status)) return this.ended(job);
      await new Promise((r) => setTimeout(r, pause));
    }
  }

  private ended(job: TranscriptionJob): TranscriptionJob {
    if (job.status !== 'completed') throw new JobEndedError(job);
    return job;
  }
}
