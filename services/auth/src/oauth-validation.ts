/**
 * Input rules of the OAuth RPCs (oauth.ts), pure so every edge is table-tested. Like
 * validation.ts, each rule returns the normalised value or throws invalid_request naming the
 * offending field, so a bad registration or consent never reaches the database. The token
 * endpoint's refusals are not here: they are invalid_grant, decided in oauth.ts.
 *
 * Redirect URIs follow OAuth 2.1 §2.3.1 and RFC 8252: absolute https URLs, http URLs on a
 * loopback host, or a native app's private-use scheme (RFC 8252 §7.1, e.g. `cursor://…` or
 * `com.example.app:/cb`; never one a browser runs or reads itself, such as javascript: or
 * file:); never a fragment, never credentials.
 */
import { invalidParam, isId, isOAuthScope, OAUTH_SCOPES, type OAuthScope } from '@murmur/contract';

/** Longest URL accepted anywhere in a registration or a consent. */
export const MAX_OAUTH_URL_LENGTH = 2000;
/** A client may register between 1 and this many redirect URIs. */
export const MAX_REDIRECT_URIS = 10;
export const MAX_CLIENT_NAME = 200;
const MAX_SOFTWARE_FIELD = 200;

/** Hosts an http redirect URI may name (RFC 8252 §7.3; "localhost" too, as MCP clients use it). */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;
const WHITESPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f]/;

function parseUrl(value: string): URL | null {
  try {
    return new URL(value);
  } catch {
    return null;
  }
}

/** An http(s) URL as typed, with nothing the URL parser would silently drop or rewrite around it. */
function plainUrl(value: string): URL | null {
  if (value.length === 0 || value.length > MAX_OAUTH_URL_LENGTH || WHITESPACE_OR_CONTROL.test(value) || value.includes('#')) return null;
  const u = parseUrl(value);
  if (!u || (u.protocol !== 'https:' && u.protocol !== 'http:') || u.username !== '' || u.password !== '') return null;
  return u;
}

/** True for a URL on a loopback host: the only host an http redirect URI may name. */
function isLoopback(u: URL): boolean {
  return LOOPBACK_HOSTS.has(u.hostname);
}

/** Schemes that name no native app but something a browser would run, read or send itself. */
const NOT_APP_SCHEMES = new Set(['javascript:', 'data:', 'vbscript:', 'file:', 'blob:', 'about:', 'filesystem:', 'ftp:', 'ws:', 'wss:', 'mailto:', 'tel:', 'sms:']);

/** A native app's private-use redirect URI (RFC 8252 §7.1), or null. */
function privateUseUrl(value: string): URL | null {
  if (value.length === 0 || value.length > MAX_OAUTH_URL_LENGTH || WHITESPACE_OR_CONTROL.test(value) || value.includes('#')) return null;
  const u = parseUrl(value);
  if (!u || u.protocol === 'http:' || u.protocol === 'https:' || NOT_APP_SCHEMES.has(u.protocol) || u.username !== '' || u.password !== '') return null;
  return /^[a-z][a-z0-9+.-]*:$/.test(u.protocol) ? u : null;
}

/** Why `uri` cannot be a redirect URI, or null when it can. */
export function redirectUriProblem(uri: string): string | null {
  if (privateUseUrl(uri)) return null;
  const u = plainUrl(uri);
  if (!u) {
    return `must be an absolute https URL (or http on localhost, 127.0.0.1 or [::1], or a native app's own scheme) of at most ${MAX_OAUTH_URL_LENGTH} characters, without a fragment, credentials or spaces`;
  }
  if (u.protocol === 'http:' && !isLoopback(u)) return 'may use http only on localhost, 127.0.0.1 or [::1]; use https';
  return null;
}

/** A client's redirect URIs as registered: 1–10 of them, each passing {@link redirectUriProblem}; duplicates dropped. */
export function normalizeRedirectUris(uris: readonly string[]): string[] {
  if (uris.length === 0) throw invalidParam('redirect_uris', 'redirect_uris is required: register at least one redirect URI.');
  if (uris.length > MAX_REDIRECT_URIS) throw invalidParam('redirect_uris', `Register at most ${MAX_REDIRECT_URIS} redirect URIs.`);
  uris.forEach((uri, i) => {
    const problem = redirectUriProblem(uri);
    if (problem) throw invalidParam('redirect_uris', `redirect_uris[${i}] ${problem}.`);
  });
  return [...new Set(uris)];
}

/** The redirect URI of one authorization request: one URI under the same rule. */
export function requireRedirectUri(uri: string): string {
  if (uri === '') throw invalidParam('redirect_uri', 'redirect_uri is required.');
  const problem = redirectUriProblem(uri);
  if (problem) throw invalidParam('redirect_uri', `redirect_uri ${problem}.`);
  return uri;
}

