/**
 * The authorization server's metadata (RFC 8414), at /.well-known/oauth-authorization-server:
 * the SDK's document (endpoints, S256, the grants) with what Murmur adds or narrows. The issuer
 * is the app's public URL exactly as the MCP server's Protected Resource Metadata names it (no
 * trailing slash), since clients compare the two; every client is public, so the only client
 * authentication is "none"; clients may use a metadata document URL as their id; and every
 * authorization response carries `iss` (RFC 9207).
 */
import { createOAuthMetadata } from '@modelcontextprotocol/sdk/server/auth/router.js';
import type { OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { OAuthMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { OAUTH_SCOPES } from '@murmur/contract';

export function authorizationServerMetadata(issuer: string, provider: OAuthServerProvider): OAuthMetadata {
  return {
    ...createOAuthMetadata({ provider, issuerUrl: new URL(issuer), scopesSupported: [...OAUTH_SCOPES] }),
    issuer,
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
}
