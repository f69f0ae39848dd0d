/**
 * The Murmur client: one object per key, its resources as properties.
 *
 *   const murmur = new Murmur();                       // MURMUR_API_KEY, MURMUR_BASE_URL
 *   const t = await murmur.transcribe({ audio: './standup.m4a', save: true });
 *   for await (const r of murmur.recordings.list()) console.log(r.title);
 */
import { HttpCore, type ClientOptions } from './http.js';
import { Listen, type ListenToken } from './listen.js';
import type { LiveParams } from './live.js';
import { WEB_PLATFORM, type Platform } from './platform.js';
import { Transcriptions, transcriptionBody, type CallOptions, type TranscriptFormat, type TranscriptionOptions } from './jobs.js';
import { PagePromise, type Page } from './pagination.js';
import type { AudioInput } from './uploads.js';
import { verifyWebhook } from './webhooks.js';
import type { components } from './generated/openapi.js';

type Schemas = components['schemas'];
export type Transcription = Schemas['Transcription'];
export type Artifact = Schemas['Artifact'];
export type Recording = Schemas['Recording'];
export type RecordingSummary = Schemas['RecordingSummary'];
export type ThoughtThread = Schemas['ThoughtThread'];
export type ThoughtThreadSummary = Schemas['ThoughtThreadSummary'];
export type Folder = Schemas['Folder'];
export type KnowledgeBase = Schemas['KnowledgeBase'];
export type SearchResult = Schemas['SearchResult'];
export type SearchPage = Schemas['SearchResultList'];
export type RequestLogEntry = Schemas['RequestLogEntry'];
export type Answer = Schemas['Answer'];
export type Usage = Schemas['Usage'];
export type User = Schemas['User'];
export type { ListenToken };
export type ConvertParams = Schemas['ConvertRequest'];
export type AskParams = Schemas['AskRequest'];

export interface TranscribeParams extends TranscriptionOptions {
  audio: AudioInput;
  /** `json` (the default) answers the {@link Transcription}; `text`, `srt` or `vtt` the transcript in that format ({@link FormattedTranscript}). */
  response_format?: 'json' | TranscriptFormat;
}

/** A transcription answered as text, SRT or WebVTT: the body, and the ids the API sends in headers (the body has no room for them). */
export interface FormattedTranscript {
  format: TranscriptFormat;
  content: string;
  transcription_id: string;
  recording_id: string | null;
  credits_charged: number;
}

export interface SearchParams {
  q: string;
  type?: Array<'recording' | 'thought_thread' | 'knowledge_base'>;
  folder_id?: string;
  recording_id?: string;
  created_after?: Date | string;
  created_before?: Date | string;
  limit?: number;
}

export interface ListRecordingsParams {
  q?: string;
  folder_id?: string;
  created_after?: Date | string;
  created_before?: Date | string;
  limit?: number;
}

/** Filters of your request log (GET /requests). */
export interface ListRequestsParams {
  /** A class (`4xx`) or an exact status (`429`). */
  status_code?: string;
  /** A route template (`/api/v1/convert`) or `/mcp`. */
  route?: string;
  /** An MCP tool (`transcribe`) or JSON-RPC method. */
  tool?: string;
  /** One of your keys (key_…) or OAuth connections (con_…). */
  key_id?: string;
  created_after?: Date | string;
  created_before?: Date | string;
  limit?: number;
}

/** A list route as a {@link PagePromise}. */
function lister<T>(http: HttpCore, path: string, query: Record<string, string | number | Date | readonly string[] | undefined>): PagePromise<T> {
  return new PagePromise((cursor) => http.request<Page<T>>({ method: 'GET', path, query: { ...query, cursor } }).then((r) => r.data));
}

export class Recordings {
  constructor(private readonly http: HttpCore) {}

  list(params: ListRecordingsParams = {}): PagePromise<RecordingSummary> {
    return lister(this.http, '/recordings', { ...params });
  }

  async get(id: string, options: { words?: boolean } = {}): Promise<Recording> {
    return (await this.http.request<Recording>({ method: 'GET', path: `/recordings/${encodeURIComponent(id)}`, query: { words: options.words } })).data;
  }

  /** The transcript as text, SRT or WebVTT captions (cut on its words, speaker turns labelled). */
  async transcript(id: string, format: TranscriptFormat): Promise<string> {
    const res = await this.http.send({ method: 'GET', path: `/recordings/${encodeURIComponent(id)}`, query: { response_format: format } });
    return res.text();
  }

  /** Names speakers (`{S1: "Maria"}`; "" clears a name). */
  async nameSpeakers(id: string, names: Record<string, string>): Promise<Recording> {
    return (await this.http.request<Recording>({ method: 'POST', path: `/recordings/${encodeURIComponent(id)}/speakers`, json: { names } })).data;
  }
}

/**
 * The client. This class is the web platform's (browsers, workers, edge runtimes: the `browser`
 * entry); the Node entry's `Murmur` (node-client.ts) is this one with file paths and uploads
 * with backpressure.
 */
