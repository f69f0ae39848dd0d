/**
 * The rules of Murmur's OAuth 2.1 for MCP clients, in one place (docs/oauth.md): token shapes,
 * lifetimes, scopes and which tool needs which scope, and the URLs the resource server and the
 * authorization server publish. Auth (issuing, verifying), the app (authorization server
 * endpoints, consent, Connected apps) and the gateway (protected resource) all read them here.
 * API keys carry the same scopes (a key is full access or read-only), so the scope checks of
 * every front end — REST, MCP, direct gRPC, Envoy's ext_authz — read them here too.
 */
import { MurmurError } from './errors';

/** What an OAuth token or an API key may do: `read` every read, `ai` whatever spends credits or changes state. */
export const OAUTH_SCOPES = ['read', 'ai'] as const;
export type OAuthScope = (typeof OAUTH_SCOPES)[number];

/** A full-access API key's scopes (every key made before key scopes has them). */
export const FULL_ACCESS_SCOPES: readonly OAuthScope[] = OAUTH_SCOPES;
/** A read-only API key's scopes: it reads, and every AI call or change is refused insufficient_scope. */
export const READ_ONLY_SCOPES: readonly OAuthScope[] = ['read'];

/**
 * Whether a credential holding `scopes` may make a call that needs `needed`. Empty scopes mean
 * every scope: what an auth service older than key scopes answers for an API key.
 */
export function hasScope(scopes: readonly string[], needed: OAuthScope): boolean {
  return scopes.length === 0 || scopes.includes(needed);
}

/**
 * The refusal of a call outside its credential's scopes (403 / PERMISSION_DENIED
 * `insufficient_scope`, with the scope in `meta`). `keyId` tells an OAuth connection (`con_…`)
 * from an API key, since each is fixed differently; `call` names what was refused
 * ("POST /api/v1/transcribe", "the transcribe tool", an RPC path).
 */
export function insufficientScope(keyId: string, needed: OAuthScope, call: string): MurmurError {
  const message = keyId.startsWith('con_')
    ? `This access token lacks the "${needed}" scope ${call} needs. Connect the client again and allow it.`
    : needed === 'ai'
      ? `This API key is read-only, and ${call} spends AI Credits or changes state (the "ai" scope). Use a key with full access, or create one in Settings → Developer (or \`npm run admin -- keys create --email you@example.com\`).`
      : `This API key lacks the "${needed}" scope ${call} needs. Create a key with full access in Settings → Developer.`;
  return new MurmurError('insufficient_scope', message, { meta: { scope: needed } });
}

/** What each scope means, for the consent screen and the metadata documents. */
export const OAUTH_SCOPE_DESCRIPTIONS: Readonly<Record<OAuthScope, string>> = {
  read: 'Read your profile, plan, usage, recordings, Thought Threads, folders and knowledge bases',
  ai: 'Transcribe audio, convert transcripts and answer questions from your library, spending your AI Credits',
};

export function isOAuthScope(s: string): s is OAuthScope {
  return (OAUTH_SCOPES as readonly string[]).includes(s);
}

/** The scope an MCP tool needs: the three AI tools (transcribe, convert, ask) need `ai`, the read tools `read`. */
export function scopeForTool(tool: string): OAuthScope {
  return tool === 'transcribe' || tool === 'convert' || tool === 'ask' ? 'ai' : 'read';
}

/** "mat_" + 32 random bytes in unpadded base64url: an access token. */
export const ACCESS_TOKEN_PATTERN = /^mat_[A-Za-z0-9_-]{43}$/;
/** "mrt_" + 32 random bytes in unpadded base64url: a refresh token. */
export const REFRESH_TOKEN_PATTERN = /^mrt_[A-Za-z0-9_-]{43}$/;
/** "mac_" + 32 random bytes in unpadded base64url: an authorization code. */
export const AUTHORIZATION_CODE_PATTERN = /^mac_[A-Za-z0-9_-]{43}$/;
/** A PKCE S256 challenge: base64url of a SHA-256, unpadded. */
export const CODE_CHALLENGE_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** A PKCE code verifier (RFC 7636 §4.1). */
export const CODE_VERIFIER_PATTERN = /^[A-Za-z0-9._~-]{43,128}$/;

const MINUTE_S = 60;
/** An access token's lifetime: short, since only its hash is stored and each use is checked. */
export const ACCESS_TOKEN_TTL_S = 60 * MINUTE_S;
/**
 * A refresh token's lifetime; each use spends it and issues the next, and a spent one presented
 * again, however soon, revokes its connection (RFC 9700 §4.14.2: no reuse grace).
 */
export const REFRESH_TOKEN_TTL_S = 30 * 24 * 60 * MINUTE_S;
/**
 * Dynamic Client Registration is unauthenticated, and every registration is a row kept for
 * good, so the app bounds it (docs/oauth.md "Limits"): per client address (MURMUR_TRUSTED_PROXIES
 * decides which address that is) an hour's and a day's worth, and for all addresses together an
 * hour's worth per app replica, so a flood from many addresses still stops. A client registers
 * once per installation; a Client ID Metadata Document client never does.
 */
export const REGISTRATIONS_PER_ADDRESS_PER_HOUR = 20;
export const REGISTRATIONS_PER_ADDRESS_PER_DAY = 100;
export const REGISTRATIONS_PER_HOUR = 1_000;

/**
 * Most OAuth connections one user may hold at once: live ones (unrevoked, with a refresh token
 * that still works) and codes approved but not yet redeemed. Past it the consent screen says to
 * revoke one in Connected apps (`oauth_connection_limit_reached`).
 */
export const MAX_ACTIVE_OAUTH_CONNECTIONS = 50;

/** An authorization code's lifetime (RFC 6749 §4.1.2 recommends at most 10 minutes). */
export const AUTHORIZATION_CODE_TTL_S = 5 * MINUTE_S;

/** The MCP server's resource identifier (RFC 8707/9728): the public API origin + "/mcp". */
export function mcpResourceUrl(publicApiUrl: string): string {
  return `${publicApiUrl.replace(/\/+$/, '')}/mcp`;
}

/** Where the MCP server's Protected Resource Metadata is served (RFC 9728 §3.1: path-suffixed form). */
export function protectedResourceMetadataUrl(publicApiUrl: string): string {
  return `${publicApiUrl.replace(/\/+$/, '')}/.well-known/oauth-protected-resource/mcp`;
}

/**
 * Resource identifiers compare after URL normalisation (scheme and host lower-cased, default
 * port dropped, no trailing slash), so "HTTPS://Api.Example/mcp/" names the same resource.
 * Anything that does not parse, or carries a fragment, names none (null).
 */
export function normalizeResource(resource: string): string | null {
  let u: URL;
  try {
    u = new URL(resource);
  } catch {
    return null;
  }
  if (u.hash !== '' || (u.protocol !== 'https:' && u.protocol !== 'http:')) return null;
  return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}${u.search}`;
}
