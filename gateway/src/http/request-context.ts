/**
 * First middleware of every request: a request id (`req_…`, or the caller's if it is one of
 * ours), echoed as X-Request-Id, carried to every service call and log line of the request;
 * and the call's `traceparent` when tracing runs.
 */
import type { NextFunction, Request, Response } from 'express';
import { isSpanContextValid, trace } from '@opentelemetry/api';
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
  // The trace of this call (W3C trace context), so a client can hand it to support.
  const span = trace.getActiveSpan()?.spanContext();
  if (span && isSpanContextValid(span)) {
    res.setHeader('traceparent', `00-${span.traceId}-${span.spanId}-${span.traceFlags.toString(16).padStart(2, '0')}`);
  }
  runWithContext({ requestId }, () => next());
}
