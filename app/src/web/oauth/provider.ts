/**
 * The SDK's OAuthServerProvider for Murmur: the SDK's handlers parse and answer the protocol,
 * and every decision is auth's, over its OAuth RPCs with the app's admin identity. Auth checks
 * the PKCE verifier in the same statement that redeems the code (so the SDK's own check is
 * skipped: it would need the challenge in a separate read), binds codes to their client and
 * redirect URI, rotates refresh tokens and revokes a whole connection when a spent one comes
 * back. The authorization step itself — sign-in, consent — is consent-page.ts.
 */
import type { AuthorizationParams, OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import { InvalidTargetError, InvalidTokenError, ServerError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthClientInformationFull, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Response } from 'express';
import type { Logger, ServiceClients } from '@murmur/kit';
import type { auth } from '@murmur/proto';
import { resourceOf } from './authorization-request';
import { oauthErrorOf } from './oauth-errors';

export interface ProviderOptions {
  auth: ServiceClients['auth'];
  clientsStore: OAuthRegisteredClientsStore;
  /** The MCP server's resource identifier: the only one tokens are issued for. */
  mcpResource: string;
  /** Answers an authorization request that passed the SDK's checks (consent-page.ts). */
  authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: Response): Promise<void>;
  log: Logger;
}

/** Auth's token pair as RFC 6749 §5.1 answers it. */
function tokenResponse(t: auth.OAuthTokens | undefined): OAuthTokens {
  if (!t) throw new ServerError('auth answered no tokens');
  return { access_token: t.accessToken, token_type: 'Bearer', expires_in: t.expiresIn, refresh_token: t.refreshToken, scope: t.scopes.join(' ') };
}

export function murmurOAuthProvider(opts: ProviderOptions): OAuthServerProvider {
  const { auth: authClient, log } = opts;

  /** A token request's `resource` (RFC 8707), normalised; '' when absent; another server's → invalid_target. */
  function tokenResource(resource: URL | undefined): string {
    if (resource === undefined) return '';
    const ours = resourceOf(resource, opts.mcpResource);
    if (ours === null) throw new InvalidTargetError(`Tokens are issued only for ${opts.mcpResource}.`);
    return ours;
  }

  return {
    clientsStore: opts.clientsStore,
    skipLocalPkceValidation: true,
    authorize: opts.authorize,

    challengeForAuthorizationCode() {
      // Never called: skipLocalPkceValidation hands the verifier to auth.
      return Promise.reject(new ServerError('PKCE is checked when the code is redeemed.'));
    },

    async exchangeAuthorizationCode(client, code, codeVerifier, redirectUri, resource) {
      try {
        const { tokens } = await authClient.exchangeAuthorizationCode({
          clientId: client.client_id,
          code,
          codeVerifier: codeVerifier ?? '',
          // Absent only when the authorization request named none either, so the code is bound to the one registered.
          redirectUri: redirectUri ?? (client.redirect_uris.length === 1 ? client.redirect_uris[0]! : ''),
          resource: tokenResource(resource),
        });
        return tokenResponse(tokens);
      } catch (err) {
        throw oauthErrorOf(err, log, 'token');
      }
    },

    async exchangeRefreshToken(client, refreshToken, scopes, resource) {
      try {
        const { tokens } = await authClient.exchangeRefreshToken({
          clientId: client.client_id,
          refreshToken,
          scopes: (scopes ?? []).filter((s) => s !== ''),
          resource: tokenResource(resource),
        });
        return tokenResponse(tokens);
      } catch (err) {
        throw oauthErrorOf(err, log, 'token');
      }
    },

    async revokeToken(client, request) {
      try {
        await authClient.revokeOAuthToken({ clientId: client.client_id, token: request.token });
      } catch (err) {
        throw oauthErrorOf(err, log, 'revoke');
      }
    },

    verifyAccessToken() {
      // The app is the authorization server only; the MCP server (the gateway) checks tokens with auth.
      return Promise.reject(new InvalidTokenError('Access tokens are checked by the MCP server.'));
    },
  };
}
