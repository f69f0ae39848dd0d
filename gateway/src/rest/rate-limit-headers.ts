/**
 * Rate-limit headers on every AI response, errors included, and Retry-After on a 429. Two forms
 * of the same numbers, because clients read both:
 *  - `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`: the separate headers of the
 *    earlier IETF drafts, still what most clients and gateways parse;
 *  - `RateLimit-Policy` and `RateLimit`: the current draft (draft-ietf-httpapi-ratelimit-headers,
 *    structured-field lists), e.g. `RateLimit-Policy: "ai";q=10;w=60` and `RateLimit: "ai";r=8;t=40`.
 * The reset counts the seconds until the next used slot of the sliding window frees (billing's
 * windowState), so it is 0 only while nothing of the window is used.
 */
import type { Response } from 'express';
import type { billing } from '@murmur/proto';
import type { MurmurError } from '@murmur/contract';

/** The name both structured fields give the one policy: AI requests (transcribe + convert, REST and MCP). */
export const RATE_LIMIT_POLICY = 'ai';

export function setRateLimitHeaders(res: Response, state: billing.RateLimitState | undefined): void {
  if (!state) return;
  res.setHeader('RateLimit-Limit', String(state.limit));
  res.setHeader('RateLimit-Remaining', String(state.remaining));
  res.setHeader('RateLimit-Reset', String(state.resetSeconds));
  res.setHeader('RateLimit-Policy', `"${RATE_LIMIT_POLICY}";q=${state.limit};w=${state.windowSeconds}`);
  res.setHeader('RateLimit', `"${RATE_LIMIT_POLICY}";r=${state.remaining};t=${state.resetSeconds}`);
}

/** The window a rate_limit_exceeded error carries (billing puts it in the ErrorInfo metadata). */
export function rateLimitOfError(err: MurmurError): billing.RateLimitState | undefined {
  const { limit, remaining, reset } = err.meta;
  if (limit === undefined) return undefined;
  return { limit: Number(limit), remaining: Number(remaining ?? 0), windowSeconds: 60, resetSeconds: Number(reset ?? err.meta.retry_after ?? 0) };
}
