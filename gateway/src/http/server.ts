/**
 * The gateway's HTTP server, the one way it is created (main.ts and the test harnesses alike).
 * Node's HTTP parser refuses some requests before any handler runs — a header section over
 * 16 KB (431), a NUL or other bad byte in a header, Content-Length with Transfer-Encoding, a
 * bad chunk size, an unknown method (400), a header section that stops arriving (408) — and by
 * default answers them with an empty body; it also answers a missing Host itself, bypassing
 * every hook, and closes a CONNECT without a word. Here each gets the contract's error body and
 * an `X-Request-Id`, like every other failure.
 *
 * Timeouts: a request's header section must arrive within {@link HEADERS_TIMEOUT_MS} (Node
 * checks every {@link TIMEOUT_CHECK_INTERVAL_MS}, so the 408 comes at most that much later);
 * there is no whole-request timeout (500 MB uploads on slow links must finish: a body that stops
 * arriving is the body idle timeout's, body-idle-timeout.ts); idle keep-alive connections close
 * after {@link KEEP_ALIVE_TIMEOUT_MS}.
 *
 * A client may half-close its side once its request is sent (shutdown(SHUT_WR), `nc -N`): the
 * request is still answered, on the half that is open, and the connection then closes. Node
 * would drop such a request unanswered (its `httpAllowHalfOpen` is off by default). But a FIN
 * is also what a client that gave up and closed sends, and the two look the same: so a response
 * already under way (a stream) stops at once, and one not begun within
 * {@link HALF_CLOSED_ANSWER_MS} is given up — the request counts as abandoned (its work is
 * cancelled, as for a client that resets), rather than running on for nobody.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { MurmurError, toErrorBody, type ErrorCode } from '@murmur/contract';
import { acceptRequestId, type Logger } from '@murmur/kit';

/** How long a request's header section may take to arrive: generous for a person typing into telnet, short for a stalled client. */
export const HEADERS_TIMEOUT_MS = 10_000;
/** How often Node looks for requests past their headers timeout. */
export const TIMEOUT_CHECK_INTERVAL_MS = 1_000;
/** Idle keep-alive connections close after this (above the usual 60 s of load balancers in front). */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;
/** How long a request whose client half-closed may take to be answered before it counts as abandoned. */
export const HALF_CLOSED_ANSWER_MS = 10_000;

/** The methods this API serves on some path (the Allow of a CONNECT's 405). */
const SERVED_METHODS = 'GET, HEAD, POST';

/** What the parser's error codes mean to a client: the status and what to do next. */
function parserRefusal(code: string | undefined, headersTimeoutMs: number): { status: number; reason: string; message: string; code?: ErrorCode } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        reason: 'Request Header Fields Too Large',
        message: 'The request line and headers are larger than 16 KB. Send long values (such as a search) in fewer, shorter headers or parameters.',
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: 408,
        reason: 'Request Timeout',
        code: 'request_timeout',
        message: `The request line and headers did not all arrive within ${headersTimeoutMs / 1000} s; nothing was done. Send the request again.`,
      };
    case 'HPE_INVALID_METHOD':
      return { status: 400, reason: 'Bad Request', message: 'The HTTP method is not one this API knows. See /api/v1/openapi.json for the routes and their methods.' };
    case 'HPE_INVALID_HEADER_TOKEN':
      return { status: 400, reason: 'Bad Request', message: 'A header contains a character HTTP does not allow (such as NUL or a control character). Remove it.' };
    case 'HPE_INVALID_TRANSFER_ENCODING':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
    case 'HPE_INVALID_CONTENT_LENGTH':
      return { status: 400, reason: 'Bad Request', message: 'The body framing is invalid: send either Content-Length or Transfer-Encoding: chunked, once, with a valid value.' };
    case 'HPE_INVALID_CHUNK_SIZE':
      return { status: 400, reason: 'Bad Request', message: 'A chunk of the chunked body has an invalid size line. Check the client that encodes the body.' };
    default:
      return { status: 400, reason: 'Bad Request', message: 'The request is not valid HTTP/1.1 and could not be read.' };
  }
}

