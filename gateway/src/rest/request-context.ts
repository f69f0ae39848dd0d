/**
 * First middleware of every request: a request id (`req_…`, or the caller's if it is one of
 * ours), echoed as X-Request-Id, carried to every service call and log line of the request.
 */
import type { NextFunction, Request, Response } from 'express';
import { acceptRequestId, runWithContext } from '@murmur/kit';

declare module 'express-serve-static-core' {
  interface Request {
    requestId: string;
  }
}

export function requestContext(req: Request, res: Response, next: NextFunction): void {
  const requestId = acceptRequestId(req.get('x-request-id'));
  req.requestId = requestId;
  res.setHeader('X-Request-Id', requestId);
  runWithContext({ requestId }, () => next());
}
