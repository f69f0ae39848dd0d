/**
 * The gateway's bound on verifications of keys that do not exist. A well-formed key costs auth a
 * database read (a malformed one costs nothing: the gateway refuses it itself), and anyone can
 * send endless random `svc_…` keys. So failures are counted per client address (`req.ip`, which
 * MURMUR_TRUSTED_PROXIES derives behind proxies; IPv6 by its /56, as one subscriber's network):
 * past {@link FAILED_KEYS_PER_WINDOW} unknown or revoked keys (`invalid_api_key` from auth)
 * within {@link FAILED_KEYS_WINDOW_S} seconds, that address's keys are answered 429
 * `too_many_invalid_keys` with `Retry-After` (and the window as RateLimit policy `"keys"`),
 * before auth is asked, until the window ends.
 *
 * Valid keys are never slowed and never counted: the check is one map lookup, and a key this
 * gateway verified in the last {@link REMEMBERED_VALID_MS} ms still goes through from a blocked
 * address (so a NAT shared with a scanner does not lock its working clients out). A key first
 * presented from a blocked address waits the window like any other. Whether a key was valid is
 * not what decides the timing of the answer to anyone who does not hold it. Counters live in this
 * process (rate-limiter-flexible's in-memory limiter, bounded): with N replicas an address gets N
 * windows' worth at most, still a bound.
 */
import { hash } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import type { Request, Response } from 'express';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { MurmurError } from '@murmur/contract';

export const FAILED_KEYS_PER_WINDOW = 20;
export const FAILED_KEYS_WINDOW_S = 60;
/** How long a key verified here still passes a blocked address. */
export const REMEMBERED_VALID_MS = 10 * 60_000;
const MAX_REMEMBERED = 50_000;

/** The first 56 bits of an IPv6 address, as hex: one bucket per subscriber's network. */
function ipv6Prefix56(address: string): string {
  const [head = '', tail = ''] = address.split('::');
  const parts = (s: string) => (s === '' ? [] : s.split(':'));
  const h = parts(head);
  const t = parts(tail);
  const groups = address.includes('::') ? [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t] : h;
  return groups
    .slice(0, 4)
    .map((g) => g.padStart(4, '0'))
    .join('')
    .slice(0, 14);
}

/** The bucket of a client address: IPv4 (and IPv4-mapped IPv6) as is, IPv6 by its /56. */
export function addressBucket(address: string | undefined): string {
  if (!address) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped && isIPv4(mapped)) return mapped;
  if (isIPv6(address)) return `${ipv6Prefix56(address.toLowerCase())}::/56`;
  return address;
}

export class FailedKeyLimiter {
  private readonly failures = new RateLimiterMemory({ points: FAILED_KEYS_PER_WINDOW, duration: FAILED_KEYS_WINDOW_S });
  /** SHA-256 of Authorization values verified here → until when they pass a blocked address. */
  private readonly valid = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** When the last failure was counted (the limiter's clock, Date.now): none within a window, no address is blocked. */
  private lastFailureAt = -Infinity;

  private static slot(authorization: string): string {
    return hash('sha256', authorization);
  }

  /**
   * Whether any address may be blocked now. A block ends when its window does, at most
   * {@link FAILED_KEYS_WINDOW_S} s after the failure that began it, so none is without a failure
   * within the last window; then a check needs neither the client address nor the limiter.
   */
  private mayBlock(): boolean {
    return Date.now() - this.lastFailureAt < FAILED_KEYS_WINDOW_S * 1000;
  }

  /**
   * Throws 429 too_many_invalid_keys when `req`'s address is over its failures and the key is
   * not one verified lately, with `Retry-After` and the window as policy `"keys"` on `res`.
   * Undefined (nothing to wait for) when no address can be blocked: the usual case.
   */
  check(req: Request, res: Response, authorization: string): Promise<void> | undefined {
    return this.mayBlock() ? this.checkBlocked(req, res, authorization) : undefined;
  }

  private async checkBlocked(req: Request, res: Response, authorization: string): Promise<void> {
    const seconds = await this.blockedFor(req.ip, authorization);
    if (seconds === undefined) return;
    // The draft's headers in both forms, as the AI routes send theirs (policy "ai").
    res.set({
      'RateLimit-Limit': String(FAILED_KEYS_PER_WINDOW),
      'RateLimit-Remaining': '0',
      'RateLimit-Reset': String(seconds),
      'RateLimit-Policy': `"keys";q=${FAILED_KEYS_PER_WINDOW};w=${FAILED_KEYS_WINDOW_S}`,
      RateLimit: `"keys";r=0;t=${seconds}`,
    });
    throw FailedKeyLimiter.refusal(seconds);
  }

  /**
   * For a caller without an HTTP response to decorate (a WebSocket): throws the same 429 when
   * `address` is over its failures and `credential` is not one verified lately.
   */
  async checkAddress(address: string | undefined, credential: string): Promise<void> {
    const seconds = await this.blockedFor(address, credential);
    if (seconds !== undefined) throw FailedKeyLimiter.refusal(seconds);
  }

  /** Seconds until `address` may try unknown keys again, or undefined when it may now (or `credential` was verified lately). */
  private async blockedFor(address: string | undefined, credential: string): Promise<number | undefined> {
    if (!this.mayBlock()) return undefined;
    const state = await this.failures.get(addressBucket(address));
    if (!state || state.consumedPoints < FAILED_KEYS_PER_WINDOW) return undefined;
    const until = this.valid.get(FailedKeyLimiter.slot(credential));
    if (until !== undefined && until > this.now()) return undefined;
    return Math.max(1, Math.ceil(state.msBeforeNext / 1000));
  }

  private static refusal(seconds: number): MurmurError {
    return new MurmurError(
      'too_many_invalid_keys',
      `Too many requests from your address sent unknown or revoked API keys (more than ${FAILED_KEYS_PER_WINDOW} in ${FAILED_KEYS_WINDOW_S} s). Wait ${seconds} s, and check the key you send (Settings → Developer lists yours).`,
      { meta: { retry_after: String(seconds) } },
    );
  }

  /** A key auth did not know (or found revoked): one failure for the address. */
  async failed(req: Request): Promise<void> {
    await this.failedAt(req.ip);
  }

  /** The same for a caller known by its address only (a WebSocket's, or a listen token's). */
  async failedAt(address: string | undefined): Promise<void> {
    this.lastFailureAt = Date.now();
    await this.failures.penalty(addressBucket(address));
  }

  /** A key auth verified: it passes this address's block for a while. */
  verified(authorization: string): void {
    if (this.valid.size >= MAX_REMEMBERED) this.valid.clear();
    this.valid.set(FailedKeyLimiter.slot(authorization), this.now() + REMEMBERED_VALID_MS);
  }
}
