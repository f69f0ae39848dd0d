/**
 * Reads a JSON body on demand — inside the AI pipeline, after admission — rather than as
 * global middleware, so nothing is read before billing has said yes.
 */
import express, { type Request, type Response } from 'express';
import { MurmurError } from '@murmur/kit';
import { bodyReadError } from './errors';

const parsers = new Map<string, ReturnType<typeof express.json>>();

export function readJsonBody(req: Request, res: Response, limit: string): Promise<unknown> {
  let parser = parsers.get(limit);
  if (!parser) {
    parser = express.json({ limit, strict: true, type: () => true });
    parsers.set(limit, parser);
  }
  if (!req.is('application/json')) {
    return Promise.reject(new MurmurError('invalid_request', 'Send the body as JSON with Content-Type: application/json.', { param: null }));
  }
  return new Promise((resolve, reject) => {
    parser!(req, res, (err?: unknown) => (err ? reject(bodyReadError(err) ?? err) : resolve(req.body as unknown)));
  });
}
