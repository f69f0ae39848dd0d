/**
 * Every HTTP request of the gateway as metrics (decision 0041): counted by route template, method,
 * status and the contract's error code, and timed by route template and method. The template is
 * what a route left in its call note (http/call-note.ts; `labelRoute`: `/api/v1/recordings/{id}`,
 * never the path a client sent); a path no route matched counts as UNMATCHED_ROUTE. The error
 * code is the one sendError (or an MCP tool, tool-metrics.ts) noted; the request log reads the
 * same note. Probes (`/healthz`) are mounted before this and are not counted.
 */
import type { NextFunction, Request, Response } from 'express';
import { counterChildren, defineCounter, defineHistogram, histogramChildren, NO_ERROR, secondsSince } from '@murmur/kit';
import { answeredStatus, noteOf } from './call-note';

const requests = defineCounter(
  'murmur_http_requests_total',
  'HTTP requests the gateway answered, by route template, method, status and contract error code (empty on success).',
  ['route', 'method', 'status', 'error_code'],
);
const duration = defineHistogram('murmur_http_request_duration_seconds', 'Seconds from a request arriving to its response ending, by route template and method.', ['route', 'method']);
const requestChildren = counterChildren(requests, 4);
const durationChildren = histogramChildren(duration, 2);

/** The route label of every path no route matched: one series, whatever clients ask for. */
export const UNMATCHED_ROUTE = 'unmatched';

/** Methods counted by name; any other (llhttp knows ~30) counts as `other`. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Middleware naming the route a request matched, for its metrics and its log line; one per route, made at start. */
export function labelRoute(template: string) {
  return (_req: Request, res: Response, next: NextFunction): void => {
    noteOf(res).route = template;
    next();
  };
}

/** One shared listener (no closure per request): `this` is the response. */
function recordResponse(this: Response): void {
  const method = METHODS.has(this.req.method) ? this.req.method : 'other';
  const note = noteOf(this);
  requestChildren.get(note.route || UNMATCHED_ROUTE, method, answeredStatus(this), note.errorCode || NO_ERROR).inc();
  durationChildren.get(note.route || UNMATCHED_ROUTE, method).observe(secondsSince(note.startedAt));
}

/** Counts and times every request that passes it, once its response ends (or its client goes away). */
export function httpMetrics(_req: Request, res: Response, next: NextFunction): void {
  res.on('close', recordResponse);
  next();
}