/**
 * Whether `presented` is one of a client's `registered` redirect URIs: exactly equal, or, on a
 * loopback host, equal but for the port (RFC 8252 §7.3: native apps listen on whatever port is
 * free). The same rule as the MCP SDK's authorize handler the app runs, so a redirect URI the
 * app accepted is never refused here.
 */
export function redirectUriRegistered(registered: readonly string[], presented: string): boolean {
  if (registered.includes(presented)) return true;
  const p = plainUrl(presented);
  if (!p || !isLoopback(p)) return false;
  return registered.some((r) => {
    const u = plainUrl(r);
    return u !== null && isLoopback(u) && u.protocol === p.protocol && u.hostname === p.hostname && u.pathname === p.pathname && u.search === p.search;
  });
}

/**
 * A client's display name: trimmed, at most 200 characters, no control characters. RFC 7591
 * makes it optional; without one, the host (or the app's scheme) of its first redirect URI
 * stands in, so the consent screen always names something the person can check.
 */
export function normalizeClientName(name: string, redirectUris: readonly string[] = []): string {
  let value = name.trim();
  if (value === '' && redirectUris[0] !== undefined) {
    const u = parseUrl(redirectUris[0]);
    value = u ? u.host || u.protocol.replace(/:$/, '') : '';
  }
  if (value === '') throw invalidParam('client_name', 'client_name is required: the name people see on the consent screen.');
  if (value.length > MAX_CLIENT_NAME || CONTROL_CHARS.test(value)) {
    throw invalidParam('client_name', `client_name must be at most ${MAX_CLIENT_NAME} characters without control characters.`);
  }
  return value;
}

/** An optional http(s) URL of a registration (client_uri, logo_uri): '' or a plain URL. */
export function normalizeOptionalUrl(value: string, param: string): string {
  if (value === '') return '';
  if (!plainUrl(value)) {
    throw invalidParam(param, `${param} must be an absolute http(s) URL of at most ${MAX_OAUTH_URL_LENGTH} characters, without a fragment or credentials.`);
  }
  return value;
}

/** software_id / software_version: optional, at most 200 characters, no control characters. */
export function normalizeSoftwareField(value: string, param: string): string {
  if (value.length > MAX_SOFTWARE_FIELD || CONTROL_CHARS.test(value)) {
    throw invalidParam(param, `${param} must be at most ${MAX_SOFTWARE_FIELD} characters without control characters.`);
  }
  return value;
}

/** Scopes in their canonical order, without duplicates. */
function canonicalScopes(scopes: Iterable<OAuthScope>): OAuthScope[] {
  const set = new Set(scopes);
  return OAUTH_SCOPES.filter((s) => set.has(s));
}

function requireScopes(values: readonly string[], param: string): OAuthScope[] {
  const unknown = values.find((s) => !isOAuthScope(s));
  if (unknown !== undefined) throw invalidParam(param, `${param} may hold only ${OAUTH_SCOPES.join(' and ')}; ${JSON.stringify(unknown)} is not a scope.`);
  return canonicalScopes(values as OAuthScope[]);
}

/** A registration's space-separated `scope`: '' (all scopes) or known scopes, canonicalised ("ai read" → "read ai"). */
export function normalizeScopeString(scope: string): string {
  const values = scope.trim() === '' ? [] : scope.trim().split(/ +/);
  return requireScopes(values, 'scope').join(' ');
}

/** The scopes of a consent: a non-empty subset of read and ai, canonicalised. */
export function normalizeScopes(scopes: readonly string[]): OAuthScope[] {
  if (scopes.length === 0) throw invalidParam('scopes', `scopes is required: one or more of ${OAUTH_SCOPES.join(', ')}.`);
  return requireScopes(scopes, 'scopes');
}

/**
 * The client_id of a consent: a registered client's id (mcl_…) or a Client ID Metadata
 * Document URL (an https URL, which names the client by itself). Which one it is decides
 * whether the caller must look the client up.
 */
export function classifyClientId(clientId: string): { kind: 'registered' | 'metadata_document'; clientId: string } {
  if (clientId === '') throw invalidParam('client_id', 'client_id is required.');
  if (isId('mcl', clientId)) return { kind: 'registered', clientId };
  const u = plainUrl(clientId);
  if (u && u.protocol === 'https:') return { kind: 'metadata_document', clientId };
  throw invalidParam('client_id', 'client_id must be a registered client id ("mcl_…") or an https Client ID Metadata Document URL.');
}
