/**
 * Every HTTP request of the gateway as metrics (decision 0041): counted by route template, method,
 * status and the contract's error code, and timed by route template and method. The template is
 * what a route left in `res.locals.route` (`labelRoute`: `/api/v1/recordings/{id}`, never the
 * path a client sent); a path no route matched counts as UNMATCHED_ROUTE. The error code is the
 * one sendError left in `res.locals.errorCode` (or an MCP tool's, tool-calls.ts); the request
 * log reads the same fields. Probes (`/healthz`) are mounted before this and are not counted.
 */
import type { NextFunction, Request, Response } from 'express';
import { counterChildren, defineCounter, defineHistogram, histogramChildren, NO_ERROR, secondsSince } from '@murmur/kit';

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

/** The status label of a request whose client went away before any answer (nginx's convention). */
export const CLIENT_CLOSED_STATUS = 499;

/** Methods counted by name; any other (llhttp knows ~30) counts as `other`. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Where a request's start is kept until its response ends. */
const START_LOCAL = 'metricsStart';

/** Middleware naming the route a request matched, for its metrics and its log line; one per route, made at start. */
export function labelRoute(template: string) {
  return (_req: Request, res: Response, next: NextFunction): void => {
    res.locals.route = template;
    next();
  };
}

/** One shared listener (no closure per request): `this` is the response. */
function recordResponse(this: Response): void {
  const method = METHODS.has(this.req.method) ? this.req.method : 'other';
  const route = (this.locals.route as string | undefined) ?? UNMATCHED_ROUTE;
  const status = this.headersSent ? this.statusCode : CLIENT_CLOSED_STATUS;
  requestChildren.get(route, method, status, (this.locals.errorCode as string | undefined) ?? NO_ERROR).inc();
  durationChildren.get(route, method).observe(secondsSince(this.locals[START_LOCAL] as number));
}

/** Counts and times every request that passes it, once its response ends (or its client goes away). */
export function httpMetrics(_req: Request, res: Response, next: NextFunction): void {
  res.locals[START_LOCAL] = performance.now();
  res.on('close', recordResponse);
  next();
}
