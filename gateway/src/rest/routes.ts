/**
 * The REST front end of `/api/v1`: a route table that parses each request's parameters and
 * calls the shared operations. Unknown paths answer 404 and known paths with another method
 * 405 (with `Allow`), both in the contract's error body.
 */
import { Router, type Request, type Response } from 'express';
import { MurmurError } from '@murmur/contract';
import { type Logger, type ServiceClients } from '@murmur/kit';
import type { IdempotencyStore } from '../idempotency/store';
import type { VerifiedKeyCache } from '../key-cache';
import * as ops from '../operations';
import { aiRoute } from './ai-route';
import { convertSpec } from './ai-routes';
import { transcribeSpec } from './transcribe-route';
import { transcriptionEventsRoute, transcriptionRoute } from './transcription-routes';
import { requireKey } from '../http/authenticate';
import { parseQuery } from './query';

type Handler = (ctx: ops.OperationContext, req: Request) => Promise<unknown>;

interface Route {
  method: 'get' | 'post';
  path: string;
  handler: Handler;
}

const PAGE = { limit: 'int', cursor: 'cursor' } as const;

const ROUTES: Route[] = [
  { method: 'get', path: '/me', handler: (ctx, req) => (parseQuery(req, {}), ops.getMe(ctx)) },
  { method: 'get', path: '/usage', handler: (ctx, req) => (parseQuery(req, {}), ops.getUsage(ctx)) },
  {
    method: 'get',
    path: '/recordings',
    handler: (ctx, req) =>
      ops.listRecordings(ctx, parseQuery(req, { ...PAGE, q: 'string', folder_id: 'string', created_after: 'datetime', created_before: 'datetime' })),
  },
  { method: 'get', path: '/recordings/:id', handler: (ctx, req) => (parseQuery(req, {}), ops.getRecording(ctx, String(req.params.id))) },
  { method: 'get', path: '/thought-threads', handler: (ctx, req) => ops.listThoughtThreads(ctx, parseQuery(req, PAGE)) },
  { method: 'get', path: '/thought-threads/:id', handler: (ctx, req) => (parseQuery(req, {}), ops.getThoughtThread(ctx, String(req.params.id))) },
  { method: 'get', path: '/folders', handler: (ctx, req) => ops.listFolders(ctx, parseQuery(req, PAGE)) },
  { method: 'get', path: '/knowledge-bases', handler: (ctx, req) => ops.listKnowledgeBases(ctx, parseQuery(req, PAGE)) },
  { method: 'get', path: '/transcriptions', handler: (ctx, req) => ops.listTranscriptions(ctx, parseQuery(req, { ...PAGE, status: 'string' })) },
  { method: 'post', path: '/transcriptions/:id/cancel', handler: (ctx, req) => (parseQuery(req, {}), ops.cancelTranscription(ctx, String(req.params.id))) },
  { method: 'post', path: '/transcriptions/:id/webhook/retry', handler: (ctx, req) => (parseQuery(req, {}), ops.retryWebhook(ctx, String(req.params.id))) },
];

/** How the AI routes read bodies. */
import type { AudioUrlPolicy } from '../upload/fetch-audio';
import { resourceOf, type OAuthResourceOptions } from '../oauth/protected-resource';

export interface BodyOptions {
  /** MURMUR_BODY_IDLE_TIMEOUT_MS: a body that stops arriving this long answers 408 `request_timeout`. */
  bodyIdleTimeoutMs?: number;
  /** Where uploads are spooled when they must be (audio-spool.ts); default the OS temp dir (TMPDIR). */
  spoolDir?: string;
  /** Where an `audio_url` may point (MURMUR_AUDIO_URL_*); default public http(s) on 80/443 only. */
  audioUrlPolicy?: AudioUrlPolicy;
}

export function apiRouter(clients: ServiceClients, idempotency: IdempotencyStore, log: Logger, keyCache?: VerifiedKeyCache, body: BodyOptions = {}, oauth: OAuthResourceOptions = {}): Router {
  const router = Router({ strict: false, caseSensitive: true });
  // REST's resource is not the MCP server's, so an access token issued to an MCP client is refused here.
  // Every POST spends credits or changes state (the `ai` scope: a read-only key gets 403); every GET reads.
  const authenticate = requireKey(clients, keyCache, (req) => resourceOf(req, oauth), (req) => (req.method === 'POST' ? 'ai' : 'read'));
  const allowed = new Map<string, string[]>([
    ['/convert', ['POST']],
    ['/transcribe', ['POST']],
  ]);
  router.post('/convert', authenticate, aiRoute(clients, idempotency, log, convertSpec(body)));
  router.post('/transcribe', authenticate, aiRoute(clients, idempotency, log, transcribeSpec(body)));
  router.post('/transcriptions', authenticate, aiRoute(clients, idempotency, log, transcribeSpec(body, 'job')));
  router.get('/transcriptions/:id', authenticate, transcriptionRoute(clients));
  router.get('/transcriptions/:id/events', authenticate, transcriptionEventsRoute(clients, log));
  allowed.set('/transcriptions', ['POST']);
  allowed.set('/transcriptions/:id', ['GET']);
  allowed.set('/transcriptions/:id/events', ['GET']);
  for (const route of ROUTES) {
    router[route.method](route.path, authenticate, async (req: Request, res: Response) => {
      const ctx: ops.OperationContext = { principal: req.principal!, clients };
      res.json(await route.handler(ctx, req));
    });
    allowed.set(route.path, [...(allowed.get(route.path) ?? []), route.method.toUpperCase()]);
  }
  for (const [path, methods] of allowed) {
    const allow = methods.includes('GET') ? [...methods, 'HEAD'] : methods;
    router.all(path, () => {
      throw new MurmurError('method_not_allowed', `This path accepts ${allow.join(', ')} only.`, { meta: { allow: allow.join(', ') } });
    });
  }
  return router;
}

/** The 404 of every path no route matched. */
export function notFound(): never {
  throw new MurmurError('not_found', 'Unknown route. See /api/v1/openapi.json for the routes of this API.');
}
