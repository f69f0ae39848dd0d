/**
 * The HTTP rendering of the one error model, for both front ends (a /mcp request refused before
 * any JSON-RPC — origin, key, body — is answered here too): status and body from the code table
 * in kit, plus the headers some codes carry (WWW-Authenticate on 401 and on 403 insufficient_scope, Retry-After on 429, Allow on 405).
 */
import type { NextFunction, Request, Response } from 'express';
import { MurmurError, toErrorBody } from '@murmur/contract';
import { asPublicError, type Logger } from '@murmur/kit';
import { noteOf } from './call-note';

const AUTH_CODES_WITH_TOKEN = new Set(['invalid_api_key', 'expired_api_key']);

/**
 * Where a route wants more in its bearer challenge (RFC 6750 §3): /mcp adds its Protected
 * Resource Metadata URL and scopes (gateway/src/oauth/protected-resource.ts).
 */
export const BEARER_CHALLENGE_LOCAL = 'bearerChallenge';

function bearerChallenge(res: Response, err: MurmurError): string | null {
  const extra = res.locals[BEARER_CHALLENGE_LOCAL] as string | undefined;
  const parts = ['Bearer realm="murmur"'];
  if (err.code === 'insufficient_scope') {
    parts.push('error="insufficient_scope"', `scope="${String(err.meta.scope ?? '')}"`);
    if (extra) parts.push(extra.replace(/,?\s*scope="[^"]*"/, ''));
  } else if (err.httpStatus === 401) {
    if (AUTH_CODES_WITH_TOKEN.has(err.code)) parts.push('error="invalid_token"');
    if (extra) parts.push(extra);
  } else {
    return null;
  }
  return parts.join(', ');
}

export function sendError(req: Request, res: Response, err: MurmurError): void {
  const challenge = bearerChallenge(res, err);
  if (challenge) res.setHeader('WWW-Authenticate', challenge);
  if (err.meta.retry_after) res.setHeader('Retry-After', err.meta.retry_after);
  if (err.meta.allow) res.setHeader('Allow', err.meta.allow);
  // Read when the response ends: its metrics (http-metrics.ts) and the request log.
  noteOf(res).errorCode = err.code;
  res.status(err.httpStatus).json(toErrorBody(err, req.requestId));
}

/** A body parser's failure (express.json / raw-body) as the client error it is, or null. */
export function bodyReadError(err: unknown): MurmurError | null {
  const e = err as { type?: string; status?: number; limit?: number };
  if (e?.type === 'entity.parse.failed') return new MurmurError('invalid_request', 'The body is not valid JSON.', { param: null });
  if (e?.type === 'entity.too.large') {
    return new MurmurError('invalid_request', `The body is larger than this route accepts${e.limit ? ` (${e.limit} bytes)` : ''}.`, { param: null });
  }
  if (e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported') {
    return new MurmurError('invalid_request', 'Send the body as UTF-8 JSON.', { param: null });
  }
  if (e?.type === 'request.aborted') return new MurmurError('invalid_request', 'The request body was cut short.', { param: null });
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) return new MurmurError('invalid_request', 'The request could not be read.', { param: null });
  return null;
}

/** Anything a body parser or handler threw: typed errors as they are, body-read failures as the client's, the rest through kit's one public form. */
export function errorHandler(log: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    sendError(req, res, bodyReadError(err) ?? asPublicError(err, log, { path: req.path }));
  };
}
