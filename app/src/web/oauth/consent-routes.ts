/**
 * The person's answer on the consent page. The post must come from a live session with its CSRF
 * token and not from another site (the pages' guard), and carry the pending request unchanged
 * (consent-form.ts's MAC, at most 10 minutes old). Then the client must still exist and still
 * have that redirect URI. Until all of that holds the answer is a page here, never a redirect:
 * only a checked redirect URI is sent anything. Approve asks auth for a one-time code
 * (CreateAuthorizationCode, for the signed-in user) and sends it back with `state` and `iss`
 * (RFC 9207); Deny sends `error=access_denied`.
 */
import { Router, type Request, type Response } from 'express';
import { redirectUriMatches } from '@modelcontextprotocol/sdk/server/auth/handlers/authorize.js';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import type { ServiceClients } from '@murmur/kit';
import { message, signedIn, signedInOf, type GuardOptions } from '../pages';
import { CONSENT_PATH } from './consent-page';
import { pendingOf, type PendingAuthorization } from './consent-form';
import { murmurCodeOf } from './oauth-errors';

export interface ConsentRoutesOptions extends GuardOptions {
  auth: ServiceClients['auth'];
  clientsStore: OAuthRegisteredClientsStore;
  /** The authorization server's issuer, sent as `iss` with every answer. */
  issuer: string;
  now: () => Date;
}

/** A 302 to the client's (checked) redirect URI with the answer's parameters added to its query. */
export function redirectToClient(res: Response, redirectUri: string, params: Record<string, string | undefined>): void {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value) url.searchParams.set(name, value);
  res.redirect(302, url.href);
}

function refused(res: Response, title: string, line: string): void {
  message(res, 400, title, [line, 'Nothing was shared with the app. Go back to it and start connecting again.']);
}

export function consentRoutes(opts: ConsentRoutesOptions): Router {
  const router = Router();

  router.post(CONSENT_PATH, signedIn(opts, 'connect'), async (req: Request, res: Response) => {
    const session = signedInOf(res);
    const answer = pendingOf(req.body, session.sessionToken, opts.now().getTime());
    if (!answer.ok) {
      return answer.why === 'expired'
        ? refused(res, 'This request has expired', 'The page was open for more than 10 minutes.')
        : refused(res, 'This answer could not be checked', 'The form was changed, or it was made for another session.');
    }
    const pending: PendingAuthorization = answer.pending;
    const client = await opts.clientsStore.getClient(pending.clientId);
    if (!client) return refused(res, 'This app is no longer known', 'Its registration or its published description could not be found.');
    if (!client.redirect_uris.some((registered) => redirectUriMatches(pending.redirectUri, registered))) {
      return refused(res, 'This app changed where it wants to go', 'The address to return to is no longer one the app registered.');
    }
    const back = { state: pending.state || undefined, iss: opts.issuer };
    const decision = (req.body as Record<string, unknown>).decision;
    if (decision === 'deny') {
      return redirectToClient(res, pending.redirectUri, { error: 'access_denied', error_description: 'The user denied the request.', ...back });
    }
    if (decision !== 'approve') return refused(res, 'Approve or deny', 'The answer was neither.');
    try {
      const { code } = await opts.auth.createAuthorizationCode({
        userId: session.userId,
        clientId: pending.clientId,
        clientName: pending.clientName,
        redirectUri: pending.redirectUri,
        codeChallenge: pending.codeChallenge,
        scopes: pending.scopes,
        resource: pending.resource,
      });
      redirectToClient(res, pending.redirectUri, { code, ...back });
    } catch (err) {
      // Past the connections a user may hold: the person has to act here (revoke one), so a page, not a redirect.
      if (murmurCodeOf(err) === 'oauth_connection_limit_reached') {
        return void message(res, 409, 'You have too many connected apps', [(err as Error).message, 'Nothing was shared with the app.'], {
          link: { href: '/settings/developer', text: 'Go to Connected apps' },
        });
      }
      // The redirect URI is checked, so a request auth refuses goes back to the client as the spec says.
      if (murmurCodeOf(err) !== 'invalid_request') throw err;
      redirectToClient(res, pending.redirectUri, { error: 'invalid_request', error_description: (err as Error).message, ...back });
    }
  });

  return router;
}
