/**
 * Reads a JSON body on demand — inside the AI pipeline after admission, or after /mcp's key
 * check — rather than as global middleware, so nothing is read before the caller is known (and,
 * for AI routes, before billing has said yes). Both front ends read bodies through it, so a body
 * that stops arriving times out the same way on /api/v1 and /mcp.
 */
import express, { type Request, type Response } from 'express';
import { MurmurError } from '@murmur/kit';
import { bodyReadError } from './errors';
import { DEFAULT_BODY_IDLE_TIMEOUT_MS, watchBodyIdle } from './body-idle-timeout';
import { clientGone, goneError } from './client-gone';

const parsers = new Map<string | number, ReturnType<typeof express.json>>();

export interface JsonBodyOptions {
  /** Largest body: bytes, or a size such as '16mb'. */
  limit: string | number;
  idleTimeoutMs?: number;
  /** Leave the Content-Type to the caller (the MCP transport answers a wrong one itself). */
  anyContentType?: boolean;
  /** The error for a body over `limit` (default: invalid_request naming the limit). */
  tooLarge?: () => MurmurError;
}

/**
 * A body that stops arriving for `idleTimeoutMs` rejects with `request_timeout`; the rest is left
 * unread (the caller answers with `Connection: close`).
 */
export function readJsonBody(req: Request, res: Response, opts: JsonBodyOptions): Promise<unknown> {
  const { limit, idleTimeoutMs = DEFAULT_BODY_IDLE_TIMEOUT_MS } = opts;
  let parser = parsers.get(limit);
  if (!parser) {
    parser = express.json({ limit, strict: true, type: () => true });
    parsers.set(limit, parser);
  }
  if (!opts.anyContentType && !req.is('application/json')) {
    return Promise.reject(new MurmurError('invalid_request', 'Send the body as JSON with Content-Type: application/json.', { param: null }));
  }
  // Gone before this began: its close event is past, so the read would never settle.
  if (clientGone(req)) return Promise.reject(goneError());
  const readError = (err: unknown): unknown =>
    (err as { type?: string })?.type === 'entity.too.large' && opts.tooLarge ? opts.tooLarge() : (bodyReadError(err) ?? err);
  return new Promise((resolve, reject) => {
    let settled = false;
    let stopIdle = () => {};
    const settle = (run: () => void) => {
      if (settled) return;
      settled = true;
      stopIdle();
      run();
    };
    parser!(req, res, (err?: unknown) => settle(() => (err ? reject(readError(err)) : resolve(req.body as unknown))));
    if (!settled) {
      stopIdle = watchBodyIdle(req, idleTimeoutMs, (err) =>
        settle(() => {
          req.pause();
          reject(err);
        }),
      );
    }
  });
}
