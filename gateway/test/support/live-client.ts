/**
 * A real WebSocket client of GET /api/v1/listen for tests: every message it received, the close
 * code and reason, and helpers to send real speech at real-time pace or at once.
 */
import { readFileSync } from 'node:fs';
import { WebSocket } from 'ws';

export type LiveMessage = Record<string, any> & { type: string };

export interface LiveClient {
  ws: WebSocket;
  messages: LiveMessage[];
  /** Resolves with the close code and reason once the server closed. */
  closed: Promise<{ code: number; reason: string }>;
  /** Resolves with the first message of `type` (already received or to come). */
  next(type: string): Promise<LiveMessage>;
  /**
   * Resolves with the first message (received or to come) that `match` accepts; rejects, naming
   * what came, if the socket closes first (a test fails at once rather than at its timeout).
   */
  until(match: (m: LiveMessage) => boolean): Promise<LiveMessage>;
  /** Sends keepalives every second until `waiting` settles (a client waiting in silence, as a real one does). */
  keepAliveWhile<T>(waiting: Promise<T>): Promise<T>;
  send(data: Buffer | string): void;
  control(type: 'keepalive' | 'finalize' | 'close'): void;
  /** Sends `pcm` in frames of `frameMs`; `realTime` paces them as spoken. */
  stream(pcm: Buffer, opts?: { frameMs?: number; realTime?: boolean; bytesPerSecond?: number }): Promise<void>;
}

/** The 16 kHz mono PCM of a WAV file (its 44-byte header dropped). */
export function pcmOfWav(file: string): Buffer {
  return readFileSync(file).subarray(44);
}

export function connectLive(
  baseUrl: string,
  opts: { key?: string; query?: Record<string, string>; headers?: Record<string, string>; /** Connect from this loopback address (127.0.0.2, …). */ localAddress?: string } = {},
): Promise<LiveClient> {
  const url = new URL('/api/v1/listen', baseUrl.replace(/^http/, 'ws'));
  for (const [k, v] of Object.entries(opts.query ?? {})) url.searchParams.set(k, v);
  const ws = new WebSocket(url, { headers: { ...(opts.key ? { authorization: `Bearer ${opts.key}` } : {}), ...opts.headers }, ...(opts.localAddress ? { localAddress: opts.localAddress } : {}) });
  const messages: LiveMessage[] = [];
  const waiters: Array<{ match: (m: LiveMessage) => boolean; resolve: (m: LiveMessage) => void; reject: (e: Error) => void }> = [];
  ws.on('message', (data, isBinary) => {
    if (isBinary) return;
    const message = JSON.parse(data.toString()) as LiveMessage;
    messages.push(message);
    for (const w of waiters.filter((x) => x.match(message))) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(message);
    }
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => {
      resolve({ code, reason: reason.toString() });
      const said = messages.slice(-3).map((m) => JSON.stringify(m).slice(0, 200)).join(' ');
      for (const w of waiters.splice(0)) w.reject(new Error(`the socket closed (${code} ${reason.toString()}) before the message awaited; last: ${said}`));
    }),
  );
  ws.on('error', () => undefined);
  const client: LiveClient = {
    ws,
    messages,
    closed,
    next(type) {
      return client.until((m) => m.type === type);
    },
    until(match) {
      const seen = messages.find(match);
      if (seen) return Promise.resolve(seen);
      if (ws.readyState === WebSocket.CLOSED) return Promise.reject(new Error('the socket is closed'));
      return new Promise((resolve, reject) => waiters.push({ match, resolve, reject }));
    },
    async keepAliveWhile(waiting) {
      const timer = setInterval(() => client.control('keepalive'), 1_000);
      try {
        return await waiting;
      } finally {
        clearInterval(timer);
      }
    },
    send(data) {
      if (ws.readyState === WebSocket.OPEN) ws.send(data);
    },
    control(type) {
      client.send(JSON.stringify({ type }));
    },
    async stream(pcm, o = {}) {
      const bytesPerSecond = o.bytesPerSecond ?? 32_000;
      const frameMs = o.frameMs ?? 100;
      const frame = Math.round((bytesPerSecond * frameMs) / 1000 / 2) * 2;
      const started = Date.now();
      for (let at = 0; at < pcm.length; at += frame) {
        if (ws.readyState !== WebSocket.OPEN) return;
        ws.send(pcm.subarray(at, at + frame));
        if (o.realTime) {
          const due = started + ((at + frame) / bytesPerSecond) * 1000;
          await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
        }
      }
    },
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(client));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
  });
}
