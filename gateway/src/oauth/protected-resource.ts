/**
 * The MCP server as an OAuth 2.1 protected resource (MCP authorization spec; docs/oauth.md):
 * its Protected Resource Metadata (RFC 9728) names the resource (`<public URL>/mcp`), the
 * authorization server (the app) and the scopes, and every 401 of /mcp points at it with
 * `WWW-Authenticate: Bearer resource_metadata="…"`, so a client that only knows the URL can
 * find where to sign in. Tokens are checked by auth's VerifyKey, which accepts an access token
 * only for the resource it was issued for (RFC 8707); REST passes its own resource, so an MCP
 * token never works there. API keys work on both.
 */
import type { Request, Response } from 'express';
import type { OAuthProtectedResourceMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { mcpResourceUrl, OAUTH_SCOPES, protectedResourceMetadataUrl } from '@murmur/contract';

export interface OAuthResourceOptions {
  /**
   * The API's public origin (PUBLIC_API_URL), e.g. https://api.murmur.example. When unset, the
   * request's own origin is used: right on a developer's machine, while behind a proxy the
   * setting is what keeps the resource identifier stable.
   */
  publicUrl?: string;
  /** The authorization server's issuer URL (the app, APP_PUBLIC_URL); no metadata is served without it. */
  authorizationServer?: string;
}

/** The public origin a request reached: the configured one, else its own scheme and host. */
export function publicUrlOf(req: Request, opts: OAuthResourceOptions): string {
  return (opts.publicUrl ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`).replace(/\/+$/, '');
}

/** The resource an access token must be issued for, by where the request went: /mcp, or REST's own. */
export function resourceOf(req: Request, opts: OAuthResourceOptions): string {
  const base = publicUrlOf(req, opts);
  return req.baseUrl === '/api/v1' ? `${base}/api/v1` : mcpResourceUrl(base);
}

/** The `WWW-Authenticate` parameters a /mcp refusal adds to the bearer challenge. */
export function mcpChallenge(req: Request, opts: OAuthResourceOptions): string {
  return `resource_metadata="${protectedResourceMetadataUrl(publicUrlOf(req, opts))}", scope="${OAUTH_SCOPES.join(' ')}"`;
}

/** The metadata document of the MCP server (RFC 9728 §2). */
export function resourceMetadata(req: Request, opts: OAuthResourceOptions & { authorizationServer: string }): OAuthProtectedResourceMetadata {
  const base = publicUrlOf(req, opts);
  return {
    resource: mcpResourceUrl(base),
    authorization_servers: [opts.authorizationServer.replace(/\/+$/, '')],
    scopes_supported: [...OAUTH_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'Murmur',
    resource_documentation: `${base}/api/v1/openapi.json`,
  };
}

/** Where the metadata is served: the path-suffixed form clients derive from the MCP URL, and the root form. */
export const PROTECTED_RESOURCE_METADATA_PATHS = ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource'] as const;

/** Answers the metadata document: public, cacheable, any origin; 404 without an authorization server. */
export function protectedResourceMetadataHandler(opts: OAuthResourceOptions) {
  return (req: Request, res: Response) => {
    if (!opts.authorizationServer) {
      res.status(404).json({ error: 'not_found', error_description: 'This server has no OAuth authorization server configured; use an API key.' });
      return;
    }
    res.set({ 'Access-Control-Allow-Origin': '*', 'Cache-Control': 'public, max-age=3600' });
    res.json(resourceMetadata(req, { ...opts, authorizationServer: opts.authorizationServer }));
  };
}
