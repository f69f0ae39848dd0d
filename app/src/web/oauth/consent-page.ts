/**
 * The authorization step of an MCP client's request, after the SDK's handler has checked the
 * client, its redirect URI, response_type and S256: the resource and scopes it asks for
 * (authorization-request.ts; a refusal is invalid_target or invalid_scope, answered as a page
 * here, never sent to the client: authorize-responses.ts),
 * then the person. Without a session the request is kept (return-path.ts) and a page says how to
 * sign in; signing in comes back here. With one, the consent page asks whether this client may
 * use the account: its name, the signed-in email, where the answer goes (the redirect URI's host,
 * the one fact a client cannot fake), what each scope allows, and for a client identified by a
 * URL the domain that published it. The answer is posted to consent-routes.ts.
 */
import type { Request, Response } from 'express';
import type { AuthorizationParams } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import { InvalidRequestError, InvalidScopeError, InvalidTargetError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import { OAUTH_SCOPE_DESCRIPTIONS, OAUTH_SCOPES } from '@murmur/contract';
import { contentSecurityPolicy, formActionSourceOf } from '../content-security';
import { LOGIN_COMMAND, message, render, sessionOf, type GuardOptions } from '../pages';
import { rememberReturnPath } from '../return-path';
import { csrfTokenOf } from '../session';
import type { PageContext } from '../views';
import { isS256Challenge, resourceOf, scopesOf } from './authorization-request';
import { isClientMetadataUrl } from './client-metadata';
import { consentFields } from './consent-form';

/** Where the consent form posts. */
export const CONSENT_PATH = '/oauth/consent';

/** The authorization request's parameters, as kept for after sign-in when it came as a POST. */
const AUTHORIZE_PARAMS = ['response_type', 'client_id', 'redirect_uri', 'code_challenge', 'code_challenge_method', 'scope', 'state', 'resource'] as const;

export interface ConsentPageOptions extends GuardOptions {
  mcpResource: string;
  now: () => Date;
}

/** The name a client goes by on the pages: its own, else the domain of its metadata document. */
export function clientNameOf(client: OAuthClientInformationFull): string {
  const name = (client.client_name ?? '').trim().slice(0, 100);
  if (name) return name;
  return isClientMetadataUrl(client.client_id) ? new URL(client.client_id).host : 'An unnamed app';
}

/** Where the answer goes, as the page shows it: the redirect URI's host (a native app's scheme when it has none). */
export function redirectHostOf(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.host || url.protocol.replace(/:$/, '');
}

/** The same request as a GET path on this origin, to come back to after sign-in. */
function authorizePathOf(req: Request): string {
  if (req.method === 'GET') return req.originalUrl;
  const body = (req.body ?? {}) as Record<string, unknown>;
  const query = new URLSearchParams();
  for (const name of AUTHORIZE_PARAMS) {
    const value = body[name];
    if (typeof value === 'string') query.set(name, value);
  }
  return `${req.baseUrl}?${query}`;
}

export function consentPage(opts: ConsentPageOptions) {
  return async (client: OAuthClientInformationFull, params: AuthorizationParams, res: Response): Promise<void> => {
    const req = res.req;
    const resource = resourceOf(params.resource, opts.mcpResource);
    if (resource === null) throw new InvalidTargetError(`This server issues tokens only for ${opts.mcpResource}.`);
    const scopes = scopesOf(params.scopes ?? [], client.scope);
    if (scopes === null) throw new InvalidScopeError(`The scopes are ${OAUTH_SCOPES.join(' and ')}${client.scope ? `, and this client registered only: ${client.scope}` : ''}.`);
    if (!isS256Challenge(params.codeChallenge)) throw new InvalidRequestError('code_challenge must be base64url(SHA-256(code_verifier)): 43 characters.');
    const clientName = clientNameOf(client);

    const session = await sessionOf(req, opts);
    if (!session) {
      rememberReturnPath(res, authorizePathOf(req), opts.secureCookies);
      return void message(
        res,
        200,
        `Sign in to connect ${clientName}`,
        [
          `${clientName} wants to use your Murmur account. Sign in first: get a sign-in link and open it in this browser.`,
          'After signing in you come back here to approve or deny it.',
        ],
        { command: LOGIN_COMMAND },
      );
    }

    res.locals.page = { email: await opts.emailOf(session.userId), csrf: csrfTokenOf(session.sessionToken), section: 'connect' } satisfies PageContext;
    // The answer is a redirect to the client, which the form's CSP must allow (content-security.ts).
    const source = formActionSourceOf(params.redirectUri);
    res.set('Content-Security-Policy', contentSecurityPolicy({ formAction: source ? [source] : [] }));
    const fields = consentFields(
      {
        clientId: client.client_id,
        clientName,
        redirectUri: params.redirectUri,
        codeChallenge: params.codeChallenge,
        scopes,
        resource,
        state: params.state ?? '',
        issuedAt: opts.now().getTime(),
      },
      session.sessionToken,
    );
    render(res, 200, 'consent', {
      title: `Allow ${clientName} to use your Murmur account?`,
      clientName,
      redirectHost: redirectHostOf(params.redirectUri),
      redirectUri: params.redirectUri,
      publishedBy: isClientMetadataUrl(client.client_id) ? new URL(client.client_id).host : null,
      scopes: scopes.map((name) => ({ name, description: OAUTH_SCOPE_DESCRIPTIONS[name] })),
      action: CONSENT_PATH,
      fields,
    });
  };
}
