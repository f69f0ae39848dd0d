/**
 * Live transcription over `GET /api/v1/listen` (docs/live.md): a session that sends audio frames
 * and hands back the server's events — as an async iterator, as callbacks, or both — and ends
 * with the `closed` summary or the SDK's typed error for the close code (4000 + the HTTP status
 * of the contract's error code, so one table serves REST and the socket).
 *
 * Written against the standard WebSocket API only, so the same code runs in browsers, workers,
 * edge runtimes and Node 22+ (its global WebSocket); Node 20 passes a constructor (`ws`). The key
 * goes in `Authorization` where the constructor can send headers (Node's global, `ws`); a browser
 * cannot, so it connects with a single-use listen token that its own server asked for.
 */
import { apiError, ConnectionError, MurmurError, type ApiError, type ApiErrorBody } from './errors.js';

export type LiveEncoding = 'linear16' | 'webm' | 'ogg';

/** The stream's options (query parameters of GET /listen). */
export interface LiveParams {
  /** `linear16` (16-bit little-endian mono PCM, the default), `webm` or `ogg` (Opus, as MediaRecorder makes it). */
  encoding?: LiveEncoding;
  /** Of `linear16` audio: 8000–48000 (default 16000). */
  sample_rate?: number;
  language?: string;
  /** Store the session as a recording when it ends (`closed.recording_id`). */
  save?: boolean;
  title?: string;
  folder_id?: string;
}

/** One word of a final. Times are seconds of audio from the stream's first byte. */
export interface LiveWord {
  text: string;
  start: number;
  end: number;
  confidence: number | null;
  speaker: string | null;
}

/** The first message, once the stream is ready. */
export interface LiveOpen {
  type: 'open';
  /** The session (`trn_…`). */
  id: string;
  model: string;
  encoding: LiveEncoding;
  sample_rate: number | null;
  limits: { max_frame_bytes: number; idle_seconds: number; max_speed: number; max_seconds: number; max_streams: number };
}
export interface LiveSpeechStarted {
  type: 'speech_started';
  at: number;
}
/** The words so far of the utterance being spoken: unstable, replaced by the next partial or the final. */
export interface LivePartial {
  type: 'partial';
  text: string;
  start: number;
  end: number;
}
/** An utterance's stable words. */
export interface LiveFinal {
  type: 'final';
  text: string;
  start: number;
  end: number;
  words: LiveWord[];
}
export interface LiveUtteranceEnd {
  type: 'utterance_end';
  at: number;
}
/** The last message of a stream: what it received and cost. */
export interface LiveClosed {
  type: 'closed';
  duration_seconds: number;
  credits_charged: number;
  recording_id: string | null;
}
/** What a session yields after `open`. */
export type LiveEvent = LiveSpeechStarted | LivePartial | LiveFinal | LiveUtteranceEnd | LiveClosed;
type LiveEventType = LiveEvent['type'];

/** The part of the standard WebSocket a session uses (browsers, Node 22+, undici, `ws`). */
export interface WebSocketLike {
  readonly readyState: number;
  readonly bufferedAmount: number;
  binaryType: string;
  send(data: string | ArrayBufferView | ArrayBuffer): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: any) => void) | null;
  onmessage: ((event: any) => void) | null;
  onerror: ((event: any) => void) | null;
  onclose: ((event: any) => void) | null;
}

/**
 * A WebSocket constructor: the global one by default; `ws`'s on Node 20. Where it takes a second
 * argument `{ headers }` (Node's global, Bun's, `ws`) the key travels in `Authorization`.
 */
export type WebSocketConstructor = new (url: string, protocolsOrOptions?: any) => WebSocketLike;

export interface LiveConnectOptions {
  /** The WebSocket to use; default `globalThis.WebSocket` (Node 20 has none: pass `WebSocket` from the `ws` package). */
  webSocket?: WebSocketConstructor;
  /** Sends `{"type":"keepalive"}` after this many ms without audio (the server closes a stream silent for 15 s); off by default. */
  keepAliveMs?: number;
  /** Aborting ends the stream at once, without waiting for its last finals. */
  signal?: AbortSignal;
}

