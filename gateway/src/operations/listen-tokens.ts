/**
 * Listen tokens (docs/live.md, "Connecting"): a browser cannot set Authorization on a WebSocket,
 * so the developer's server asks for a token with its key (POST /listen/tokens) and hands it to
 * the browser, which opens GET /listen with it once. Making one spends no credits and takes no
 * rate-limit slot: it is not an AI call, the stream it opens is. Auth owns the tokens (stored as
 * hashes, single use, bound to the key they were made with); the gateway only asks.
 */
import { LISTEN_TOKEN_TTL_SECONDS } from '@murmur/contract';
import type { ServiceClients } from '@murmur/kit';
import type { auth } from '@murmur/proto';
import type { OperationContext } from './context';

/**
 * A token for the caller's own key with the key's scopes (the route already required `ai`; auth
 * checks it again from the call's principal assertion). Answered once: only its hash is kept.
 */
export async function createListenToken(ctx: OperationContext) {
  const { token, expiresAt } = await ctx.clients.auth.createListenToken({ userId: ctx.principal.userId, keyId: ctx.principal.keyId, scopes: ctx.principal.scopes });
  if (!expiresAt) throw new Error('auth returned a listen token without its expiry');
  return { object: 'listen_token' as const, token, expires_at: expiresAt.toISOString(), expires_in: LISTEN_TOKEN_TTL_SECONDS };
}

/**
 * Spends a listen token (the `token` query parameter of GET /listen) and answers who the stream
 * acts for: the token's user, its key and scopes, never whoever presents it. Called as the
 * gateway's workload, the only caller auth lets redeem. Refusals are MurmurErrors of auth's:
 * `invalid_api_key` for a malformed, unknown, used or expired token or one whose key was
 * revoked or expired since, with a message saying which; `service_unavailable` when auth is down.
 */
export async function redeemListenToken(clients: Pick<ServiceClients, 'auth'>, token: string): Promise<auth.Principal> {
  const { principal } = await clients.auth.redeemListenToken({ token });
  if (!principal) throw new Error('auth redeemed a listen token without a principal');
  return principal;
}
