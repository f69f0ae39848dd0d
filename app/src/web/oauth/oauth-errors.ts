/**
 * Auth's refusals as OAuth errors, for the token, revocation and registration endpoints (the
 * SDK's handlers turn an OAuthError into the RFC 6749 JSON body and its status). Auth says
 * `invalid_grant` for every refused code or refresh token (with the reason in the message);
 * an outage is temporarily_unavailable, answered 503 (`outageIsUnavailable`) so the client
 * retries; anything unexpected is logged here once and answered server_error without its
 * message. Tokens, codes and verifiers are never logged.
 */
import {
  InvalidClientError,
  InvalidGrantError,
  InvalidRequestError,
  InvalidScopeError,
  InvalidTargetError,
  OAuthError,
  ServerError,
  TemporarilyUnavailableError,
} from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { NextFunction, Request, Response } from 'express';
import { MurmurError } from '@murmur/contract';
import { type Logger } from '@murmur/kit';

/** The public code of an error from an RPC (a string: auth's OAuth codes may be newer than this app's kit). */
export function murmurCodeOf(err: unknown): string | undefined {
  return err instanceof MurmurError ? err.code : undefined;
}

/** The OAuth error to answer for what an RPC threw while serving `endpoint`. */
export function oauthErrorOf(err: unknown, log: Logger, endpoint: string): OAuthError {
  if (err instanceof OAuthError) return err;
  const message = err instanceof Error ? err.message : '';
  switch (murmurCodeOf(err)) {
    case 'invalid_grant':
    case 'not_found':
      return new InvalidGrantError(message);
    case 'invalid_request':
      return new InvalidRequestError(message);
    case 'invalid_scope':
      return new InvalidScopeError(message);
    case 'invalid_target':
      return new InvalidTargetError(message);
    case 'invalid_client':
      return new InvalidClientError(message);
    case 'service_unavailable':
      return new TemporarilyUnavailableError('Murmur is not answering right now. Try again in a minute.');
    default:
      log.error({ endpoint, code: murmurCodeOf(err), err: { message, stack: err instanceof Error ? err.stack : undefined } }, 'oauth endpoint failed');
      return new ServerError('Internal Server Error');
  }
}

/**
 * The SDK's handlers answer every OAuthError but server_error with 400; an outage
 * (temporarily_unavailable) is 503 instead, so a client retries rather than taking its grant or
 * registration for refused.
 */
export function outageIsUnavailable(_req: Request, res: Response, next: NextFunction): void {
  const json = res.json.bind(res);
  res.json = (body: unknown) => {
    if (res.statusCode === 400 && (body as { error?: unknown } | null)?.error === 'temporarily_unavailable') res.status(503);
    return json(body);
  };
  next();
}
