/**
 * API key material: minting, hashing, display hints and lifetimes. The raw key exists only in
 * the CreateApiKey response and in the caller's Authorization header; everything stored or
 * cached is derived from it one-way.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { MurmurError } from '@murmur/contract';
import { auth } from '@murmur/proto';

const DAY_MS = 24 * 60 * 60 * 1000;

/** A fresh key: "svc_" + 64 lowercase hex of 256 CSPRNG bits (DESIGN.md §2). */
export function generateApiKey(): string {
  return `svc_${randomBytes(32).toString('hex')}`;
}

/**
 * SHA-256 hex of the full key: what the database and the verification cache hold. A fast hash
 * is enough because keys carry 256 random bits (no dictionary to attack), and it keeps
 * VerifyKey a single indexed lookup. Sign-in and session tokens (sign-in.ts) carry 256 random
 * bits too and are stored the same way, with this function.
 */
export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Constant-time comparison of two hex hashes, so a lookup never leaks how much matched. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** "svc_1a2b…9f0e": enough for a person to recognise a key in a list, useless to an attacker. */
export function keyHint(key: string): string {
  const hex = key.slice('svc_'.length);
  return `svc_${hex.slice(0, 4)}…${hex.slice(-4)}`;
}

/** Lifetime in days of each KeyExpiry; null never expires. UNSPECIFIED is the 90-day default. */
export const KEY_LIFETIME_DAYS: Readonly<Record<auth.KeyExpiry, number | null>> = {
  [auth.KeyExpiry.KEY_EXPIRY_UNSPECIFIED]: 90,
  [auth.KeyExpiry.KEY_EXPIRY_30_DAYS]: 30,
  [auth.KeyExpiry.KEY_EXPIRY_90_DAYS]: 90,
  [auth.KeyExpiry.KEY_EXPIRY_365_DAYS]: 365,
  [auth.KeyExpiry.KEY_EXPIRY_NEVER]: null,
};

/**
 * When a key created at `now` with `expiry` stops working (null: never). An enum value this
 * release does not know (a newer client) is a bad parameter, not a silent default.
 */
export function expiresAtFor(expiry: auth.KeyExpiry, now: Date): Date | null {
  if (!Object.prototype.hasOwnProperty.call(KEY_LIFETIME_DAYS, expiry)) {
    throw new MurmurError('invalid_request', 'expiry must be one of KEY_EXPIRY_30_DAYS, KEY_EXPIRY_90_DAYS, KEY_EXPIRY_365_DAYS or KEY_EXPIRY_NEVER.', {
      param: 'expiry',
    });
  }
  const days = KEY_LIFETIME_DAYS[expiry];
  return days === null ? null : new Date(now.getTime() + days * DAY_MS);
}

/** A key that expires at T is expired at T and valid at T - 1 ms. */
export function isExpired(expiresAt: Date | null, now: Date): boolean {
  return expiresAt !== null && now.getTime() >= expiresAt.getTime();
}
