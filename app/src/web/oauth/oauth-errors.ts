/**
 * Auth's refusals as OAuth errors, for the token, revocation and registration endpoints (the
 * SDK's handlers turn an OAuthError into the RFC 6749 JSON body and its status). Auth says
 * `invalid_grant` for every refused code or refresh token (with the reason in the message);
 * an outage is a server_error the client may retry; anything unexpected is logged here once and
 * answered server_error without its message. Tokens, codes and verifiers are never logged.
 */
import {
  InvalidClientError,
  InvalidGrantError,
  InvalidRequestError,
  InvalidScopeError,
  InvalidTargetError,
  OAuthError,
  ServerError,
} from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { MurmurError, type Logger } from '@murmur/kit';

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
      return new ServerError('Murmur is not answering right now. Try again in a minute.');
    default:
      log.error({ endpoint, code: murmurCodeOf(err), err: { message, stack: err instanceof Error ? err.stack : undefined } }, 'oauth endpoint failed');
      return new ServerError('Internal Server Error');
  }
}
