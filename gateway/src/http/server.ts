/**
 * The gateway's HTTP server, the one way it is created (main.ts and the test harnesses alike).
 * Node's HTTP parser refuses some requests before any handler runs — a header section over
 * 16 KB (431), a NUL or other bad byte in a header, Content-Length with Transfer-Encoding, a
 * bad chunk size, an unknown method (400) — and by default answers them with an empty body;
 * it also answers a missing Host itself, bypassing every hook. Here each gets the contract's
 * error body and an `X-Request-Id`, like every other failure.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { acceptRequestId, MurmurError, toErrorBody, type Logger } from '@murmur/kit';

/** What the parser's error codes mean to a client: the status and what to do next. */
function parserRefusal(code: string | undefined): { status: number; reason: string; message: string } | null {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        reason: 'Request Header Fields Too Large',
        message: 'The request line and headers are larger than 16 KB. Send long values (such as a search) in fewer, shorter headers or parameters.',
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, reason: 'Request Timeout', message: 'The request was not received in time. Send it again.' };
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
function rawErrorResponse(status: number, reason: string, message: string): string {
  const requestId = acceptRequestId(undefined);
  const body = JSON.stringify(toErrorBody(new MurmurError('invalid_request', message, { param: null }), requestId));
  return (
    `HTTP/1.1 ${status} ${reason}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `X-Request-Id: ${requestId}\r\n` +
    'Connection: close\r\n\r\n' +
    body
  );
}

/** The parser's refusal answered in the contract's body, as Node would answer it but never empty. */
function onClientError(log?: Logger) {
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
    const refusal = parserRefusal(err.code)!;
    log?.info({ code: err.code, status: refusal.status }, 'HTTP parser refused a request');
    socket.end(rawErrorResponse(refusal.status, refusal.reason, refusal.message));
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

/** The gateway's HTTP server around `listener` (the express app, or a harness wrapping it). */
export function createHttpServer(listener: RequestListener, log?: Logger): Server {
  const server = createServer({ requireHostHeader: false }, requireHost(listener));
  server.on('clientError', onClientError(log));
  return server;
}
