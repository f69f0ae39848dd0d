/**
 * Which IP addresses an `audio_url` (and later a webhook endpoint) may reach: only public
 * unicast ones. ipaddr.js names the special-purpose ranges of IANA's registries (loopback,
 * private, link-local — where cloud metadata lives, 169.254.169.254 —, unique-local, multicast,
 * unspecified, carrier-grade NAT, reserved, …); everything but plain `unicast` is refused, and
 * an IPv4-mapped IPv6 address is judged as the IPv4 address it carries. IPv6 ranges that embed
 * an IPv4 address (6to4, Teredo, NAT64) are named too, so refused: they could reach a private
 * IPv4 address through a translator.
 */
import ipaddr from 'ipaddr.js';

/** Why `address` may not be reached, or null when it is a public unicast address. */
export function nonPublicRange(address: string): string | null {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  const range = ip.range();
  return range === 'unicast' ? null : range;
}
