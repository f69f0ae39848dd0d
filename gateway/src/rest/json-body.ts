/**
 * Reads a JSON body on demand — inside the AI pipeline, after admission — rather than as
 * global middleware, so nothing is read before billing has said yes.
 */
import express, { type Request, type Response } from 'express';
import { MurmurError } from '@murmur/kit';
import { bodyReadError } from '../http/errors';
import { DEFAULT_BODY_IDLE_TIMEOUT_MS, watchBodyIdle } from '../http/body-idle-timeout';

const parsers = new Map<string, ReturnType<typeof express.json>>();

/**
 * A body that stops arriving for `idleTimeoutMs` rejects with `request_timeout`; the rest is left
 * unread (the caller answers with `Connection: close`).
 */
export function readJsonBody(req: Request, res: Response, limit: string, idleTimeoutMs = DEFAULT_BODY_IDLE_TIMEOUT_MS): Promise<unknown> {
  let parser = parsers.get(limit);
  if (!parser) {
    parser = express.json({ limit, strict: true, type: () => true });
    parsers.set(limit, parser);
  }
  if (!req.is('application/json')) {
    return Promise.reject(new MurmurError('invalid_request', 'Send the body as JSON with Content-Type: application/json.', { param: null }));
  }
  return new Promise((resolve, reject) => {
    let settled = false;
    let stopIdle = () => {};
    const settle = (run: () => void) => {
      if (settled) return;
      settled = true;
      stopIdle();
      run();
    };
    parser!(req, res, (err?: unknown) => settle(() => (err ? reject(bodyReadError(err) ?? err) : resolve(req.body as unknown))));
    if (!settled) {
      stopIdle = watchBodyIdle(req, idleTimeoutMs, (err) =>
        settle(() => {
          req.pause();
          reject(err);
        }),
      );
    }
  });
}
