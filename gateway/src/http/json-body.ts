/**
 * Reads a JSON body on demand — inside the AI pipeline after admission, or after /mcp's key
 * check — rather than as global middleware, so nothing is read before the caller is known (and,
 * for AI routes, before billing has said yes). Both front ends read bodies through it, so a body
 * that stops arriving times out the same way on /api/v1 and /mcp, and bytes that are not UTF-8
 * are refused the same way, naming the field they are in (body-parser alone would read them as
 * U+FFFD and the call would go on with other text than the client sent).
 */
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import express, { type Request, type Response } from 'express';
import { MurmurError } from '@murmur/contract';
import { bodyReadError } from './errors';
import { DEFAULT_BODY_IDLE_TIMEOUT_MS, watchBodyIdle } from './body-idle-timeout';
import { JsonTokenizer } from './json-tokenizer';
import { clientGone, goneError } from './client-gone';

const IGNORE = { member: () => {}, streamStart: () => {}, streamText: () => {}, streamEnd: () => {} };

/** A body refused by {@link requireUtf8}, carried through body-parser (which writes onto the error it is given). */
class NotUtf8 extends Error {
  constructor(readonly refusal: MurmurError) {
    super(refusal.message);
  }
}

/** Why `body` (not UTF-8) is refused: the tokenizer stops at the first bad byte, naming the string it is in (or at a syntax error before it). */
function utf8Refusal(body: Buffer): MurmurError {
  try {
    const tokenizer = new JsonTokenizer(IGNORE, { streams: () => false, maxHeldChars: Infinity, maxDepth: Infinity });
    tokenizer.write(body);
    tokenizer.end();
  } catch (err) {
    if (err instanceof MurmurError) return err;
    throw err;
  }
  return new MurmurError('invalid_request', 'The body is not valid UTF-8. Send it as UTF-8 JSON.', { param: null });
}

/** body-parser's `verify`: a UTF-8 body passes (a native check, the usual case); one that is not is refused. */
function requireUtf8(_req: IncomingMessage, _res: unknown, body: Buffer, encoding: string): void {
  if (encoding !== 'utf-8' || isUtf8(body)) return;
  throw new NotUtf8(utf8Refusal(body));
}

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
    parser = express.json({ limit, strict: true, type: () => true, verify: requireUtf8 });
    parsers.set(limit, parser);
  }
  if (!opts.anyContentType && !req.is('application/json')) {
    return Promise.reject(new MurmurError('invalid_request', 'Send the body as JSON with Content-Type: application/json.', { param: null }));
  }
  // Gone before this began: its close event is past, so the read would never settle.
  if (clientGone(req)) return Promise.reject(goneError());
  const readError = (err: unknown): unknown => {
    if (err instanceof NotUtf8) return err.refusal;
    return (err as { type?: string })?.type === 'entity.too.large' && opts.tooLarge ? opts.tooLarge() : (bodyReadError(err) ?? err);
  };
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
