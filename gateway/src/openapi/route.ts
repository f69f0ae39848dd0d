/**
 * GET /api/v1/openapi.json: the OpenAPI document, without authentication (it describes the API,
 * not anyone's data). Mounted before the authenticated router so no key is asked for; other
 * methods answer 405 like every known path, and query parameters are refused like on every route.
 */
import { Router, type Request, type Response } from 'express';
import { MurmurError } from '@murmur/contract';
import { parseQuery } from '../rest/query';
import { buildOpenApiDocument } from './document';

/** Under `/api/v1`, where clients and generators look for the document. */
export const OPENAPI_PATH = '/openapi.json';

/** A router to mount at `/api/v1`; the document is serialised once, on first request. */
export function openApiRouter(version: string): Router {
  const router = Router({ strict: false, caseSensitive: true });
  let body: string | undefined;
  router.get(OPENAPI_PATH, (req: Request, res: Response) => {
    parseQuery(req, {});
    body ??= JSON.stringify(buildOpenApiDocument(version));
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.type('application/json; charset=utf-8').send(body);
  });
  router.all(OPENAPI_PATH, () => {
    throw new MurmurError('method_not_allowed', 'This path accepts GET, HEAD only.', { meta: { allow: 'GET, HEAD' } });
  });
  return router;
}
