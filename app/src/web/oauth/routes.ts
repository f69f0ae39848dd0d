/**
 * Murmur's OAuth 2.1 authorization server for MCP clients (docs/oauth.md), mounted at the app's
 * root: the MCP server's 401 points clients here through its Protected Resource Metadata. The
 * SDK's router serves the protocol — /authorize, /token, /register (Dynamic Client
 * Registration), /revoke, each with its own CORS and rate limits (keyed by the client address
 * the app's MURMUR_TRUSTED_PROXIES derives; registration's in registration-limits.ts) — over
 * provider.ts; this adds
 * the metadata document (metadata.ts), the refusals of /authorize as pages, never redirects
 * (authorize-responses.ts), and the consent form's post (consent-routes.ts).
 *
 * /token, /register and /revoke are called by clients, not browsers: no session, no CSRF token,
 * and the pages' cross-site checks (which only guard the pages' own posts) do not apply. Their
 * bodies stay within the app's parser limits (the form parser's, and 16 KB of JSON for a
 * registration), and a body the parsers refuse is an OAuth error, not a page.
 */
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import { InvalidClientMetadataError, InvalidRequestError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { metadataHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/metadata.js';
import { mcpAuthRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { mcpResourceUrl, OAUTH_SCOPES } from '@murmur/contract';
import { type Logger, type ServiceClients } from '@murmur/kit';
import type { GuardOptions } from '../pages';
import { authorizeResponses } from './authorize-responses';
import { ClientMetadataDocuments, type ClientMetadataPolicy } from './client-metadata';
import { oauthClients } from './client-store';
import { consentPage } from './consent-page';
import { consentRoutes } from './consent-routes';
import { authorizationServerMetadata } from './metadata';
import { outageIsUnavailable } from './oauth-errors';
import { murmurOAuthProvider } from './provider';
import { HOURLY_PER_ADDRESS, registrationLimits } from './registration-limits';

/** Largest client registration accepted (a name, a few URIs). */
export const MAX_REGISTRATION_BYTES = 16 * 1024;

export interface OAuthServerOptions extends GuardOptions {
  clients: ServiceClients;
  /** The app's public URL: the issuer. */
  issuer: string;
  /** The public API's URL: the MCP server, the only resource tokens are for, is its /mcp. */
  apiUrl: string;
  clientMetadataPolicy: ClientMetadataPolicy;
  log: Logger;
  now: () => Date;
}

/** The endpoints clients call with a body (not browsers), whose refusals are OAuth JSON. */
export const OAUTH_BODY_PATHS = ['/token', '/register', '/revoke'];

/**
 * A body /token, /register or /revoke could not read (too large, too many fields, not JSON), as
 * the OAuth error a client understands rather than a page. Mounted by the server at its level,
 * at OAUTH_BODY_PATHS: the form parser runs before any route.
 */
export function unreadableOAuthBody(err: unknown, req: Request, res: Response, next: NextFunction): void {
  const status = (err as { status?: unknown }).status;
  if (typeof status !== 'number' || status < 400 || status >= 500) return next(err);
  const error = req.baseUrl === '/register' ? new InvalidClientMetadataError('The body could not be read as JSON of at most 16 KB.') : new InvalidRequestError('The body could not be read as a form of at most 16 KB.');
  res.status(status === 413 ? 413 : 400).set('Cache-Control', 'no-store').json(error.toResponseObject());
}

/** The SDK's rule for an issuer, said in terms of the setting: https, or http on this machine only. */
function checkIssuer(issuer: string): URL {
  const url = new URL(issuer);
  if (url.protocol !== 'https:' && url.hostname !== 'localhost' && url.hostname !== '127.0.0.1') {
    throw new Error(`APP_PUBLIC_URL must be an https URL (http only for localhost or 127.0.0.1): it is the OAuth issuer MCP clients check, and it is ${issuer}`);
  }
  return url;
}

export function oauthRoutes(opts: OAuthServerOptions): Router {
  const issuerUrl = checkIssuer(opts.issuer);
  const mcpResource = mcpResourceUrl(opts.apiUrl);
  const documents = new ClientMetadataDocuments(opts.clientMetadataPolicy, opts.log, () => opts.now().getTime());
  const clientsStore = oauthClients(opts.clients.auth, documents, opts.log);
  const provider = murmurOAuthProvider({ auth: opts.clients.auth, clientsStore, mcpResource, authorize: consentPage({ ...opts, mcpResource }), log: opts.log });

  const router = Router();
  // Ahead of the SDK's own copy, which lacks what metadata.ts adds.
  router.use('/.well-known/oauth-authorization-server', metadataHandler(authorizationServerMetadata(opts.issuer, provider)));
  router.use('/authorize', authorizeResponses());
  router.use('/register', express.json({ limit: MAX_REGISTRATION_BYTES }));
  router.post('/register', ...registrationLimits());
  router.use([...OAUTH_BODY_PATHS, '/authorize'], outageIsUnavailable);
  router.use(
    mcpAuthRouter({
      provider,
      issuerUrl,
      scopesSupported: [...OAUTH_SCOPES],
      // The router also publishes Protected Resource Metadata; it describes the MCP server, as the gateway's does.
      resourceServerUrl: new URL(mcpResource),
      resourceName: 'Murmur',
      // auth makes the client id (mcl_…); registration-limits.ts says how many may register.
      clientRegistrationOptions: { clientIdGeneration: false, rateLimit: HOURLY_PER_ADDRESS },
    }),
  );
  router.use(consentRoutes({ ...opts, auth: opts.clients.auth, clientsStore }));
  return router;
}