export class Murmur {
  /** What the runtime adds; a subclass for a runtime sets its own. */
  protected static readonly platform: Platform = WEB_PLATFORM;
  readonly http: HttpCore;
  readonly recordings: Recordings;
  /** Live transcription over a WebSocket: `await murmur.listen.connect()`. */
  readonly listen: Listen;
  readonly transcriptions: Transcriptions;
  readonly threads: { list(params?: { limit?: number }): PagePromise<ThoughtThreadSummary>; get(id: string): Promise<ThoughtThread> };
  readonly folders: { list(params?: { limit?: number }): PagePromise<Folder> };
  readonly knowledgeBases: { list(params?: { limit?: number }): PagePromise<KnowledgeBase> };
  /** Your request log: every call of your keys and connections, 30 days, newest first (no bodies). */
  readonly requests: { list(params?: ListRequestsParams): PagePromise<RequestLogEntry> };
  readonly webhooks = { verify: verifyWebhook };

  constructor(options: ClientOptions = {}) {
    const http = new HttpCore(options, (new.target as typeof Murmur).platform);
    this.http = http;
    this.listen = new Listen(http);
    this.recordings = new Recordings(http);
    this.transcriptions = new Transcriptions(http);
    this.threads = {
      list: (params = {}) => lister(http, '/thought-threads', { ...params }),
      get: async (id) => (await http.request<ThoughtThread>({ method: 'GET', path: `/thought-threads/${encodeURIComponent(id)}` })).data,
    };
    this.folders = { list: (params = {}) => lister(http, '/folders', { ...params }) };
    this.knowledgeBases = { list: (params = {}) => lister(http, '/knowledge-bases', { ...params }) };
    this.requests = { list: (params = {}) => lister(http, '/requests', { ...params }) };
  }

  /** Your profile, plan and usage. */
  async me(): Promise<User> {
    return (await this.http.request<User>({ method: 'GET', path: '/me' })).data;
  }

  /** Plan limits, credits, spending and the rate-limit window. */
  async usage(): Promise<Usage> {
    return (await this.http.request<Usage>({ method: 'GET', path: '/usage' })).data;
  }

  /**
   * Transcribes audio in one call (up to 500 MB, streamed from a path, Blob, bytes or stream, or
   * downloaded by Murmur from a URL). Spends credits: an Idempotency-Key makes retries free.
   * With `response_format` text, srt or vtt, answers the transcript in that format.
   */
  transcribe(params: TranscribeParams & { response_format: TranscriptFormat }, options?: CallOptions): Promise<FormattedTranscript>;
  transcribe(params: TranscribeParams & { response_format?: 'json' }, options?: CallOptions): Promise<Transcription>;
  transcribe(params: TranscribeParams, options?: CallOptions): Promise<Transcription | FormattedTranscript>;
  async transcribe(params: TranscribeParams, options: CallOptions = {}): Promise<Transcription | FormattedTranscript> {
    const { audio, response_format: format = 'json', ...fields } = params;
    const body = await transcriptionBody(this.http, audio, format === 'json' ? fields : { ...fields, response_format: format }, options.onUploadProgress);
    const req = { method: 'POST', path: '/transcribe', ...body, idempotencyKey: options.idempotencyKey ?? true, ...(options.signal ? { signal: options.signal } : {}) } as const;
    if (format === 'json') return (await this.http.request<Transcription>(req)).data;
    const res = await this.http.send(req);
    return {
      format,
      content: await res.text(),
      transcription_id: res.headers.get('x-transcription-id') ?? '',
      recording_id: res.headers.get('x-recording-id'),
      credits_charged: Number(res.headers.get('x-credits-charged') ?? 0),
    };
  }

  /** Turns a transcript (or a recording's) into a summary, email, spreadsheet, … Spends credits. */
  async convert(params: ConvertParams, options: Omit<CallOptions, 'onUploadProgress'> = {}): Promise<Artifact> {
    return (await this.http.request<Artifact>({ method: 'POST', path: '/convert', json: params, idempotencyKey: options.idempotencyKey ?? true, ...(options.signal ? { signal: options.signal } : {}) })).data;
  }

  /** Passages of your library matching `q`, best first: await for a page, iterate for all. */
  search(params: SearchParams): PagePromise<SearchResult, SearchPage> {
    const { type, ...rest } = params;
    return new PagePromise((cursor) =>
      this.http.request<SearchPage>({ method: 'GET', path: '/search', query: { ...rest, ...(type ? { type } : {}), cursor } }).then((r) => r.data),
    );
  }

  /** An answer to a question from your library, citing its passages. Spends credits (none when nothing matches). */
  async ask(params: AskParams, options: Omit<CallOptions, 'onUploadProgress'> = {}): Promise<Answer> {
    return (await this.http.request<Answer>({ method: 'POST', path: '/ask', json: params, idempotencyKey: options.idempotencyKey ?? true, ...(options.signal ? { signal: options.signal } : {}) })).data;
  }

  /** A single-use token (60 s) a browser opens the live-transcription WebSocket with (as `listen.createToken()`). */
  createListenToken(): Promise<ListenToken> {
    return this.listen.createToken();
  }

  /** The live-transcription WebSocket URL for a listen token (as `listen.url()`). */
  listenUrl(params: LiveParams & { token?: string } = {}): string {
    return this.listen.url(params);
  }
}
