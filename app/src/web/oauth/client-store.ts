/**
 * Who an MCP client is, for the SDK's handlers: a client registered by Dynamic Client
 * Registration (RFC 7591; `mcl_…`, kept by auth: RegisterOAuthClient, GetOAuthClient), or one
 * whose client id is the URL of its metadata document (client-metadata.ts). Every client is
 * public — PKCE binds its codes — so whatever authentication a registration asks for, it is
 * stored and answered as `token_endpoint_auth_method: "none"` with no secret (RFC 7591 §3.2.1
 * lets the server replace metadata), and the SDK's client authentication then asks for none.
 */
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import { CustomOAuthError, InvalidClientMetadataError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthClientInformationFull, OAuthClientMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { OAUTH_SCOPES } from '@murmur/contract';
import { type Logger, type ServiceClients } from '@murmur/kit';
import type { auth } from '@murmur/proto';
import { isClientMetadataUrl, type ClientMetadataDocuments } from './client-metadata';
import { murmurCodeOf, oauthErrorOf } from './oauth-errors';

/** The only grants and response type a client gets, whatever it registered. */
const GRANT_TYPES = ['authorization_code', 'refresh_token'];
const RESPONSE_TYPES = ['code'];

/** A client kept by auth, as the SDK and RFC 7591 describe it (no secret, ever). */
export function registeredClientInfo(c: auth.OAuthClient): OAuthClientInformationFull {
  return {
    client_id: c.clientId,
    client_id_issued_at: c.createdAt ? Math.floor(c.createdAt.getTime() / 1000) : undefined,
    client_name: c.clientName || undefined,
    redirect_uris: c.redirectUris,
    client_uri: c.clientUri || undefined,
    logo_uri: c.logoUri || undefined,
    scope: c.scope || undefined,
    software_id: c.softwareId || undefined,
    software_version: c.softwareVersion || undefined,
    token_endpoint_auth_method: 'none',
    grant_types: GRANT_TYPES,
    response_types: RESPONSE_TYPES,
  };
}

/** The scopes of a registration that Murmur has, in order ('' when none: every scope). */
function registeredScope(scope: string | undefined): string {
  const asked = (scope ?? '').split(' ');
  return OAUTH_SCOPES.filter((s) => asked.includes(s)).join(' ');
}

export function oauthClients(authClient: ServiceClients['auth'], documents: ClientMetadataDocuments, log: Logger): OAuthRegisteredClientsStore {
  return {
    async getClient(clientId) {
      try {
        if (isClientMetadataUrl(clientId)) return await documents.get(clientId);
        if (!clientId.startsWith('mcl_')) return undefined;
        const { client } = await authClient.getOAuthClient({ clientId });
        return client ? registeredClientInfo(client) : undefined;
      } catch (err) {
        const code = murmurCodeOf(err);
        if (code === 'not_found' || code === 'invalid_request') return undefined;
        // An outage is temporarily_unavailable (503); anything else is logged once, as server_error.
        throw oauthErrorOf(err, log, 'client lookup');
      }
    },

    async registerClient(metadata: OAuthClientMetadata) {
      try {
        const { client } = await authClient.registerOAuthClient({
          clientName: metadata.client_name ?? '',
          redirectUris: metadata.redirect_uris,
          clientUri: metadata.client_uri ?? '',
          logoUri: metadata.logo_uri ?? '',
          scope: registeredScope(metadata.scope),
          softwareId: metadata.software_id ?? '',
          softwareVersion: metadata.software_version ?? '',
        });
        if (!client) throw new Error('auth answered RegisterOAuthClient without a client');
        return registeredClientInfo(client);
      } catch (err) {
        if (murmurCodeOf(err) === 'invalid_request') {
          const message = (err as Error).message;
          // RFC 7591 §3.2.2 has its own code for a refused redirect URI.
          throw (err as { param?: string | null }).param === 'redirect_uris' ? new CustomOAuthError('invalid_redirect_uri', message) : new InvalidClientMetadataError(message);
        }
        throw oauthErrorOf(err, log, 'register');
      }
    },
  };
}
