/**
 * First middleware of every request: a request id (`req_…`, or the caller's if it is one of
 * ours), echoed as X-Request-Id, carried to every service call and log line of the request;
 * the call's `traceparent` when tracing runs; and the call's note (call-note.ts), which the
 * request log reads when the answer is over.
 */
import type { NextFunction, Request, Response } from 'express';
import { isSpanContextValid, trace } from '@opentelemetry/api';
import { acceptRequestId, runWithContext } from '@murmur/kit';
import { newCallNote, runWithCallNote } from './call-note';
import type { RequestLogQueue } from '../request-log/queue';
import { recordCall } from '../request-log/recorder';

declare module 'express-serve-static-core' {
  interface Request {
    requestId: string;
  }
}

/** The middleware; with `requestLog`, every authenticated call is recorded there when it ends. */
export function requestContext(requestLog?: RequestLogQueue) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const at = Date.now();
    const requestId = acceptRequestId(req.get('x-request-id'));
    req.requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    // The trace of this call (W3C trace context), so a client can hand it to support.
    const span = trace.getActiveSpan()?.spanContext();
    const traced = span !== undefined && isSpanContextValid(span);
    if (traced) {
      res.setHeader('traceparent', `00-${span.traceId}-${span.spanId}-${span.traceFlags.toString(16).padStart(2, '0')}`);
    }
    const note = newCallNote();
    if (requestLog) {
      const socket = req.socket;
      recordCall(requestLog, req, res, note, { at, traceId: traced ? span.traceId : '', socketRead: socket.bytesRead, socketWritten: socket.bytesWritten });
    }
    runWithContext({ requestId }, () => runWithCallNote(res, note, next));
  };
}
