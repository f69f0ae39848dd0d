/**
 * How /authorize answers, around the SDK's handler (which decides what to answer):
 *  - every redirect back to the client carries `iss` (RFC 9207, advertised in the metadata), the
 *    SDK's error redirects included, so a client can tell which server answered, and the
 *    request's `state` (the SDK drops it when another parameter fails to parse; RFC 6749
 *    §4.1.2.1 asks for it whenever the request had one);
 *  - a refusal before the redirect URI is trusted (unknown client, unregistered redirect URI,
 *    a method or rate limit refusal) is the SDK's JSON for programmers; the person whose browser
 *    shows it gets a page saying what happened instead. It is never a redirect.
 */
import type { NextFunction, Request, Response } from 'express';
import { message } from '../pages';

/** What each refusal means for the person looking at it. */
const EXPLAINED: Record<string, string> = {
  invalid_client: 'Murmur does not know the app that sent you here: it is not registered, or its published description could not be used.',
  invalid_request: 'The app that sent you here made a request Murmur cannot accept, such as an address to return to that it never registered.',
  too_many_requests: 'Too many connection requests came from your network. Wait a few minutes and try again.',
  method_not_allowed: 'This address only opens connection requests from apps.',
};

/** The request's `state`, when it sent exactly one. */
function stateOf(req: Request): string | undefined {
  const state = ((req.method === 'POST' ? req.body : req.query) as Record<string, unknown> | undefined)?.state;
  return typeof state === 'string' && state !== '' ? state : undefined;
}

export function authorizeResponses(issuer: string) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const redirect = res.redirect.bind(res) as (status: number, url: string) => void;
    res.redirect = ((statusOrUrl: number | string, maybeUrl?: string) => {
      const status = typeof statusOrUrl === 'number' ? statusOrUrl : 302;
      const target = typeof statusOrUrl === 'string' ? statusOrUrl : (maybeUrl ?? '');
      let url: URL;
      try {
        url = new URL(target);
      } catch {
        return redirect(status, target);
      }
      const state = stateOf(req);
      if (state !== undefined && !url.searchParams.has('state')) url.searchParams.set('state', state);
      if (!url.searchParams.has('iss')) url.searchParams.set('iss', issuer);
      redirect(status, url.href);
    }) as Response['redirect'];

    res.json = ((body: unknown) => {
      const error = (body as { error?: unknown; error_description?: unknown } | null)?.error;
      const description = (body as { error_description?: unknown } | null)?.error_description;
      const status = res.statusCode >= 400 ? res.statusCode : 400;
      message(res, status, 'This connection request cannot be used', [
        (typeof error === 'string' ? EXPLAINED[error] : undefined) ?? 'Something went wrong on our side while reading the request. Try again from the app.',
        ...(typeof description === 'string' && description ? [`What it said: ${description.slice(0, 300)}`] : []),
        'Nothing was shared with the app. Go back to it and try connecting again; if it keeps happening, tell its developer.',
      ]);
      return res;
    }) as Response['json'];
    next();
  };
}
