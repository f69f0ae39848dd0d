/**
 * What an authorization request may ask for, beyond what the SDK's handler already checks
 * (response_type, S256, a registered redirect URI): the resource its tokens will be for (RFC
 * 8707: only Murmur's MCP server; absent means that one) and the scopes (read and ai; none asked
 * means every scope the client may have). Pure, so the rules read in one place.
 */
import { CODE_CHALLENGE_PATTERN, isOAuthScope, normalizeResource, OAUTH_SCOPES, type OAuthScope } from '@murmur/contract';

/** The resource the tokens will be for, or null when the request names another one. */
export function resourceOf(requested: URL | undefined, mcpResource: string): string | null {
  const ours = normalizeResource(mcpResource);
  if (requested === undefined) return ours;
  return normalizeResource(requested.href) === ours ? ours : null;
}

/**
 * The scopes granted if the person approves, or null when the request asks for a scope Murmur
 * does not have or the client did not register. `clientScope` is the client's registered
 * `scope` (space-separated; empty: every scope).
 */
export function scopesOf(requested: readonly string[], clientScope: string | undefined): OAuthScope[] | null {
  const registered = (clientScope ?? '').split(' ').filter(isOAuthScope);
  const allowed: readonly OAuthScope[] = registered.length > 0 ? registered : OAUTH_SCOPES;
  const asked = requested.filter((s) => s !== '');
  if (asked.length === 0) return [...allowed];
  if (!asked.every((s): s is OAuthScope => isOAuthScope(s) && allowed.includes(s))) return null;
  return OAUTH_SCOPES.filter((s) => asked.includes(s));
}

/** Whether a PKCE challenge has the S256 shape (43 base64url characters), so a code can be made with it. */
export function isS256Challenge(challenge: string): boolean {
  return CODE_CHALLENGE_PATTERN.test(challenge);
}