/** How a `Murmur` client authenticates its stream. */
export interface ListenOptions extends LiveParams, LiveConnectOptions {
  /**
   * `header`: the key in `Authorization` (servers; the default where the WebSocket can send
   * headers); `token`: a single-use listen token fetched first with the key (the default elsewhere).
   */
  auth?: 'header' | 'token';
}

/** A stream opened without a key, from a browser: with a listen token its server made, or the URL it made. */
export interface ConnectLiveOptions extends LiveParams, LiveConnectOptions {
  /** The Murmur to connect to (`https://api.…`), with `token`. */
  baseUrl?: string;
  /** A listen token (`lst_…`, POST /listen/tokens, 60 s, single use). */
  token?: string;
  /** The whole `wss://…/api/v1/listen?token=…` URL instead (`murmur.listenUrl`); its own query wins. */
  url?: string;
}

/** The socket closed without a contract error: dropped, a frame cut off (1009), or a draining server (1012, reconnect). */
export class LiveConnectionError extends ConnectionError {
  override readonly name = 'LiveConnectionError';
  constructor(
    message: string,
    readonly closeCode: number,
    readonly reason: string,
  ) {
    super(message);
  }
}

const WS_OPEN = 1;
const CLOSE_NORMAL = 1000;
const CLOSE_DRAINING = 1012;
/** docs/live.md: a frame is at most 128 KiB (the `open` message says so too). */
const DEFAULT_MAX_FRAME_BYTES = 128 * 1024;
/** How much may wait in the socket's buffer before `pipe` waits for it to drain. */
const HIGH_WATER_BYTES = 1024 * 1024;
const DRAIN_POLL_MS = 20;

/** The WebSocket URL of a stream: `ws(s)://…/api/v1/listen?…`. */
export function listenUrlOf(baseUrl: string, params: LiveParams & { token?: string }): string {
  const url = new URL(`${baseUrl.replace(/\/+$/, '')}/api/v1/listen`);
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, String(v));
  url.protocol = url.protocol === 'https:' || url.protocol === 'wss:' ? 'wss:' : 'ws:';
  return url.toString();
}

/** The stream's query from options that also hold other things. */
export function liveParamsOf(options: LiveParams): LiveParams {
  const { encoding, sample_rate, language, save, title, folder_id } = options;
  return { encoding, sample_rate, language, save, title, folder_id };
}

/** The runtime's WebSocket, or a clear error where it has none. */
export function webSocketOf(given: WebSocketConstructor | undefined): WebSocketConstructor {
  const ctor = given ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  if (!ctor) throw new MurmurError('This runtime has no WebSocket (Node 20): pass `webSocket`, such as the WebSocket class of the `ws` package.');
  return ctor;
}

/**
 * Whether `ctor` takes `{ headers }` as its second argument: `ws` (which has `terminate`), and the
 * global WebSocket of Node (undici) and Bun. Browsers' and Deno's do not: they would take the
 * object for a subprotocol.
 */
export function takesHeaders(ctor: WebSocketConstructor): boolean {
  if (typeof (ctor.prototype as { terminate?: unknown } | undefined)?.terminate === 'function') return true;
  const versions = (globalThis as { process?: { versions?: Record<string, string | undefined> } }).process?.versions;
  return ctor === (globalThis as { WebSocket?: unknown }).WebSocket && typeof versions?.node === 'string' && versions.deno === undefined;
}

/**
 * Opens a stream from a browser (or anywhere without the key) with a listen token or the URL a
 * server made with one; resolves once the stream is ready (`open`), or throws the typed error
 * it was refused with (AuthenticationError for a used or expired token, InsufficientCreditsError, …).
 */
export function connectLive(options: ConnectLiveOptions): Promise<LiveSession> {
  let url: string;
  if (options.url) {
    const given = new URL(options.url);
    const params = liveParamsOf(options);
    for (const [k, v] of Object.entries(params)) if (v !== undefined && !given.searchParams.has(k)) given.searchParams.set(k, String(v));
    url = given.toString();
  } else {
    if (!options.baseUrl || !options.token) throw new MurmurError('connectLive needs `baseUrl` and `token` (a listen token from your server), or `url`.');
    url = listenUrlOf(options.baseUrl, { ...liveParamsOf(options), token: options.token });
  }
  return openLiveSession(webSocketOf(options.webSocket), url, undefined, options);
}

