/**
 * Turns each authenticated call into a request-log entry when its answer is over (the response's
 * `close`): what the call's note learnt (route, tool, error code, credits), who made it (the
 * verified principal: key or OAuth connection), its status, latency and body sizes — never a
 * body, a key or a token. A call that did not authenticate belongs to nobody's log. A client
 * that went away before any answer began is logged as 499.
 */
import type { Request, Response } from 'express';
import type { auth } from '@murmur/proto';
import { answeredStatus, type CallNote } from '../http/call-note';
import type { RequestLogQueue } from './queue';

/** Where a call began, taken by requestContext before anything else runs. */
export interface CallStart {
  /** Epoch milliseconds. */
  at: number;
  traceId: string;
  socketRead: number;
  socketWritten: number;
}

/** The declared length of a body, or undefined. */
function declared(value: string | number | string[] | undefined): number | undefined {
  const n = Number(value);
  return value !== undefined && !Array.isArray(value) && Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

/** Records `req`'s call into `queue` once its answer is over. */
export function recordCall(queue: RequestLogQueue, req: Request, res: Response, note: CallNote, start: CallStart): void {
  const socket = req.socket;
  res.once('close', () => {
    const principal: auth.Principal | undefined = req.principal;
    if (!principal) return;
    queue.push({
      requestId: req.requestId,
      ownerId: principal.userId,
      createdAt: new Date(start.at),
      method: req.method,
      // A call no route matched (a 404 or 405 after authenticating) is logged under its path's mount.
      route: note.route || req.baseUrl || '/',
      tool: note.tool,
      status: answeredStatus(res),
      errorCode: note.errorCode,
      latencyUs: Math.round((performance.now() - note.startedAt) * 1000),
      keyId: principal.keyId,
      clientId: principal.clientId,
      traceId: start.traceId,
      bytesIn: declared(req.headers['content-length']) ?? Math.max(0, socket.bytesRead - start.socketRead),
      bytesOut: declared(res.getHeader('content-length')) ?? Math.max(0, socket.bytesWritten - start.socketWritten),
      creditsCharged: note.credits,
      keyHint: '',
    });
  });
}
