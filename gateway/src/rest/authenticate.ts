/** REST authentication: verifies the bearer key through the auth service before any handler runs. */
import type { NextFunction, Request, Response } from 'express';
import type { auth } from '@murmur/proto';
import type { Clients } from '../clients';
import type { VerifiedKeyCache } from '../key-cache';
import { authenticate } from '../operations';

declare module 'express-serve-static-core' {
  interface Request {
    principal?: auth.Principal;
  }
}

export function requireKey(clients: Clients, keyCache?: VerifiedKeyCache) {
  return async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
    req.principal = await authenticate(clients, req.get('authorization'), keyCache);
    next();
  };
}