/** A complete HTTP/1.1 error response carrying the contract's body; the connection then closes. */
function rawErrorResponse(status: number, reason: string, err: MurmurError, requestId = acceptRequestId(undefined), headers = ''): string {
  const body = JSON.stringify(toErrorBody(err, requestId));
  return (
    `HTTP/1.1 ${status} ${reason}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `X-Request-Id: ${requestId}\r\n` +
    headers +
    'Connection: close\r\n\r\n' +
    body
  );
}

/** The parser's refusal answered in the contract's body, as Node would answer it but never empty. */
function onClientError(headersTimeoutMs: number, log?: Logger) {
  return (err: Error & { code?: string }, socket: Socket): void => {
    // The client is gone (reset, or the socket timed out idle): nobody to answer.
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const pending = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (pending?.headersSent) {
      // A response is already on its way (the error came in the body): it can only be cut.
      socket.destroy();
      return;
    }
    const refusal = parserRefusal(err.code, headersTimeoutMs);
    log?.info({ code: err.code, status: refusal.status }, 'HTTP parser refused a request');
    socket.end(rawErrorResponse(refusal.status, refusal.reason, new MurmurError(refusal.code ?? 'invalid_request', refusal.message, { param: null })));
  };
}

/**
 * HTTP/1.1 requires Host (RFC 9112 §3.2). Node checks it itself (`requireHostHeader`) with an
 * empty 400 that no hook sees, so the server turns that off and the check happens here.
 */
function requireHost(listener: RequestListener): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    if (req.httpVersionMajor === 1 && req.httpVersionMinor === 1 && req.headers.host === undefined) {
      const sent = req.headers['x-request-id'];
      const requestId = acceptRequestId(typeof sent === 'string' ? sent : undefined);
      const body = JSON.stringify(
        toErrorBody(new MurmurError('invalid_request', 'HTTP/1.1 requests need a Host header. Send the host name of this API in Host.', { param: 'Host' }), requestId),
      );
      res.writeHead(400, { 'Content-Type': 'application/json; charset=utf-8', 'X-Request-Id': requestId, Connection: 'close' });
      res.end(body);
      return;
    }
    listener(req, res);
  };
}

/**
 * CONNECT asks a proxy for a tunnel; this is an API, not a proxy. Node hands it to no request
 * handler (the target is `host:port`, not a path) and, unheard, closes the socket without an
 * answer: it gets a 405 instead, with the methods the API serves.
 */
function refuseConnect(req: IncomingMessage, socket: Socket): void {
  const sent = req.headers['x-request-id'];
  const err = new MurmurError('method_not_allowed', 'CONNECT is not served: this is an HTTP API, not a proxy. Call its routes with GET or POST (see /api/v1/openapi.json).', {
    meta: { allow: SERVED_METHODS },
  });
  socket.on('error', () => {});
  socket.end(rawErrorResponse(405, 'Method Not Allowed', err, acceptRequestId(typeof sent === 'string' ? sent : undefined), `Allow: ${SERVED_METHODS}\r\n`));
}

/**
 * The client ended its side (a FIN): a response under way stops (the client is gone); one not
 * begun gets `graceMs` to be answered (see the file comment).
 */
function onHalfClose(graceMs: number) {
  return (socket: Socket): void => {
    socket.on('end', () => {
      const res = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
      if (!res || res.writableFinished) return;
      if (res.headersSent) {
        socket.destroy();
        return;
      }
      const timer = setTimeout(() => socket.destroy(), graceMs);
      res.once('close', () => clearTimeout(timer));
    });
  };
}

export interface HttpServerOptions {
  /** How long a header section may take (default {@link HEADERS_TIMEOUT_MS}); tests use less. */
  headersTimeoutMs?: number;
  /** How long a half-closed client's request may take to be answered (default {@link HALF_CLOSED_ANSWER_MS}); tests use less. */
  halfClosedAnswerMs?: number;
}

/** The gateway's HTTP server around `listener` (the express app, or a harness wrapping it). */
export function createHttpServer(listener: RequestListener, log?: Logger, opts: HttpServerOptions = {}): Server {
  const headersTimeoutMs = opts.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
  const server = createServer(
    {
      requireHostHeader: false,
      headersTimeout: headersTimeoutMs,
      requestTimeout: 0,
      connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_INTERVAL_MS, headersTimeoutMs),
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    },
    requireHost(listener),
  );
  // Node's own switch (no option sets it): a request whose client half-closed after sending it is still answered.
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  server.on('connection', onHalfClose(opts.halfClosedAnswerMs ?? HALF_CLOSED_ANSWER_MS));
  server.on('clientError', onClientError(headersTimeoutMs, log));
  server.on('connect', refuseConnect);
  return server;
}
