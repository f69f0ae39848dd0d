/**
 * Authentication for both front ends: the raw Authorization header goes to the auth service,
 * which owns the order of checks (missing → invalid → expired), unless the gateway's
 * verified-key cache (live only with the revocation channel) already holds it. The key itself
 * is never logged.
 */
import type { auth } from '@murmur/proto';
import type { Clients } from '../clients';
import type { VerifiedKeyCache } from '../key-cache';

export async function authenticate(clients: Clients, authorization: string | undefined, cache?: VerifiedKeyCache): Promise<auth.Principal> {
  const header = authorization ?? '';
  const cached = header ? cache?.get(header) : undefined;
  if (cached) return cached;
  const res = await clients.auth.verifyKey({ authorization: header });
  if (!res.principal) throw new Error('auth service returned no principal');
  cache?.set(header, res.principal);
  return res.principal;
}
