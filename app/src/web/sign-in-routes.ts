/**
 * Signing in with a one-time link and out again. GET shows a Continue button rather than
 * redeeming at once, so a mail scanner or link preview that fetches the link does not use it up;
 * the token then travels in the POST body, and the Referrer-Policy keeps it out of any referrer.
 * Signing in goes on to what sent the person here (an MCP client's authorization request, kept
 * by return-path.ts), else to Settings → Developer.
 */
import { Router, type Request, type Response } from 'express';
import { MurmurError } from '@murmur/contract';
import { LOGIN_COMMAND, message, render, signedIn, signedInOf, type GuardOptions } from './pages';
import { hasReturnPath, takeReturnPath } from './return-path';
import { isCrossSite, sessionCookieName } from './session';

export function signInRoutes(opts: GuardOptions): Router {
  const router = Router();
  const cookie = sessionCookieName(opts.secureCookies);

  router.get('/sign-in', (req: Request, res: Response) => {
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    if (!token) return void message(res, 400, 'Sign in with a link', ['Open the sign-in link you were given. To get one:'], { command: LOGIN_COMMAND });
    render(res, 200, 'sign-in', { title: 'Sign in', token, connecting: hasReturnPath(req, opts.secureCookies) });
  });

  router.post('/sign-in', async (req: Request, res: Response) => {
    const token = (req.body as Record<string, unknown> | undefined)?.token;
    if (isCrossSite(req.headers) || typeof token !== 'string' || token === '') {
      return void message(res, 400, 'This sign-in link does not work', ['Open the link exactly as you were given it, or ask for a new one:'], { command: LOGIN_COMMAND });
    }
    try {
      const session = await opts.sessions.start(token);
      res.cookie(cookie, session.sessionToken, { httpOnly: true, secure: opts.secureCookies, sameSite: 'lax', path: '/', expires: session.expiresAt });
      res.redirect(303, takeReturnPath(req, res, opts.secureCookies) ?? '/settings/developer');
    } catch (err) {
      if (!(err instanceof MurmurError && err.code === 'not_found')) throw err;
      message(res, 400, 'This sign-in link has expired or was already used', ['Sign-in links work once, for 15 minutes. Ask for a new one:'], { command: LOGIN_COMMAND });
    }
  });

  router.post('/sign-out', signedIn(opts, 'developer'), async (_req: Request, res: Response) => {
    await opts.sessions.end(signedInOf(res).sessionToken);
    res.clearCookie(cookie, { httpOnly: true, secure: opts.secureCookies, sameSite: 'lax', path: '/' });
    res.redirect(303, '/signed-out');
  });

  router.get('/signed-out', (req: Request, res: Response) => {
    const expired = req.query.expired !== undefined;
    message(res, 200, expired ? 'Your session has ended' : 'You are signed out', [expired ? 'Sessions last 12 hours. Sign in again with a new link:' : 'To sign in again, ask for a new sign-in link:'], {
      command: LOGIN_COMMAND,
    });
  });

  return router;
}
