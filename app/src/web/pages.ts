/**
 * The plumbing every page shares: rendering with the layout's context, the answer to a refused
 * or failed request as a page a person can act on, and the signed-in guard with CSRF checks.
 */
import type { NextFunction, Request, Response } from 'express';
import { MurmurError } from '@murmur/contract';
import { type Logger } from '@murmur/kit';
import { csrfTokenMatches, csrfTokenOf, cookieValue, isCrossSite, sessionCookieName, type SessionSource, type SignedIn } from './session';
import { views, type PageContext } from './views';

/** The admin command that makes a sign-in link, for pages that send people back to it. */
export const LOGIN_COMMAND = 'npm run admin -- login --email you@example.com';

/** Renders a template with the layout's context; pages never cache (they can show secrets). */
export function render(res: Response, status: number, template: string, data: Record<string, unknown>): void {
  const page: PageContext | undefined = res.locals.page as PageContext | undefined;
  res.status(status).type('html').send(views.render(template, { page, ...data }));
}

/** A page of a few sentences: refusals, errors, sign-out. */
export function message(res: Response, status: number, title: string, lines: string[], extra: { command?: string; link?: { href: string; text: string } } = {}): void {
  render(res, status, 'message', { title, lines, command: extra.command, link: extra.link });
}

/** A form field as one string ('' when absent or sent twice). */
export function field(req: Request, name: string): string {
  const v = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' ? v : '';
}

/** The signed-in person of a request (set by {@link signedIn}). */
export function signedInOf(res: Response): SignedIn {
  return res.locals.signedIn as SignedIn;
}

export interface GuardOptions {
  sessions: SessionSource;
  secureCookies: boolean;
  emailOf: (userId: string) => Promise<string>;
}

/** The live session of a request's cookie, if any. */
export async function sessionOf(req: Request, opts: Pick<GuardOptions, 'sessions' | 'secureCookies'>): Promise<SignedIn | undefined> {
  const token = cookieValue(req.headers.cookie, sessionCookieName(opts.secureCookies));
  return token ? opts.sessions.resolve(token) : undefined;
}

/**
 * Pages behind sign-in: a request without a live session is sent to sign in again (GET) or
 * refused (POST); every POST must carry the session's CSRF token and not come from another site.
 */
export function signedIn(opts: GuardOptions, section: PageContext['section']) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const session = await sessionOf(req, opts);
    if (!session) {
      if (req.method === 'GET') return void res.redirect(303, '/signed-out?expired=1');
      return void message(res, 401, 'Your session has ended', ['Sign in again with a new sign-in link, then repeat what you were doing.'], { command: LOGIN_COMMAND });
    }
    if (req.method === 'POST' && (isCrossSite(req.headers) || !csrfTokenMatches(session.sessionToken, (req.body as Record<string, unknown> | undefined)?._csrf))) {
      return void message(res, 403, 'This form could not be accepted', ['It expired or was sent from another site. Go back, reload the page and try again.'], {
        link: { href: '/settings/developer', text: 'Back to Developer settings' },
      });
    }
    res.locals.signedIn = session;
    res.locals.page = { email: await opts.emailOf(session.userId), csrf: csrfTokenOf(session.sessionToken), section } satisfies PageContext;
    next();
  };
}

/** Errors of any route: what the services refused as a page, an outage as 503, the rest as 500 (logged). */
export function errorPage(log: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    if (err instanceof MurmurError && err.code === 'service_unavailable') {
      return void message(res, 503, 'Murmur is not answering right now', ['Your settings could not be loaded. Try again in a minute.']);
    }
    if (err instanceof MurmurError && err.code === 'not_found') {
      return void message(res, 404, 'Not found', [err.message], { link: { href: '/settings/developer', text: 'Back to Developer settings' } });
    }
    // The form parser's refusals (too large, too many fields, an unknown charset) are the sender's.
    const status = (err as { status?: unknown; expose?: unknown }).status;
    if (typeof status === 'number' && status >= 400 && status < 500 && (err as { expose?: unknown }).expose === true) {
      return void message(res, status, 'This form could not be read', ['It was too large or not a form this page sends. Go back, reload the page and try again.']);
    }
    log.error({ err, method: req.method, path: req.path }, 'app page failed');
    message(res, 500, 'Something went wrong', ['Nothing was changed that you were not told about. Try again; if it keeps happening, tell us.']);
  };
}
