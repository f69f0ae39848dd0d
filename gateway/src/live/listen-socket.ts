/**
 * `GET /api/v1/listen`: live transcription over a WebSocket (docs/live.md), served by `ws` on the
 * gateway's own HTTP server. The gateway stays thin: it authenticates (the key in
 * `Authorization`, or a single-use listen token in `?token=` for browsers), admits the stream
 * once against the rate limit, and relays — binary frames and control messages to the
 * transcription service's StreamTranscription, its events back as JSON. It enforces what only
 * the socket can see: frame size, idleness, and the answer to every failure — an `error` message
 * with the contract's body, then a close code of 4000 + its HTTP status, reason the error code.
 * The upgrade is always accepted, so even a refused key gets its reason (a browser cannot read
 * the body of a refused upgrade). Nothing is read from the socket before the caller is known.
 * A draining gateway asks each stream's service to end it (the last finals come), then closes with
 * 1012 `server_draining`: the client reconnects elsewhere and has lost no final words.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import {
  LIVE_CLOSE_DRAINING,
  LIVE_CLOSE_NORMAL,
  LIVE_DRAINING_REASON,
  LIVE_IDLE_SECONDS,
  LIVE_MAX_FRAME_BYTES,
  LIVE_MAX_SECONDS,
  LISTEN_PATH,
  liveCloseCodeOf,
  LISTEN_TOKEN_PATTERN,
  liveOptionsOf,
  MurmurError,
  parseAuthorization,
  toErrorBody,
  type LiveOptions,
} from '@murmur/contract';
import { asPublicError, defineGauge, newRequestId, runWithContext, type DuplexCall, type Logger, type ServiceClients } from '@murmur/kit';
import { billing, transcription, type auth } from '@murmur/proto';
import { authenticate } from '../operations/authenticate';
import { redeemListenToken } from '../operations/listen-tokens';
import { FAILED_KEYS_LOCAL, requireScope } from '../http/authenticate';
import { clientAddressOf } from '../http/client-address';
import { idleTimer, type IdleTimer } from '../http/idle-timer';
import type { FailedKeyLimiter } from '../http/failed-keys';
import type { Express } from 'express';
import type { VerifiedKeyCache } from '../key-cache';
import type { OAuthResourceOptions } from '../oauth/protected-resource';
import { clientMessageOf, controlOf } from './listen-messages';

const tracer = trace.getTracer('murmur-gateway-listen');

/** The path of the endpoint (the contract's, which the app's Record page connects to as well). */
export { LISTEN_PATH };

/** How long a draining gateway waits for its streams' last finals before closing them anyway. */
export const LISTEN_DRAIN_MS = 10_000;

/**
 * How long a stream the gateway ends (idle, a bad frame) waits for the service to settle it
 * (charge what was received, save) before the close: a client that reads its usage after the close
 * sees it settled.
 */
export const LISTEN_SETTLE_MS = 5_000;

export interface ListenDeps {
  clients: ServiceClients;
  /**
   * The gateway's express app: its `trust proxy` setting gives a socket's client address and its
   * bound on unknown keys (failed-keys.ts) counts a socket's refused keys and tokens with REST's.
   */
  app?: Express;
  log: Logger;
  keyCache?: VerifiedKeyCache;
  /** REST's resource identifier comes from it (an MCP OAuth token does not open a stream). */
  oauth?: OAuthResourceOptions;
  /** No message for this long closes a stream (default {@link LIVE_IDLE_SECONDS}); tests use less. */
  idleMs?: number;
}

export interface ListenEndpoint {
  /** Streams open now. */
  readonly open: number;
  /** Ends every stream as a draining gateway does (see the file comment); new ones are refused the same way. */
  drain(graceMs?: number): Promise<void>;
}

const ENCODINGS = {
  linear16: transcription.AudioEncoding.AUDIO_ENCODING_LINEAR16,
  webm: transcription.AudioEncoding.AUDIO_ENCODING_WEBM,
  ogg: transcription.AudioEncoding.AUDIO_ENCODING_OGG,
} as const;

type Call = DuplexCall<transcription.StreamTranscriptionRequest, transcription.StreamTranscriptionResponse>;

/**
 * The answer to a plain request for the endpoint (no WebSocket upgrade): how to connect. The
 * WebSocket is described by the AsyncAPI document, not the OpenAPI one, whose routes are HTTP's.
 */
