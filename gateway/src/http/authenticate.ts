/** Authentication of both front ends (REST and /mcp): verifies the bearer key through the auth service before any handler runs. */
import type { NextFunction, Request, Response } from 'express';
import type { auth } from '@murmur/proto';
import { currentContext, invalidParam, runWithContext } from '@murmur/kit';
import type { Clients } from '../clients';
import type { VerifiedKeyCache } from '../key-cache';
import { authenticate } from '../operations';

declare module 'express-serve-static-core' {
  interface Request {
    principal?: auth.Principal;
  }
}

/**
 * The one Authorization header of a request. Node keeps only the first of repeated
 * Authorization headers (`req.headers`), so a request carrying two keys would act as whichever
 * came first — and a proxy may have read the other. Two are refused instead (the raw list,
 * `headersDistinct`, still holds them all).
 */
export function authorizationOf(req: Request): string | undefined {
  const all = req.headersDistinct.authorization;
  if (all && all.length > 1) {
    throw invalidParam('Authorization', 'Send one Authorization header, with one key ("Authorization: Bearer svc_…").');
  }
  return all?.[0];
}

/** `resourceOf` names what an OAuth access token must be for on this request (see authenticate). */
export function requireKey(clients: Clients, keyCache?: VerifiedKeyCache, resourceOf: (req: Request) => string = () => '') {
  return async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
    const principal = await authenticate(clients, authorizationOf(req), keyCache, resourceOf(req));
    req.principal = principal;
    // Every service call of this request from here on carries a principal assertion for this user.
    runWithContext({ requestId: currentContext()?.requestId ?? req.requestId, principal: { userId: principal.userId, keyId: principal.keyId } }, () => next());
  };
}
