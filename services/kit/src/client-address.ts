/**
 * Whose address a request comes from when proxies stand in front (MURMUR_TRUSTED_PROXIES), read
 * in this one place by every process that keys anything by client IP: the gateway (its limiter
 * of failed key verifications) and the app (the OAuth endpoints' rate limits). The value is
 * handed to Express's `trust proxy`, so `req.ip` is the address the nearest untrusted hop
 * connected from:
 *
 * - a whole number N: trust the N nearest hops whatever their address (behind exactly N
 *   proxies, e.g. `1` behind Envoy when nothing else can reach the process — the Helm chart);
 * - a comma-separated list of addresses, CIDRs and the names `loopback`, `linklocal`,
 *   `uniquelocal`: trust a hop when its address is listed, walking X-Forwarded-For from the
 *   right; the first unlisted one is the client;
 * - `none` (or `0`): trust nothing, X-Forwarded-For is ignored.
 *
 * The default is `loopback`: a proxy on the same machine. A client that is not behind a trusted
 * proxy cannot pick its address by sending X-Forwarded-For: its own connection's address is what
 * counts.
 */
import { isIP } from 'node:net';
import { z } from './config';

/** What Express's `trust proxy` takes: a hop count, or the addresses and names to trust. */
export type TrustedProxies = number | string[];

/** The named ranges proxy-addr (Express) knows. */
const NAMED_RANGES = ['loopback', 'linklocal', 'uniquelocal'];
const MAX_HOPS = 10;

function isCidr(entry: string): boolean {
  const [address, prefix, extra] = entry.split('/');
  if (extra !== undefined || address === undefined) return false;
  const family = isIP(address);
  if (family === 0) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}

/** Parses the setting; throws an Error saying what is wrong. */
export function parseTrustedProxies(value: string): TrustedProxies {
  const text = value.trim();
  if (text === 'none') return [];
  if (/^\d+$/.test(text)) {
    const hops = Number(text);
    if (hops > MAX_HOPS) throw new Error(`at most ${MAX_HOPS} hops`);
    return hops;
  }
  const entries = text.split(',').map((e) => e.trim());
  for (const entry of entries) {
    if (!NAMED_RANGES.includes(entry) && !isCidr(entry)) {
      throw new Error(`"${entry.slice(0, 60)}" is not a hop count, an IP address, a CIDR, loopback, linklocal, uniquelocal or none`);
    }
  }
  return entries;
}

export const trustedProxiesSchema = {
  /** Which proxies' X-Forwarded-For to believe (see the module comment); default `loopback`. */
  MURMUR_TRUSTED_PROXIES: z
    .string()
    .default('loopback')
    .transform((value, ctx): TrustedProxies => {
      try {
        return parseTrustedProxies(value);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: `MURMUR_TRUSTED_PROXIES: ${(err as Error).message}` });
        return z.NEVER;
      }
    }),
};

/** The default when a process is made without the setting (tests, embedded use). */
export const DEFAULT_TRUSTED_PROXIES: TrustedProxies = ['loopback'];
