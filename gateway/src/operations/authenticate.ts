/**
 * Authentication for both front ends. A missing or malformed header is refused here by the
 * same pure check auth applies first (the contract's parseAuthorization: no database, no RPC, so the
 * answer is the contract's 401 even while auth is down); a well-formed key goes to the auth
 * service (unknown, revoked, expired), unless the gateway's verified-key cache (live only with
 * the revocation channel) already holds it. The key itself is never logged.
 */
import { MurmurError, parseAuthorization } from '@murmur/contract';
import type { auth } from '@murmur/proto';
import type { ServiceClients } from '@murmur/kit';
import type { VerifiedKeyCache } from '../key-cache';

/**
 * `resource` is what an OAuth access token must have been issued for (RFC 8707): the MCP
 * server's URL on /mcp, REST's own on /api/v1 (so MCP tokens never work there). API keys work
 * on both. The cache slot covers the resource too, so a verification for one never answers the other.
 */
export async function authenticate(clients: ServiceClients, authorization: string | undefined, cache?: VerifiedKeyCache, resource = ''): Promise<auth.Principal> {
  const header = authorization ?? '';
  const parsed = parseAuthorization(header);
  if (!parsed.ok) throw new MurmurError(parsed.code);
  const slot = `${resource}\n${header}`;
  const cached = cache?.get(slot);
  if (cached) return cached;
  const res = await clients.auth.verifyKey({ authorization: header, resource });
  if (!res.principal) throw new Error('auth service returned no principal');
  cache?.set(slot, res.principal);
  return res.principal;
}