/** Opens the socket (with `headers` when given), and resolves with the session once `open` arrives. */
export function openLiveSession(ctor: WebSocketConstructor, url: string, headers: Record<string, string> | undefined, options: LiveConnectOptions): Promise<LiveSession> {
  const socket = headers ? new ctor(url, { headers }) : new ctor(url);
  return LiveSession.start(socket, new URL(url).host, options);
}

type Listener<T> = (value: T) => void;
interface Subscriber {
  push(event: LiveEvent): void;
  end(): void;
}

/**
 * One live stream. Send audio with {@link send} or {@link pipe}; read events by iterating
 * (`for await (const e of session)`) or with {@link on}; end with {@link close}, which resolves
 * with the `closed` summary once the last finals came. Events that arrive before anything reads
 * them are kept for the first iterator or listener.
 */
export class LiveSession implements AsyncIterable<LiveEvent> {
  /** The session's id (`trn_…`). */
  readonly id: string;
  /** The server's `open` message: model, encoding, sample rate and limits. */
  readonly opened: LiveOpen;
  /** Settles when the stream has ended: the `closed` summary, or the typed error it ended with. */
  readonly done: Promise<LiveClosed>;

  private readonly listeners = new Map<string, Set<Listener<never>>>();
  private readonly subscribers = new Set<Subscriber>();
  private backlog: LiveEvent[] | undefined = [];
  private summary: LiveClosed | undefined;
  private failure: Error | undefined;
  private closing = false;
  private ended = false;
  /** Set by {@link abort}: the end is the caller's, whatever code the server answered. */
  private aborted: Error | undefined;
  private lastSent = Date.now();
  private keepAlive: ReturnType<typeof setInterval> | undefined;
  private settle!: { resolve: (closed: LiveClosed) => void; reject: (err: Error) => void };

  private constructor(
    private readonly socket: WebSocketLike,
    opened: LiveOpen,
    options: LiveConnectOptions,
  ) {
    this.opened = opened;
    this.id = opened.id;
    this.done = new Promise<LiveClosed>((resolve, reject) => (this.settle = { resolve, reject }));
    // Whoever awaits `done` (or close()) sees the failure; nobody awaiting it is no unhandled rejection.
    this.done.catch(() => undefined);
    if (options.keepAliveMs && options.keepAliveMs > 0) {
      const every = options.keepAliveMs;
      this.keepAlive = setInterval(() => {
        if (Date.now() - this.lastSent >= every) this.control('keepalive');
      }, Math.max(250, every / 4));
    }
    const signal = options.signal;
    signal?.addEventListener('abort', () => this.abort(signal.reason instanceof Error ? signal.reason : undefined), { once: true });
  }

  /** Waits for the server's `open` (or the refusal) on a new socket. */
  static start(socket: WebSocketLike, host: string, options: LiveConnectOptions): Promise<LiveSession> {
    socket.binaryType = 'arraybuffer';
    return new Promise<LiveSession>((resolve, reject) => {
      if (options.signal?.aborted) {
        socket.close(CLOSE_NORMAL);
        return reject(options.signal.reason);
      }
      let errorBody: ApiErrorBody | undefined;
      let session: LiveSession | undefined;
      socket.onmessage = (event: { data: unknown }) => {
        const message = parseMessage(event.data);
        if (!message) return;
        if (message.type === 'error') errorBody = message.error;
        else if (message.type === 'open' && !session) {
          session = new LiveSession(socket, message, options);
          resolve(session);
        } else session?.receive(message as LiveEvent);
      };
      socket.onerror = () => undefined;
      socket.onclose = (event: { code: number; reason: string }) => {
        const failure = closeFailure(event.code, String(event.reason ?? ''), errorBody, host);
        if (session) session.finish(failure);
        else reject(failure ?? new LiveConnectionError(`The live stream at ${host} closed before it opened.`, event.code, String(event.reason ?? '')));
      };
    });
  }

