/**
 * The one path every call takes: the key, the base URL, a timeout, typed errors, and retries.
 *
 * Retries happen on 429 and 503 only (never on another 4xx, never on a 5xx that may have done
 * work), waiting what the API asks — `Retry-After`, else the `RateLimit` headers — or a backoff
 * with jitter. An AI call (it spends credits) carries an `Idempotency-Key`, the same on every try,
 * so a retry is replayed by the API instead of charged again. A body that is a one-shot stream is
 * never retried (it cannot be sent twice).
 */
import { apiError, ConnectionError, MurmurError, retryAfterSeconds, TimeoutError, type ApiErrorBody } from './errors.js';
import { WEB_PLATFORM, type Platform } from './platform.js';
import type { PreparedBody } from './uploads.js';

export const DEFAULT_BASE_URL = 'http://localhost:8080';
export const DEFAULT_TIMEOUT_MS = 10 * 60_000;
export const DEFAULT_MAX_RETRIES = 2;
/** The longest wait a retry accepts; a longer Retry-After is the caller's to decide (the error is thrown). */
export const MAX_RETRY_WAIT_SECONDS = 60;

export interface ClientOptions {
  /** `svc_…`; default `MURMUR_API_KEY` from the environment. */
  apiKey?: string;
  /** Default `MURMUR_BASE_URL`, else http://localhost:8080 (the `npm start` of a local Murmur). */
  baseUrl?: string;
  /** Per request, in milliseconds (default 10 minutes: long uploads). */
  timeoutMs?: number;
  /** Retries of a 429 or 503 (default 2). */
  maxRetries?: number;
  /** A fetch of your own (tests, proxies); default the global one. */
  fetch?: typeof fetch;
}

export type QueryValue = string | number | boolean | Date | undefined | null | readonly string[];

export interface RequestOptions {
  method: 'GET' | 'POST';
  path: string;
  query?: Record<string, QueryValue>;
  /** A JSON body (objects) or a prepared one with its content type. */
  json?: unknown;
  body?: PreparedBody;
  /** An AI call: it gets an Idempotency-Key (yours, or a fresh one), the same on every retry. */
  idempotencyKey?: string | true;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** What a call answered: the parsed body and the response's headers. */
export interface Answer<T> {
  data: T;
  headers: Headers;
  status: number;
}

function env(name: string): string | undefined {
  const p = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return p?.env?.[name];
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      reject(signal.reason);
    }, { once: true });
  });

/** Seconds until the API frees a slot, from `RateLimit: "ai";r=0;t=40` or `RateLimit-Reset`. */
export function rateLimitResetSeconds(headers: Headers): number | null {
  const t = /(?:^|;)\s*t=(\d+)/.exec(headers.get('ratelimit') ?? '');
  if (t) return Number(t[1]);
  const reset = Number(headers.get('ratelimit-reset'));
  return headers.has('ratelimit-reset') && Number.isFinite(reset) ? reset : null;
}

export class HttpCore {
  readonly apiKey: string;
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  /** What the runtime adds (file paths, uploads with backpressure): platform.ts. */
  readonly platform: Platform;
  private readonly fetchImpl: typeof fetch;
  /** Streamed bodies go through the platform's upload (Node: node-upload.ts), unless a fetch of the caller's is given. */
  private readonly upload: Platform['upload'];

