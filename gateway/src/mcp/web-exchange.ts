/**
 * Between express and the v2 MCP SDK's web-standard face: a `Request` carrying the headers of
 * the express one (the body is already read and handed over parsed), and a web `Response` written
 * back with backpressure. A client that goes away aborts the request's signal.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Request as ExpressRequest, Response as ExpressResponse } from 'express';

export function webRequest(req: ExpressRequest, signal?: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  return new Request(`http://localhost${req.originalUrl}`, { method: req.method, headers, signal });
}

export async function writeWebResponse(res: ExpressResponse, response: Response): Promise<void> {
  res.status(response.status);
  response.headers.forEach((value, name) => res.setHeader(name, value));
  if (!response.body) {
    res.end();
    return;
  }
  // A JSON answer is complete already: written at once, without a stream pipeline (whose
  // machinery, and the abort it signals when done, cost more than the write). SSE streams.
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    res.end(Buffer.from(await response.arrayBuffer()));
    return;
  }
  try {
    await pipeline(Readable.fromWeb(response.body as import('node:stream/web').ReadableStream), res);
  } catch (err) {
    // The client went away mid-stream: nothing left to answer.
    if (!res.destroyed && !res.writableEnded) throw err;
  }
}