  /** Sends audio: bytes in the declared encoding, cut into frames the server takes (≤ 128 KiB). */
  send(audio: ArrayBuffer | ArrayBufferView): void {
    this.assertOpen();
    const bytes = audio instanceof ArrayBuffer ? new Uint8Array(audio) : new Uint8Array(audio.buffer, audio.byteOffset, audio.byteLength);
    const frame = this.opened.limits?.max_frame_bytes ?? DEFAULT_MAX_FRAME_BYTES;
    for (let at = 0; at < bytes.byteLength; at += frame) this.socket.send(bytes.subarray(at, Math.min(at + frame, bytes.byteLength)));
    this.lastSent = Date.now();
  }

  /**
   * Sends every chunk of `source` (a Node Readable, any iterable or async iterable of bytes, or a
   * web ReadableStream) as it comes, waiting whenever the socket's buffer is full; resolves with the
   * bytes sent once the source ended (the stream stays open: {@link close} it). With `realTime`,
   * linear16 audio is paced as spoken, in 100 ms frames — a recording streamed faster than twice
   * real time is refused after its first 10 s (`audio_too_fast`).
   */
  async pipe(source: AsyncIterable<ArrayBuffer | ArrayBufferView> | Iterable<ArrayBuffer | ArrayBufferView> | ReadableStream<Uint8Array>, options: { realTime?: boolean } = {}): Promise<number> {
    const rate = options.realTime ? this.bytesPerSecond() : undefined;
    const started = Date.now();
    let sent = 0;
    for await (const chunk of source instanceof ReadableStream ? chunksOf(source) : source) {
      const bytes = chunk instanceof ArrayBuffer ? new Uint8Array(chunk) : new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      const step = rate ? Math.max(2, Math.round(rate / 10 / 2) * 2) : bytes.byteLength;
      for (let at = 0; at < bytes.byteLength; at += step) {
        const frame = bytes.subarray(at, Math.min(at + step, bytes.byteLength));
        this.send(frame);
        sent += frame.byteLength;
        await this.drained();
        if (rate) await pause(started + (sent / rate) * 1000 - Date.now());
      }
    }
    this.assertOpen();
    return sent;
  }

  /** Ends the current utterance now: its `final` comes at once. */
  finalize(): void {
    this.assertOpen();
    this.control('finalize');
  }

  /** Keeps a silent stream open (see `keepAliveMs` to have it sent for you). */
  keepalive(): void {
    this.assertOpen();
    this.control('keepalive');
  }

  /**
   * Ends the stream: the server sends the last finals and `closed`, then closes (1000). Resolves
   * with that summary, or throws the typed error the stream ended with.
   */
  close(): Promise<LiveClosed> {
    if (!this.ended && !this.closing) {
      this.closing = true;
      this.control('close');
    }
    return this.done;
  }

  /**
   * Drops the connection at once, without the last finals; the server keeps (and charges) what it
   * received. `done` and any iterator then fail with `reason` (default a {@link LiveConnectionError}).
   */
  abort(reason?: Error): void {
    if (this.ended || this.aborted) return;
    this.closing = true;
    this.aborted = reason ?? new LiveConnectionError('The live stream was aborted by the client.', CLOSE_NORMAL, 'aborted');
    this.socket.close(CLOSE_NORMAL, 'aborted');
  }

  /** Calls `listener` with every event of that type (`error`: the failure the stream ended with); answers how to stop. */
  on<T extends LiveEventType>(type: T, listener: Listener<Extract<LiveEvent, { type: T }>>): () => void;
  on(type: 'error', listener: Listener<Error>): () => void;
  on(type: string, listener: Listener<never>): () => void {
    const set = this.listeners.get(type) ?? new Set();
    this.listeners.set(type, set);
    set.add(listener);
    for (const event of this.takeBacklog()) if (event.type === type) (listener as Listener<LiveEvent>)(event);
    if (type === 'error' && this.failure) (listener as Listener<Error>)(this.failure);
    return () => set.delete(listener);
  }

