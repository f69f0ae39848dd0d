/**
 * The audio-upload tests' server and clients: a real node:http server in the test process reads
 * POST bodies with parseAudioUpload and answers with the byte count and sha256 of the audio it
 * received plus the options; real clients send multipart and JSON bodies piece by piece.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MurmurError } from '@murmur/contract';
import { parseAudioUpload } from '../../src/upload/audio-upload';

export const MiB = 1024 * 1024;

export interface Answer {
  status: number;
  body: Record<string, unknown>;
}
export interface Outcome extends Answer {
  /** Bytes the server had read from the connection when the upload settled. */
  bytesRead: number;
}
export interface ServerBehaviour {
  maxBytes: number;
  signal?: AbortSignal;
  /** Called when the upload resolves, before any audio is read. */
  onResolved?: (req: IncomingMessage) => void;
  /** The consumer does not read the audio until this settles. */
  hold?: Promise<void>;
  /** The consumer gives up (destroys the audio) after its first chunk. */
  giveUp?: boolean;
  /** The server starts reading only once the client has gone (the request's close is past). */
  afterClose?: boolean;
}

/** What the server does with the next upload; reset before each test, changed by tests. */
export const behaviour: ServerBehaviour = { maxBytes: 10 * MiB };
let server: http.Server;
let url = '';

/** The test server's upload URL (set once it listens). */
export function uploadUrl(): string {
  return url;
}
const outcomes: Outcome[] = [];
const outcomeWaiters: Array<(o: Outcome) => void> = [];

function record(outcome: Outcome): void {
  const waiter = outcomeWaiters.shift();
  if (waiter) waiter(outcome);
  else outcomes.push(outcome);
}

/** What the server saw for the next request. */
export function nextOutcome(): Promise<Outcome> {
  const ready = outcomes.shift();
  return ready ? Promise.resolve(ready) : new Promise((resolve) => outcomeWaiters.push(resolve));
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  res.on('error', () => {}); // the client may be gone
  const b = { ...behaviour };
  let answer: Answer;
  try {
    if (b.afterClose) {
      req.on('error', () => {}); // "aborted": the close below is what is awaited
      await new Promise((resolve) => req.once('close', resolve));
    }
    const upload = await parseAudioUpload(req, { maxBytes: b.maxBytes, signal: b.signal });
    b.onResolved?.(req);
    if (b.hold) await b.hold;
    const hash = createHash('sha256');
    let bytes = 0;
    for await (const chunk of upload.audio) {
      if (b.giveUp) upload.audio.destroy();
      hash.update(chunk as Buffer);
      bytes += (chunk as Buffer).length;
    }
    answer = {
      status: 200,
      body: { bytes, sha256: hash.digest('hex'), fields: upload.fields, filename: upload.filename, content_type: upload.contentType },
    };
  } catch (err) {
    answer =
      err instanceof MurmurError
        ? { status: err.httpStatus, body: { code: err.code, param: err.param, message: err.message } }
        : { status: 499, body: { code: (err as Error).name, message: (err as Error).message } };
  }
  record({ ...answer, bytesRead: req.socket.bytesRead });
  if (res.destroyed) return;
  // On failure the body is left unread: close the connection rather than read the rest.
  res.writeHead(answer.status, { 'content-type': 'application/json', ...(answer.status === 200 ? {} : { connection: 'close' }) });
  res.end(JSON.stringify(answer.body));
}

/** Starts the upload server for the calling test file (its own hooks). */
export function useUploadServer(): void {
  beforeAll(async () => {
    server = http.createServer((req, res) => void handle(req, res));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/transcribe`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  beforeEach(() => {
    for (const key of Object.keys(behaviour) as Array<keyof ServerBehaviour>) delete behaviour[key];
    behaviour.maxBytes = 10 * MiB;
    outcomes.length = 0;
  });
}

export interface Sent extends Answer {
  /** Body bytes the client managed to hand to its socket. */
  written: number;
  /** Whether the client wrote the whole body before the answer came. */
  finished: boolean;
}

/**
 * POSTs a body written piece by piece (chunked unless a length is given), respecting the
 * socket's backpressure, and stops writing as soon as an answer arrives.
 */
export async function send(pieces: Iterable<Buffer | string>, headers: http.OutgoingHttpHeaders): Promise<Sent> {
  const req = http.request(url, { method: 'POST', headers, agent: false });
  let answered = false;
  const answer = new Promise<Answer>((resolve, reject) => {
    req.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
  answer.catch(() => {});
  let written = 0;
  let finished = true;
  for (const piece of pieces) {
    if (answered || req.destroyed) {
      finished = false;
      break;
    }
    written += Buffer.byteLength(piece);
    if (!req.write(piece)) await Promise.race([once(req, 'drain').catch(() => {}), answer.catch(() => {})]);
  }
  if (finished) req.end();
  const result = await answer;
  req.destroy();
  return { ...result, written, finished };
}

export function pieces(body: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < body.length; i += size) out.push(body.subarray(i, i + size));
  return out;
}

export function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

export const postJson = (body: string | Buffer, pieceSize?: number) =>
  send(pieceSize ? pieces(Buffer.from(body), pieceSize) : [body], {
    'content-type': 'application/json',
    ...(pieceSize ? {} : { 'content-length': Buffer.byteLength(body) }),
  });

export type Part = { name: string; value: string } | { name: string; filename?: string; type?: string; data: Buffer };
export const BOUNDARY = 'murmur-test-boundary-7d1f';

export function partHead(part: Part): string {
  if ('value' in part) return `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n`;
  return (
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.filename ?? 'clip.wav'}"\r\n` +
    `Content-Type: ${part.type ?? 'audio/wav'}\r\n\r\n`
  );
}

export function multipartBody(parts: Part[]): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    chunks.push(Buffer.from(partHead(part)), 'value' in part ? Buffer.from(part.value) : part.data, Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(chunks);
}

export const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;
export const postMultipart = (parts: Part[], pieceSize = 16 * 1024) => {
  const body = multipartBody(parts);
  return send(pieces(body, pieceSize), { 'content-type': MULTIPART });
};

/** `count` copies of `block`, then `suffix`: a large body made on the fly. */
export function* repeated(prefix: string | Buffer, block: Buffer, count: number, suffix: string | Buffer): Generator<Buffer | string> {
  yield prefix;
  for (let i = 0; i < count; i++) yield block;
  yield suffix;
}

/** The sha256 of `count` copies of `block`. */
export function repeatedSha(block: Buffer, count: number): string {
  const hash = createHash('sha256');
  for (let i = 0; i < count; i++) hash.update(block);
  return hash.digest('hex');
}

/** Resolves once `read()` has stopped growing for a few polls, i.e. the server stopped reading. */
export async function settledCount(read: () => number): Promise<number> {
  let last = -1;
  let stable = 0;
  for (let i = 0; i < 500 && stable < 5; i++) {
    await new Promise((r) => setTimeout(r, 20));
    const now = read();
    stable = now === last ? stable + 1 : 0;
    last = now;
  }
  return last;
}
