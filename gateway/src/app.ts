/** The gateway's HTTP app: request context, `/api/v1` REST routes, health, and the one error renderer. */
import express, { type Express } from 'express';
import type { Logger } from '@murmur/kit';
import type { Clients } from './clients';
import { errorHandler } from './rest/errors';
import { requestContext } from './rest/request-context';
import { apiRouter, notFound } from './rest/routes';

export interface AppDeps {
  clients: Clients;
  log: Logger;
}

export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(requestContext);
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.use('/api/v1', apiRouter(deps.clients));
  app.use(() => notFound());
  app.use(errorHandler(deps.log));
  return app;
}
