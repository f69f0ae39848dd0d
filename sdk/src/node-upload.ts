/**
 * Uploads in Node through `node:http`, not `fetch`. Node's fetch (undici) reads a streamed
 * request body ahead of the socket: a 209 MB file sent to a server that reads at disk speed took
 * the client to ~270 MB of memory (measured; `sdk/test/upload-memory.test.ts`), where a piped
 * `http.request` honours the socket's backpressure and stays flat. Browsers and edge runtimes,
 * and a caller's own `fetch`, keep fetch.
 */
import type { UploadInit } from './platform.js';

/** POSTs `body` with backpressure and answers the response as a web `Response`. */
export async function nodeUpload(url: string, init: UploadInit): Promise<Response> {
  const { request } = url.startsWith('https:') ? await import('node:https') : await import('node:http');
  const { Readable } = await import('node:stream');
  const { pipeline } = await import('node:stream/promises');
  return new Promise<Response>((resolve, reject) => {
    let answered = false;
    const req = request(url, { method: init.method, headers: init.headers, signal: init.signal });
    req.on('response', (res: import('node:http').IncomingMessage) => {
      answered = true;
      const headers = new Headers();
      for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
      const status = res.statusCode ?? 502;
      const empty = status === 204 || status === 304 || init.method === 'HEAD';
      resolve(new Response(empty ? null : (Readable.toWeb(res) as unknown as ReadableStream<Uint8Array>), { status, headers }));
    });
    req.on('error', (err: Error) => {
      if (!answered) reject(err);
    });
    // The server may answer before it read the whole body (a refusal): the rest is not sent, and
    // the answer stands.
    pipeline(Readable.fromWeb(init.body as import('node:stream/web').ReadableStream<Uint8Array>), req).catch((err: unknown) => {
      if (!answered) reject(err);
    });
  });
}
