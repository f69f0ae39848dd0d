/**
 * GET /api/v1/openapi.json: the OpenAPI document, without authentication (it describes the API,
 * not anyone's data; routes.ts marks the route `auth: 'none'`). REST routing mounts it like
 * every route of the table: other methods answer 405, and query parameters are refused.
 */
import type { Request, Response } from 'express';
import { buildOpenApiDocument } from './document';
import { asyncApiDocument } from '../asyncapi/document';

/** A description document's answer: cacheable by shared caches for five minutes. */
function sendDocument(res: Response, body: string): void {
  res.setHeader('Cache-Control', 'public, max-age=300');
  res.type('application/json; charset=utf-8').send(body);
}

/** The handler; the document is serialised once, on first request. */
export function openApiHandler(version: string): (req: Request, res: Response) => Promise<void> {
  let body: string | undefined;
  return async (_req, res) => {
    body ??= JSON.stringify(buildOpenApiDocument(version));
    sendDocument(res, body);
  };
}

/**
 * GET /api/v1/asyncapi.json: the live stream's AsyncAPI document, served like the OpenAPI one.
 * Built per request (a few kilobytes): its server is the host the request reached.
 */
export function asyncApiHandler(version: string): (req: Request, res: Response) => Promise<void> {
  return async (req, res) => sendDocument(res, JSON.stringify(asyncApiDocument({ version, host: req.get('host') ?? undefined })));
}