  /** Every event until `closed`; throws the typed error if the stream fails. */
  async *[Symbol.asyncIterator](): AsyncGenerator<LiveEvent> {
    const queue = this.takeBacklog();
    let wake: (() => void) | undefined;
    const subscriber: Subscriber = {
      push: (event) => {
        queue.push(event);
        wake?.();
      },
      end: () => wake?.(),
    };
    this.subscribers.add(subscriber);
    try {
      for (;;) {
        const event = queue.shift();
        if (event) {
          yield event;
          continue;
        }
        if (this.ended) {
          if (this.failure) throw this.failure;
          return;
        }
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    } finally {
      this.subscribers.delete(subscriber);
    }
  }

  private receive(event: LiveEvent): void {
    if (event.type === 'closed') this.summary = event;
    if (this.backlog) this.backlog.push(event);
    for (const listener of this.listeners.get(event.type) ?? []) (listener as Listener<LiveEvent>)(event);
    for (const s of this.subscribers) s.push(event);
  }

  /** The socket closed: settle with the summary, or with the failure. */
  private finish(failure: Error | undefined): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.keepAlive);
    // A draining server (1012) sent every final and `closed`: for a client that was closing anyway, that is the end it asked for.
    const asked = this.summary && this.closing && failure instanceof LiveConnectionError && failure.closeCode === CLOSE_DRAINING;
    this.failure = this.aborted ?? (asked ? undefined : (failure ?? (this.summary ? undefined : new LiveConnectionError('The live stream closed without its summary.', CLOSE_NORMAL, ''))));
    if (this.failure) {
      this.settle.reject(this.failure);
      for (const listener of this.listeners.get('error') ?? []) (listener as Listener<Error>)(this.failure);
    } else this.settle.resolve(this.summary!);
    for (const s of this.subscribers) s.end();
  }

  private takeBacklog(): LiveEvent[] {
    const kept = this.backlog ?? [];
    this.backlog = undefined;
    return [...kept];
  }

  private control(type: 'keepalive' | 'finalize' | 'close'): void {
    if (this.socket.readyState !== WS_OPEN) return;
    this.socket.send(JSON.stringify({ type }));
    this.lastSent = Date.now();
  }

  private assertOpen(): void {
    if (this.failure) throw this.failure;
    if (this.ended || this.closing) throw new MurmurError('The live stream is closing or closed: open a new one to send more.');
  }

  private bytesPerSecond(): number {
    if (this.opened.encoding !== 'linear16' || !this.opened.sample_rate) throw new MurmurError('`realTime` paces linear16 audio; WebM and Ogg come paced by their recorder.');
    return this.opened.sample_rate * 2;
  }

  /** Resolves once the socket's buffer is below its high-water mark (the WebSocket API has no drain event). */
  private async drained(): Promise<void> {
    while (this.socket.bufferedAmount > HIGH_WATER_BYTES && !this.ended) await pause(DRAIN_POLL_MS);
    this.assertOpen();
  }
}

/**
 * The failure a close code means, or undefined for a normal end: 4000 + status is the contract's
 * error (the `error` message before it holds its body); any other code is the connection's.
 */
export function closeFailure(code: number, reason: string, body: ApiErrorBody | undefined, host: string): Error | undefined {
  if (code === CLOSE_NORMAL) return undefined;
  if (code >= 4000 && code < 5000) {
    const status = code - 4000;
    return liveApiError(status, body ?? { type: 'api_error', code: reason || `http_${status}`, message: `The live stream was closed with ${code} ${reason}.`, param: null, request_id: '' });
  }
  if (code === CLOSE_DRAINING) return new LiveConnectionError(`The Murmur at ${host} is restarting (${reason || 'server_draining'}); every final was sent. Open a new stream.`, code, reason);
  return new LiveConnectionError(`The live stream to ${host} closed unexpectedly (${code}${reason ? ` ${reason}` : ''}).`, code, reason);
}

function liveApiError(status: number, body: ApiErrorBody): ApiError {
  return apiError(status, body, new Headers());
}

/** A text frame's message; anything else (the server sends none) is passed over. */
function parseMessage(data: unknown): LiveOpen | LiveEvent | { type: 'error'; error: ApiErrorBody } | undefined {
  if (typeof data !== 'string') return undefined;
  try {
    const message = JSON.parse(data) as { type?: unknown } | null;
    return typeof message?.type === 'string' ? (message as LiveOpen | LiveEvent) : undefined;
  } catch {
    return undefined;
  }
}

/** A web ReadableStream's chunks (not every browser iterates one with `for await`). */
async function* chunksOf(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));
