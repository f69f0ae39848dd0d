/**
 * RateLimit-* headers on every AI response (the IETF RateLimit header fields, in the widely
 * deployed separate-header form), and Retry-After on a 429.
 */
import type { Response } from 'express';
import type { billing } from '@murmur/proto';
import type { MurmurError } from '@murmur/kit';

export function setRateLimitHeaders(res: Response, state: billing.RateLimitState | undefined): void {
  if (!state) return;
  res.setHeader('RateLimit-Limit', String(state.limit));
  res.setHeader('RateLimit-Remaining', String(state.remaining));
  res.setHeader('RateLimit-Reset', String(state.resetSeconds));
}

/** The window a rate_limit_exceeded error carries (billing puts it in the ErrorInfo metadata). */
export function rateLimitOfError(err: MurmurError): billing.RateLimitState | undefined {
  const { limit, remaining, reset } = err.meta;
  if (limit === undefined) return undefined;
  return { limit: Number(limit), remaining: Number(remaining ?? 0), windowSeconds: 60, resetSeconds: Number(reset ?? err.meta.retry_after ?? 0) };
}