  constructor(opts: ClientOptions = {}, platform: Platform = WEB_PLATFORM) {
    const apiKey = opts.apiKey ?? env('MURMUR_API_KEY');
    if (!apiKey) throw new MurmurError('No API key: pass `apiKey`, or set MURMUR_API_KEY (create one in the app under Settings → Developer).');
    this.apiKey = apiKey;
    this.baseUrl = (opts.baseUrl ?? env('MURMUR_BASE_URL') ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxRetries = opts.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.fetchImpl = opts.fetch ?? ((...args) => globalThis.fetch(...args));
    this.platform = platform;
    this.upload = opts.fetch === undefined ? platform.upload : undefined;
  }

  url(path: string, query?: Record<string, QueryValue>): string {
    const url = new URL(`${this.baseUrl}/api/v1${path}`);
    for (const [k, v] of Object.entries(query ?? {})) {
      if (v === undefined || v === null) continue;
      url.searchParams.set(k, v instanceof Date ? v.toISOString() : Array.isArray(v) ? v.join(',') : String(v));
    }
    return url.toString();
  }

  /** Sends a request (retrying as above) and answers its JSON. */
  async request<T>(opts: RequestOptions): Promise<Answer<T>> {
    const res = await this.send(opts);
    const text = await res.text();
    return { data: (text === '' ? undefined : JSON.parse(text)) as T, headers: res.headers, status: res.status };
  }

  /** Sends a request (retrying as above) and answers the raw response of a 2xx; throws the typed error otherwise. */
  async send(opts: RequestOptions): Promise<Response> {
    const idempotencyKey = opts.idempotencyKey === true ? globalThis.crypto.randomUUID() : opts.idempotencyKey;
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.apiKey}`,
      accept: 'application/json',
      ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
      ...opts.headers,
    };
    let makeBody: () => RequestInit['body'] = () => undefined;
    let replayable = true;
    if (opts.json !== undefined) {
      headers['content-type'] = 'application/json';
      const text = JSON.stringify(opts.json);
      makeBody = () => text;
    } else if (opts.body) {
      headers['content-type'] = opts.body.contentType;
      if (opts.body.length !== undefined) headers['content-length'] = String(opts.body.length);
      makeBody = opts.body.make;
      replayable = opts.body.replayable;
    }
    const url = this.url(opts.path, opts.query);
    for (let attempt = 0; ; attempt++) {
      const timeout = AbortSignal.timeout(opts.timeoutMs ?? this.timeoutMs);
      const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
      let res: Response;
      const body = makeBody();
      try {
        res =
          body instanceof ReadableStream && this.upload
            ? await this.upload(url, { method: opts.method, headers, body, signal })
            : await this.fetchImpl(url, { method: opts.method, headers, body, signal, ...(body instanceof ReadableStream ? { duplex: 'half' } : {}) } as RequestInit);
      } catch (err) {
        if (opts.signal?.aborted) throw opts.signal.reason;
        if (timeout.aborted) throw new TimeoutError(`No answer from ${this.baseUrl} within ${opts.timeoutMs ?? this.timeoutMs} ms.`);
        throw new ConnectionError(`Could not reach ${this.baseUrl}: ${(err as Error).message}`, { cause: err });
      }
      if (res.ok) return res;
      const wait = this.retryWait(res, attempt, replayable);
      if (wait === null) throw await errorOf(res);
      await res.body?.cancel().catch(() => undefined);
      await sleep(wait * 1000, opts.signal);
    }
  }

  /** Seconds to wait before retrying this answer, or null when it is not retried. */
  private retryWait(res: Response, attempt: number, replayable: boolean): number | null {
    if ((res.status !== 429 && res.status !== 503) || attempt >= this.maxRetries || !replayable) return null;
    const asked = retryAfterSeconds(res.headers) ?? (res.status === 429 ? rateLimitResetSeconds(res.headers) : null);
    if (asked !== null) return asked <= MAX_RETRY_WAIT_SECONDS ? asked : null;
    // Exponential backoff with full jitter: 0.5 s, 1 s, 2 s, … at most 8 s.
    return Math.random() * Math.min(8, 0.5 * 2 ** attempt);
  }
}

/** The typed error of a non-2xx answer (a body that is not the API's becomes an api_error). */
async function errorOf(res: Response): Promise<Error> {
  const text = await res.text().catch(() => '');
  let body: ApiErrorBody | undefined;
  try {
    body = (JSON.parse(text) as { error?: ApiErrorBody }).error;
  } catch {
    body = undefined;
  }
  return apiError(res.status, body ?? { type: 'api_error', code: 'http_' + res.status, message: text.slice(0, 200) || `HTTP ${res.status}`, param: null, request_id: res.headers.get('x-request-id') ?? '' }, res.headers);
}
