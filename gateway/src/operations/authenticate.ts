/**
 * Authentication for both front ends: the raw Authorization header goes to the auth service,
 * which owns the order of checks (missing → invalid → expired). The key never leaves this call.
 */
import type { auth } from '@murmur/proto';
import type { Clients } from '../clients';

export async function authenticate(clients: Clients, authorization: string | undefined): Promise<auth.Principal> {
  const res = await clients.auth.verifyKey({ authorization: authorization ?? '' });
  if (!res.principal) throw new Error('auth service returned no principal');
  return res.principal;
}
