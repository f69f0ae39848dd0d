/**
 * HTTP/1.1 over a bare TCP socket, for requests no HTTP client will send: repeated or oversized
 * headers, NUL and invalid UTF-8 bytes, conflicting framing, bad chunks, unknown methods. The
 * request is written as given (`Connection: close` is added by {@link rawRequest}'s builder), and
 * the answer is read until the server closes; a request that gets no answer within the timeout
 * rejects with a "hang" error, so one stuck request fails its case rather than the whole file.
 */
import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Parses one HTTP/1.1 response (identity or chunked body); null when incomplete. */
export function parseResponse(raw: Buffer): RawResponse | null {
  const end = raw.indexOf('\r\n\r\n');
  if (end === -1) return null;
  const [statusLine, ...lines] = raw.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1]);
  if (!Number.isInteger(status)) return null;
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = raw.subarray(end + 4);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const parts: Buffer[] = [];
    let at = 0;
    for (;;) {
      const lineEnd = body.indexOf('\r\n', at);
      if (lineEnd === -1) return null;
      const size = parseInt(body.subarray(at, lineEnd).toString('latin1'), 16);
      if (!Number.isFinite(size)) return null;
      if (size === 0) break;
      if (body.length < lineEnd + 2 + size) return null;
      parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
    body = Buffer.concat(parts);
  } else if (headers['content-length'] !== undefined) {
    const length = Number(headers['content-length']);
    if (body.length < length) return null;
    body = body.subarray(0, length);
  }
  return { status, headers, body: body.toString('utf8') };
}

/**
 * Sends `request` (bytes exactly as given) to 127.0.0.1:`port` and resolves with the response
 * once the server has sent it all (or closed). Rejects after `timeoutMs` without a response.
 * With `halfClose`, the client shuts its sending side right after the request (a FIN, as
 * `nc -N` or shutdown(SHUT_WR) do) and reads the answer on the half still open.
 */
export function sendRaw(port: number, request: Buffer | string, timeoutMs: number, opts: { halfClose?: boolean } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1');
    let settled = false;
    const finish = (err: Error | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (err) return reject(err);
      const parsed = parseResponse(Buffer.concat(chunks));
      if (parsed) resolve(parsed);
      else reject(new Error(`no complete HTTP response (got ${Buffer.concat(chunks).length} bytes: ${JSON.stringify(Buffer.concat(chunks).toString('latin1').slice(0, 120))})`));
    };
    const timer = setTimeout(() => finish(new Error(`hang: no answer within ${timeoutMs} ms`)), timeoutMs);
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      if (parseResponse(Buffer.concat(chunks))) finish(null);
    });
    socket.on('end', () => finish(null));
    socket.on('close', () => finish(null));
    // A server may answer and close while the request is still being written (EPIPE/ECONNRESET).
    socket.on('error', () => finish(null));
    const bytes = typeof request === 'string' ? Buffer.from(request, 'latin1') : request;
    if (opts.halfClose) socket.end(bytes);
    else socket.write(bytes);
  });
}

export interface RawRequestSpec {
  method: string;
  /** Request target, sent as given (percent-escapes and all). */
  target: string;
  /** Header lines, in order; repeated names are sent repeatedly. */
  headers?: Array<[string, string | Buffer]>;
  /** Body bytes; Content-Length is set from it unless a header gives framing already. */
  body?: Buffer | string;
}

/** The bytes of a well-framed HTTP/1.1 request (Host and Connection: close included). */
export function buildRequest(spec: RawRequestSpec): Buffer {
  const headers = spec.headers ?? [];
  const has = (name: string) => headers.some(([n]) => n.toLowerCase() === name);
  const body = spec.body === undefined ? undefined : Buffer.isBuffer(spec.body) ? spec.body : Buffer.from(spec.body, 'utf8');
  const lines: Buffer[] = [Buffer.from(`${spec.method} ${spec.target} HTTP/1.1\r\n`, 'latin1')];
  if (!has('host')) lines.push(Buffer.from('Host: 127.0.0.1\r\n'));
  lines.push(Buffer.from('Connection: close\r\n'));
  for (const [name, value] of headers) lines.push(Buffer.concat([Buffer.from(`${name}: `, 'latin1'), Buffer.isBuffer(value) ? value : Buffer.from(value, 'latin1'), Buffer.from('\r\n')]));
  if (body !== undefined && !has('content-length') && !has('transfer-encoding')) lines.push(Buffer.from(`Content-Length: ${body.length}\r\n`));
  lines.push(Buffer.from('\r\n'));
  if (body !== undefined) lines.push(body);
  return Buffer.concat(lines);
}
