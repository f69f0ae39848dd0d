/**
 * Authentication of both front ends (REST and /mcp): verifies the bearer key through the auth
 * service before any handler runs, within the bound on unknown keys per address (failed-keys.ts),
 * and checks the scope a REST route needs.
 */
import type { NextFunction, Request, Response } from 'express';
import type { auth } from '@murmur/proto';
import { hasScope, insufficientScope, invalidParam, MurmurError, parseAuthorization, type OAuthScope } from '@murmur/contract';
import { currentContext, runWithContext, type ServiceClients } from '@murmur/kit';
import type { VerifiedKeyCache } from '../key-cache';
import { authenticate } from '../operations';
import type { FailedKeyLimiter } from './failed-keys';

declare module 'express-serve-static-core' {
  interface Request {
    principal?: auth.Principal;
  }
}

/**
 * The one Authorization header of a request. Node keeps only the first of repeated
 * Authorization headers (`req.headers`), so a request carrying two keys would act as whichever
 * came first — and a proxy may have read the other. Two are refused instead (the raw list,
 * `rawHeaders`, still holds them all; read here rather than through `headersDistinct`, which
 * builds an object of every header on each request).
 */
export function authorizationOf(req: Request): string | undefined {
  const raw = req.rawHeaders;
  let found: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length !== 13 || name.toLowerCase() !== 'authorization') continue;
    if (found !== undefined) throw invalidParam('Authorization', 'Send one Authorization header, with one key ("Authorization: Bearer svc_…").');
    found = raw[i + 1]!;
  }
  return found;
}

/**
 * Refuses a call `principal` may not make: 403 `insufficient_scope` (with the RFC 6750
 * challenge) when its key or token lacks `needed` — a read-only key calling an AI route or tool.
 * `call` names the call in the message. Nothing has been read, charged or counted yet.
 */
export function requireScope(principal: auth.Principal, needed: OAuthScope | null, call: string): void {
  if (needed !== null && !hasScope(principal.scopes, needed)) throw insufficientScope(principal.keyId, needed, call);
}

/**
 * The app's limiter of failed key verifications (failed-keys.ts), set by createApp in
 * `app.locals` so both front ends share it without another parameter; absent, nothing is limited.
 */
export const FAILED_KEYS_LOCAL = 'failedKeys';

function failedKeysOf(req: Request): FailedKeyLimiter | undefined {
  return req.app.locals[FAILED_KEYS_LOCAL] as FailedKeyLimiter | undefined;
}

/**
 * `resourceOf` names what an OAuth access token must be for on this request (see authenticate);
 * `scopeOf`, when given, the scope the request needs, checked right after the key (REST: its
 * route decides; /mcp decides per JSON-RPC message instead, mcp/scopes.ts).
 */
export function requireKey(
  clients: ServiceClients,
  keyCache?: VerifiedKeyCache,
  resourceOf: (req: Request) => string = () => '',
  scopeOf?: (req: Request) => OAuthScope | null,
) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const authorization = authorizationOf(req);
    const failedKeys = failedKeysOf(req);
    const blocked = authorization && failedKeys ? failedKeys.check(req, res, authorization) : undefined;
    if (blocked) await blocked;
    let principal: auth.Principal;
    try {
      principal = await authenticate(clients, authorization, keyCache, resourceOf(req));
    } catch (err) {
      // Only a well-formed key that auth looked up and did not find (or found revoked) costs a read.
      if (failedKeys && err instanceof MurmurError && err.code === 'invalid_api_key' && parseAuthorization(authorization ?? '').ok) await failedKeys.failed(req);
      throw err;
    }
    failedKeys?.verified(authorization ?? '');
    req.principal = principal;
    if (scopeOf) requireScope(principal, scopeOf(req), `${req.method} ${req.baseUrl}${req.path}`);
    // Every service call of this request from here on carries a principal assertion for this
    // user and what the key may do (the services refuse an AI RPC to a read-only key too).
    const asserted = { userId: principal.userId, keyId: principal.keyId, scopes: principal.scopes };
    runWithContext({ requestId: currentContext()?.requestId ?? req.requestId, principal: asserted }, () => next());
  };
}
