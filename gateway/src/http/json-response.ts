/**
 * A JSON answer written straight to the response: the same bytes and headers as express's
 * `res.json` with this app's settings (no ETag, no JSON replacer, spaces or escaping) —
 * `Content-Type: application/json; charset=utf-8`, `Content-Length`, no body on HEAD — without
 * what `res.json` does on every call besides: a content-type parse and MIME lookup to add the
 * charset, and a copy of the body into a Buffer to count its bytes. A conditional request
 * (If-None-Match, If-Modified-Since) is left to express, which decides when it is a 304.
 */
import type { Response } from 'express';

const JSON_TYPE = 'application/json; charset=utf-8';

export function sendJson(res: Response, value: unknown): void {
  const req = res.req;
  const body = JSON.stringify(value);
  if (body === undefined || req.headers['if-none-match'] !== undefined || req.headers['if-modified-since'] !== undefined || res.hasHeader('Content-Type')) {
    res.json(value);
    return;
  }
  res.setHeader('Content-Type', JSON_TYPE);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  if (req.method === 'HEAD') res.end();
  else res.end(body);
}