export function listenWithoutUpgrade(): never {
  throw new MurmurError(
    'invalid_request',
    'GET /api/v1/listen is a WebSocket endpoint: connect with a WebSocket client (Upgrade: websocket). The protocol: docs/live.md and GET /api/v1/asyncapi.json.',
    { param: 'Upgrade' },
  );
}

/** Live streams open in this process, over every endpoint it serves (decision 0041). */
const openStreams = defineGauge('murmur_live_streams_open', 'Live transcription streams (GET /api/v1/listen WebSockets) open on this gateway.');

/** Serves the endpoint on `server`'s upgrade requests; any other upgrade is answered 404. */
export function attachListen(server: Server, deps: ListenDeps): ListenEndpoint {
  // Frames over the limit are answered by the session (a clear 4413); only far larger ones are cut off by ws itself (1009).
  const wss = new WebSocketServer({ noServer: true, maxPayload: 8 * LIVE_MAX_FRAME_BYTES, perMessageDeflate: false });
  const sessions = new Set<ListenSession>();
  let draining = false;
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== LISTEN_PATH) {
      const body = JSON.stringify(toErrorBody(new MurmurError('not_found', 'Only /api/v1/listen is a WebSocket endpoint.'), newRequestId()));
      socket.end(`HTTP/1.1 404 Not Found\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      if (draining) return ws.close(LIVE_CLOSE_DRAINING, LIVE_DRAINING_REASON);
      const session = new ListenSession(ws, req, url, deps);
      sessions.add(session);
      openStreams.inc();
      // One stream, one trace: its span (the caller's traceparent its parent) holds every RPC the stream makes.
      const parent = propagation.extract(ROOT_CONTEXT, req.headers);
      const span = tracer.startSpan(
        `GET ${LISTEN_PATH}`,
        // Never the URL's query: a browser's listen token rides in it.
        { kind: SpanKind.SERVER, attributes: { 'http.request.method': 'GET', 'url.path': LISTEN_PATH, 'http.route': LISTEN_PATH, 'network.protocol.name': 'websocket' } },
        parent,
      );
      void context
        .with(trace.setSpan(parent, span), () => session.run(span))
        .finally(() => {
          sessions.delete(session);
          openStreams.dec();
          span.end();
        });
    });
  });
  return {
    get open() {
      return sessions.size;
    },
    async drain(graceMs = LISTEN_DRAIN_MS) {
      draining = true;
      await Promise.all([...sessions].map((s) => s.drain(graceMs)));
    },
  };
}

/** One client's stream, from its upgrade to its close. */
class ListenSession {
  private readonly requestId = newRequestId();
  private readonly log: Logger;
  private call: Call | undefined;
  private options: LiveOptions | undefined;
  private closing = false;
  /** Set once an error was told: nothing more is read from the client or relayed to it. */
  private stopped = false;
  private draining = false;
  /** Set once the client (or a drain) asked the stream to end: idleness no longer counts. */
  private ending = false;
  /** Settles when the service's answers ended (the stream is settled there), however they ended. */
  private relayed: Promise<void> = Promise.resolve();
  /** No message for the idle limit ends the stream (4408); see {@link touch}. */
  private readonly idle: IdleTimer;
  private readonly finished: Promise<void>;
  private finish!: () => void;
  private readonly openedAt = Date.now();

  constructor(
    private readonly ws: WebSocket,
    private readonly req: IncomingMessage,
    private readonly url: URL,
    private readonly deps: ListenDeps,
  ) {
    this.log = deps.log.child({ request_id: this.requestId, route: 'GET /api/v1/listen' });
    const ms = deps.idleMs ?? LIVE_IDLE_SECONDS * 1000;
    this.idle = idleTimer(ms, () =>
      this.fail(new MurmurError('request_timeout', `No audio or keepalive arrived for ${Math.round(ms / 1000)} s, so the stream was closed; what was received was transcribed. Send {"type":"keepalive"} while silent.`)),
    );
    this.finished = new Promise((resolve) => {
      this.finish = resolve;
    });
  }

  private span: Span | undefined;

  async run(span?: Span): Promise<void> {
    this.span = span;
    const { ws } = this;
    // Nothing is read until the caller is known: a client's early frames wait in the socket.
    ws.pause();
    ws.on('message', (data: RawData, isBinary: boolean) => this.onMessage(data, isBinary));
    ws.on('close', () => this.onClosed());
    ws.on('error', (err) => this.log.warn({ err: err.message }, 'live socket error'));
    // The idle limit starts with `open`: until then the client waits for us (auth, admission, the
    // service starting its recognizer), however long that takes.
    try {
      const principal = await this.principal();
      requireScope(principal, 'ai', `GET ${LISTEN_PATH}`);
      this.options = liveOptionsOf(this.queryWithoutToken());
      const asserted = { userId: principal.userId, keyId: principal.keyId, scopes: principal.scopes };
      let admissionId = '';
      await runWithContext({ requestId: this.requestId, principal: asserted }, async () => {
        // Opening a stream is one AI call against the rate limit (and a first check of the credits).
        ({ admissionId } = await this.deps.clients.billing.admitAiRequest({ userId: principal.userId, operation: billing.Operation.OPERATION_TRANSCRIBE }));
        // The call outlives the usual deadline: a stream lasts up to LIVE_MAX_SECONDS.
        this.call = this.deps.clients.transcription.streamTranscription({ deadlineMs: (LIVE_MAX_SECONDS + 600) * 1000 });
      });
      const options = this.options;
      this.call!.send({
        payload: {
          $case: 'config',
          value: {
            userId: principal.userId,
            admissionId,
            encoding: ENCODINGS[options.encoding],
            sampleRate: options.sampleRate,
            language: options.language,
            save: options.save,
            title: options.title,
            folderId: options.folderId,
          },
        },
      });
      this.log.info({ user_id: principal.userId, encoding: options.encoding }, 'live stream opened');
      this.relayed = this.relay();
      await this.relayed;
    } catch (err) {
      this.fail(err);
    }
    await this.finished;
  }

  /**
   * The caller: the key of `Authorization`, else the listen token of `?token=`. Refused keys and
   * tokens count against the client's address as REST's refused keys do (failed-keys.ts).
   */
  private async principal(): Promise<auth.Principal> {
    const header = this.req.headers.authorization;
    const token = this.url.searchParams.get('token');
    if (header && token !== null) {
      throw new MurmurError('invalid_request', 'Send an API key in Authorization or a listen token in `?token=`, not both.', { param: 'token' });
    }
    const credential = header ?? token;
    if (!credential) {
      throw new MurmurError('missing_api_key', 'Send your API key in the Authorization header ("Authorization: Bearer svc_…"), or, from a browser, a listen token in `?token=` (POST /api/v1/listen/tokens).');
    }
    const app = this.deps.app;
    const failedKeys = app?.locals[FAILED_KEYS_LOCAL] as FailedKeyLimiter | undefined;
    const address = app ? clientAddressOf(app, this.req) : this.req.socket.remoteAddress;
    await failedKeys?.checkAddress(address, credential);
    try {
      const principal = header
        ? await authenticate(this.deps.clients, header, this.deps.keyCache, `${(this.deps.oauth?.publicUrl ?? `http://${this.req.headers.host ?? 'localhost'}`).replace(/\/+$/, '')}/api/v1`)
        : await redeemListenToken(this.deps.clients, credential);
      failedKeys?.verified(credential);
      return principal;
    } catch (err) {
      // Only a well-formed credential that auth looked up and did not find costs a read (as on REST).
      const looked = header ? parseAuthorization(header).ok : LISTEN_TOKEN_PATTERN.test(credential);
      if (err instanceof MurmurError && err.code === 'invalid_api_key' && looked) await failedKeys?.failedAt(address);
      throw err;
    }
  }

  private queryWithoutToken(): URLSearchParams {
    const query = new URLSearchParams(this.url.searchParams);
    query.delete('token');
    return query;
  }

  /** The service's events to the client, until the stream ends. */
  private async relay(): Promise<void> {
    this.ws.resume();
    for await (const message of this.call!.messages) {
      const json = clientMessageOf(message.event, this.options!);
      if (!json || this.closing || this.stopped) continue;
      this.ws.send(JSON.stringify(json));
      if (json.type === 'open') this.touch();
      if (json.type === 'closed') {
        this.close(this.draining ? LIVE_CLOSE_DRAINING : LIVE_CLOSE_NORMAL, this.draining ? LIVE_DRAINING_REASON : 'closed');
        return;
      }
    }
    // The service ended the stream without `closed`: nothing more will come.
    if (!this.closing && !this.stopped) this.fail(new MurmurError('service_unavailable', 'The live stream ended unexpectedly; open a new one.'));
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    if (this.closing || this.stopped || !this.call) return;
    // After `close` the stream is ending: what a client still sends (a keepalive) changes nothing.
    if (this.ending) return;
    this.touch();
    try {
      if (isBinary) {
        const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
        if (bytes.length > LIVE_MAX_FRAME_BYTES) {
          throw new MurmurError('audio_too_large', `An audio frame is at most ${LIVE_MAX_FRAME_BYTES} bytes; this one was ${bytes.length}. Send smaller frames (100–250 ms of audio each).`, { param: 'audio' });
        }
        if (!this.call.send({ payload: { $case: 'audio', value: bytes } })) {
          // The service is behind: stop reading the socket until it catches up (TCP slows the client).
          // Meanwhile the client is not idle, we are: the idle limit waits too.
          this.ws.pause();
          this.idle.disarm();
          void this.call.drained().then(() => {
            if (this.closing) return;
            this.ws.resume();
            this.touch();
          });
        }
        return;
      }
      const control = controlOf(Buffer.isBuffer(data) ? data.toString('utf8') : String(data));
      if (control === 'finalize') this.call.send({ payload: { $case: 'control', value: transcription.StreamControl.STREAM_CONTROL_FINALIZE } });
      else if (control === 'close') {
        // The client is done: however far behind the recognizer is, its last finals are waited for.
        this.ending = true;
        this.idle.disarm();
        this.call.send({ payload: { $case: 'control', value: transcription.StreamControl.STREAM_CONTROL_CLOSE } });
      }
    } catch (err) {
      this.fail(err);
    }
  }

  /**
   * Restarts the idle limit, unless the stream is ending. A limit that passes is judged after the
   * socket was read once more (idle-timer.ts): a keepalive already waiting there keeps the stream.
   */
  private touch(): void {
    this.idle.disarm();
    if (this.closing || this.ending) return;
    this.idle.arm();
  }

  /** The client went away: the service ends the stream as CLOSE does (its finals kept, saved when asked). */
  private onClosed(): void {
    this.idle.disarm();
    if (!this.closing) this.log.info({ seconds_open: Math.round((Date.now() - this.openedAt) / 1000) }, 'live client went away');
    this.closing = true;
    this.call?.end();
    this.finish();
  }

  /**
   * Tells the client why (the error message, then close code 4000 + status). A stream the service
   * still runs ends as a close does (received audio charged, finals saved), and the socket closes
   * once it has (at most {@link LISTEN_SETTLE_MS} later).
   */
  private fail(err: unknown): void {
    if (this.closing || this.stopped) return;
    this.stopped = true;
    this.idle.disarm();
    const error = asPublicError(err, this.log, { route: 'GET /api/v1/listen' });
    this.log.info({ code: error.code, close_code: liveCloseCodeOf(error.code) }, 'live stream refused or ended by an error');
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ type: 'error', ...toErrorBody(error, this.requestId) }));
    this.call?.end();
    const settled = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, LISTEN_SETTLE_MS);
      void this.relayed.catch(() => undefined).then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    void settled.then(() => this.close(liveCloseCodeOf(error.code), error.code));
  }

  private close(code: number, reason: string): void {
    if (this.closing) return;
    this.closing = true;
    this.span?.setAttribute('websocket.close_code', code);
    if (code >= 4500) this.span?.setStatus({ code: SpanStatusCode.ERROR, message: reason });
    this.idle.disarm();
    this.ws.resume();
    this.ws.close(code, reason);
    this.log.info({ close_code: code, seconds_open: Math.round((Date.now() - this.openedAt) / 1000) }, 'live stream closed');
  }

  /** Ends the stream for a draining gateway: the service sends its last finals and `closed`, then 1012. */
  async drain(graceMs: number): Promise<void> {
    if (this.closing) return this.finished;
    this.draining = true;
    this.ending = true;
    this.idle.disarm();
    if (this.call) this.call.send({ payload: { $case: 'control', value: transcription.StreamControl.STREAM_CONTROL_CLOSE } });
    else this.close(LIVE_CLOSE_DRAINING, LIVE_DRAINING_REASON);
    const timer = setTimeout(() => this.close(LIVE_CLOSE_DRAINING, LIVE_DRAINING_REASON), graceMs);
    await this.finished;
    clearTimeout(timer);
  }
}
