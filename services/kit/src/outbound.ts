/**
 * Requests Murmur makes to addresses its users name (an `audio_url`, a webhook endpoint), made
 * safe against server-side request forgery — one rule for every such request:
 *  - `http`/`https` only, no credentials in the URL, ports 80/443 unless configured;
 *  - the host is resolved here, once per request; every address it resolves to must be public
 *    unicast (ipaddr.js's names of IANA's special-purpose ranges: loopback, private, link-local —
 *    where cloud metadata lives —, unique-local, multicast, unspecified, carrier-grade NAT,
 *    reserved, and the IPv6 ranges that embed IPv4: 6to4, Teredo, NAT64; an IPv4-mapped IPv6
 *    address is judged as its IPv4 address), unless the policy allows it;
 *  - the connection goes to the address that was checked (a pinned `lookup`: no second DNS
 *    query, so nothing can rebind between check and connect), while TLS still verifies the name.
 * Alternate spellings of an address (decimal, octal, hex, `127.1`) are normalised by the WHATWG
 * URL parser before any of this looks at them.
 */
import * as dns from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { z } from './config';

/** Where outbound requests may go. */
export interface OutboundPolicy {
  /** Any address, private and loopback included (tests, on-premise). Off by default. */
  allowPrivate: boolean;
  /** Non-public ranges allowed anyway (an on-premise server), e.g. 10.1.2.0/24. */
  allowCidrs: readonly string[];
  /** The ports a URL may name (default 80 and 443). */
  ports: readonly number[];
}

export const DEFAULT_OUTBOUND_POLICY: OutboundPolicy = { allowPrivate: false, allowCidrs: [], ports: [80, 443] };

/** What a caller's refusals look like: why a URL may never be fetched, why it could not be now. */
export interface OutboundErrors {
  forbidden(why: string): Error;
  unreachable(why: string): Error;
}

export type Resolve = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

const systemResolve: Resolve = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

/** Why `address` may not be reached, or null when it is a public unicast address. */
export function nonPublicRange(address: string): string | null {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  const range = ip.range();
  return range === 'unicast' ? null : range;
}

/** Whether `policy` lets a request reach `address`. */
export function isAllowedAddress(address: string, policy: OutboundPolicy): boolean {
  if (policy.allowPrivate || nonPublicRange(address) === null) return true;
  const ip = ipaddr.process(address);
  return policy.allowCidrs.some((cidr) => {
    const range = ipaddr.parseCIDR(cidr);
    return range[0].kind() === ip.kind() && ip.match(range);
  });
}

/** The form of a URL: scheme, credentials, port. */
export function checkOutboundUrl(url: URL, policy: OutboundPolicy, errors: Pick<OutboundErrors, 'forbidden'>): URL {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw errors.forbidden(`uses ${url.protocol.slice(0, 20)} (only https and http are allowed)`);
  if (url.username || url.password) throw errors.forbidden('carries a user name or password');
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  if (!policy.ports.includes(port)) throw errors.forbidden(`names port ${port} (only ${policy.ports.join(' and ')} are allowed)`);
  return url;
}

/** The one address a request to `url` will connect to: resolved once, every answer checked. */
export async function checkedAddress(url: URL, policy: OutboundPolicy, errors: OutboundErrors, resolve: Resolve = systemResolve): Promise<{ address: string; family: number }> {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let answers: Array<{ address: string; family: number }>;
  if (isIP(host)) {
    answers = [{ address: host, family: isIP(host) }];
  } else {
    try {
      answers = await resolve(host);
    } catch (err) {
      throw errors.unreachable(`its host name does not resolve (${(err as NodeJS.ErrnoException).code ?? 'DNS error'})`);
    }
    if (answers.length === 0) throw errors.unreachable('its host name does not resolve');
  }
  for (const a of answers) {
    if (!isAllowedAddress(a.address, policy)) throw errors.forbidden(`points to a ${nonPublicRange(a.address) ?? 'non-public'} address`);
  }
  return answers[0]!;
}

/** A `lookup` for http(s).request that answers only the address already checked. */
export function pinnedLookup(address: string, family: number): LookupFunction {
  return (_hostname, options, callback) => {
    if ((options as dns.LookupOptions).all) (callback as unknown as (err: null, all: dns.LookupAddress[]) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

function list(v: string): string[] {
  return v
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
}

/** The environment variables of one outbound policy, `<prefix>_ALLOW_PRIVATE`, `_ALLOW_CIDRS`, `_PORTS`, checked at start. */
export function outboundConfigSchema<P extends string>(prefix: P) {
  return {
    [`${prefix}_ALLOW_PRIVATE`]: z.enum(['true', 'false']).default('false'),
    [`${prefix}_ALLOW_CIDRS`]: z
      .string()
      .default('')
      .refine((v) => list(v).every((c) => ipaddr.isValidCIDR(c)), 'a comma-separated list of CIDR ranges, such as 10.1.2.0/24'),
    [`${prefix}_PORTS`]: z
      .string()
      .default('80,443')
      .refine((v) => list(v).length > 0 && list(v).every((p) => /^\d{1,5}$/.test(p) && Number(p) >= 1 && Number(p) <= 65535), 'a comma-separated list of ports'),
  } as { [K in `${P}_ALLOW_PRIVATE`]: z.ZodDefault<z.ZodEnum<{ true: 'true'; false: 'false' }>> } & { [K in `${P}_ALLOW_CIDRS` | `${P}_PORTS`]: z.ZodDefault<z.ZodString> };
}

/** The policy those variables describe. */
export function outboundPolicyOf<P extends string>(prefix: P, cfg: Record<string, unknown>): OutboundPolicy {
  return {
    allowPrivate: cfg[`${prefix}_ALLOW_PRIVATE`] === 'true',
    allowCidrs: list(String(cfg[`${prefix}_ALLOW_CIDRS`] ?? '')),
    ports: list(String(cfg[`${prefix}_PORTS`] ?? '80,443')).map(Number),
  };
}
