/**
 * The limits of Dynamic Client Registration (contract oauth-rules.ts, docs/oauth.md "Limits"): it is
 * unauthenticated and every registration is a row kept for good. Per client address — `req.ip`,
 * which the app's `trust proxy` (MURMUR_TRUSTED_PROXIES) derives — an hour's worth (the SDK's
 * own limiter, configured here) and a day's worth; and for every address together an hour's worth
 * per app replica, so a flood from many addresses stops too. A refusal is 429 with `Retry-After`,
 * `RateLimit-*` and the OAuth error body (`too_many_requests`), like the SDK's.
 */
import type { RequestHandler } from 'express';
import { rateLimit, type Options } from 'express-rate-limit';
import { TooManyRequestsError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { REGISTRATIONS_PER_ADDRESS_PER_DAY, REGISTRATIONS_PER_ADDRESS_PER_HOUR, REGISTRATIONS_PER_HOUR } from '@murmur/contract';

const HOUR_MS = 3_600_000;

const refusal = (what: string) => new TooManyRequestsError(`${what} Try again later, or identify the client by a Client ID Metadata Document URL instead.`).toResponseObject();

const common: Partial<Options> = { standardHeaders: true, legacyHeaders: false };

/** The SDK's per-address limiter, with Murmur's numbers (mcpAuthRouter's clientRegistrationOptions.rateLimit). */
export const HOURLY_PER_ADDRESS: Partial<Options> = {
  ...common,
  windowMs: HOUR_MS,
  limit: REGISTRATIONS_PER_ADDRESS_PER_HOUR,
  message: refusal(`At most ${REGISTRATIONS_PER_ADDRESS_PER_HOUR} client registrations an hour come from one address.`),
};

/** The day's limit per address and the hour's limit of all addresses together, ahead of the SDK's handler. */
export function registrationLimits(): RequestHandler[] {
  return [
    rateLimit({
      ...common,
      windowMs: 24 * HOUR_MS,
      limit: REGISTRATIONS_PER_ADDRESS_PER_DAY,
      message: refusal(`At most ${REGISTRATIONS_PER_ADDRESS_PER_DAY} client registrations a day come from one address.`),
    }),
    rateLimit({
      ...common,
      windowMs: HOUR_MS,
      limit: REGISTRATIONS_PER_HOUR,
      keyGenerator: () => 'every address',
      message: refusal('Too many clients are registering right now.'),
    }),
  ];
}
