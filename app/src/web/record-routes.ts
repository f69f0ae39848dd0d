/**
 * Record: the microphone in the browser, its words live as they are spoken, and Stop saves the
 * recording (docs/app.md, "Record"). The page's script (static/record.js) streams MediaRecorder's
 * Opus-in-WebM slices straight to the public API's `GET /api/v1/listen` (docs/live.md); this
 * server only hands it a listen token. A signed-in person has a session, not an API key, so the
 * token is bound to their session (auth's CreateListenToken with key_id = the session's id): it
 * acts for them alone, lasts 60 seconds, opens one stream, and dies when they sign out.
 */
import { Router } from 'express';
import { listenUrlOf } from '@murmur/contract';
import type { ServiceClients } from '@murmur/kit';
import { connectSourceOf, contentSecurityPolicy } from './content-security';
import { render, signedIn, signedInOf, type GuardOptions } from './pages';

export interface RecordPageOptions extends GuardOptions {
  clients: ServiceClients;
  /** The public API's address (PUBLIC_API_URL): the page streams to its WebSocket endpoint. */
  apiUrl: string;
}

/** What `POST /record/token` answers: the token and where to use it. */
export interface RecordToken {
  token: string;
  listen_url: string;
}

export function recordRoutes(opts: RecordPageOptions): Router {
  const router = Router();
  const guard = signedIn(opts, 'record');
  const listenUrl = listenUrlOf(opts.apiUrl);
  // The one page that connects elsewhere: to the API's WebSocket origin, and only there.
  const policy = contentSecurityPolicy({ connectSrc: [connectSourceOf(listenUrl)] });

  router.get('/record', guard, (_req, res) => {
    res.set('Content-Security-Policy', policy);
    render(res, 200, 'record', { title: 'Record' });
  });

  // A same-origin form post in all but looks: the guard checks the session, the CSRF token of the
  // body and that the browser did not mark it cross-site; the answer is JSON for the page's script.
  router.post('/record/token', guard, async (_req, res) => {
    const me = signedInOf(res);
    const { token } = await opts.clients.auth.createListenToken({ userId: me.userId, keyId: me.sessionId, scopes: [] });
    res.status(201).json({ token, listen_url: listenUrl } satisfies RecordToken);
  });

  return router;
}
