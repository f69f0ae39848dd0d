/**
 * How /authorize answers a request it refuses: always with a page on this origin, never a
 * redirect. Anyone can register a client (Dynamic Client Registration is unauthenticated) with
 * any redirect URI, so a redirect URI being registered proves nothing about it; redirecting a
 * refused request there would make this domain an open redirector (RFC 9700 §4.11.2, OAuth 2.1
 * §7.12.2). The SDK's handler redirects its "post-redirect" errors (response_type, PKCE, scope,
 * resource, a fault) to the client; here each of those becomes the page below instead, and so
 * does its JSON for the refusals before the redirect URI is checked (unknown client,
 * unregistered redirect URI, a method or rate-limit refusal). /authorize itself never sends a
 * person anywhere: a redirect to the client happens only from the consent form
 * (consent-routes.ts), after the signed-in person chose Approve or Deny.
 */
import type { NextFunction, Request, Response } from 'express';
import { message } from '../pages';

/** What each refusal means for the person looking at it. */
const EXPLAINED: Record<string, string> = {
  invalid_client: 'Murmur does not know the app that sent you here: it is not registered, or its published description could not be used.',
  invalid_request:
    'The app that sent you here made a request Murmur cannot accept: an address to return to that it never registered, or a request without the protections Murmur requires (PKCE with S256).',
  unsupported_response_type: 'The app that sent you here asked for a kind of answer Murmur does not give (only the authorization code flow is supported).',
  invalid_scope: 'The app that sent you here asked for access Murmur does not have, or more than the app registered for.',
  invalid_target: 'The app that sent you here asked for access to another service than Murmur’s MCP server.',
  too_many_requests: 'Too many connection requests came from your network. Wait a few minutes and try again.',
  method_not_allowed: 'This address only opens connection requests from apps.',
  temporarily_unavailable: 'Murmur is not answering right now. Try again in a minute.',
  server_error: 'Something went wrong on our side while reading the request. Try again from the app.',
};

/** The HTTP status of a page for `error` (the OAuth error code). */
function statusOf(error: string | undefined, current: number): number {
  if (error === 'temporarily_unavailable') return 503;
  if (error === 'server_error') return 500;
  return current >= 400 ? current : 400;
}

/** The page of a refused authorization request: what was wrong, in words, and what the app said. */
function refusalPage(res: Response, error: string | undefined, description: string | undefined): void {
  message(res, statusOf(error, res.statusCode), 'This connection request cannot be used', [
    (error ? EXPLAINED[error] : undefined) ?? EXPLAINED.server_error!,
    ...(description ? [`What was wrong: ${description.slice(0, 300)}`] : []),
    'Nothing was shared with the app, and you were not sent back to it. Go back to the app and try connecting again; if it keeps happening, tell its developer.',
  ]);
}

/** The OAuth error of a redirect the SDK meant to send, read from its target's query. */
function errorOfRedirect(target: string): { error?: string; description?: string } {
  try {
    const url = new URL(target);
    return { error: url.searchParams.get('error') ?? undefined, description: url.searchParams.get('error_description') ?? undefined };
  } catch {
    return {};
  }
}

export function authorizeResponses() {
  return (_req: Request, res: Response, next: NextFunction): void => {
    res.redirect = ((statusOrUrl: number | string, maybeUrl?: string) => {
      const target = typeof statusOrUrl === 'string' ? statusOrUrl : (maybeUrl ?? '');
      const { error, description } = errorOfRedirect(target);
      // Never followed: whatever the SDK meant to send the client, the person gets a page here.
      res.status(400);
      refusalPage(res, error, description);
    }) as Response['redirect'];

    res.json = ((body: unknown) => {
      const error = (body as { error?: unknown } | null)?.error;
      const description = (body as { error_description?: unknown } | null)?.error_description;
      refusalPage(res, typeof error === 'string' ? error : undefined, typeof description === 'string' && description ? description : undefined);
      return res;
    }) as Response['json'];
    next();
  };
}
