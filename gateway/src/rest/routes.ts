/**
 * The REST front end of `/api/v1`: every route of the table (routes.ts), each bound here to its
 * handler by operation id — the handlers' map is typed by the table, so a route without a handler
 * (or a handler without a route) does not compile. Each request's query is parsed by its route's
 * rules before its handler runs; the handlers call the shared operations. Unknown paths answer
 * 404 and known paths with another method 405 (with `Allow`), both in the contract's error body.
 */
import { Router, type Request, type Response } from 'express';
import { MurmurError } from '@murmur/contract';
import { type Logger, type ServiceClients } from '@murmur/kit';
import type { IdempotencyStore } from '../idempotency/store';
import type { VerifiedKeyCache } from '../key-cache';
import * as ops from '../operations';
import { asyncApiHandler, openApiHandler } from '../openapi/route';
import { API_BASE, expressPath, ROUTES, type OperationId, type QuerySpec, type RouteOf } from '../routes';
import type { BodyOptions } from '../upload/body-options';
import { aiRoute } from './ai-route';
import { askSpec, convertSpec } from './convert-route';
import { transcribeSpec } from './transcribe-route';
import { renderRecording } from './transcript-response';
import { transcriptionEventsRoute, transcriptionRoute } from './transcription-routes';
import { requireKey } from '../http/authenticate';
import { labelRoute } from '../http/http-metrics';
import { resourceOf, type OAuthResourceOptions } from '../oauth/protected-resource';
import { parseQuery, type ParsedQuery } from './query';
import { readJsonBody } from '../http/json-body';
import { sendJson } from '../http/json-response';

/** A route's handler, given the query its rules parsed (empty for a route that reads none). */
type Handler<Id extends OperationId> = (req: Request, res: Response, query: ParsedQuery<QueryOf<Id>>) => Promise<void>;
type QueryOf<Id extends OperationId> = RouteOf<Id> extends { query: infer Q extends QuerySpec } ? Q : Record<never, never>;
type Handlers = { [Id in OperationId]: Handler<Id> };

export interface ApiOptions {
  /** The gateway's release, in the OpenAPI document. */
  version: string;
  body?: BodyOptions;
  oauth?: OAuthResourceOptions;
}

export function apiRouter(clients: ServiceClients, idempotency: IdempotencyStore, log: Logger, keyCache: VerifiedKeyCache | undefined, options: ApiOptions): Router {
  const body = options.body ?? {};
  const ctx = (req: Request): ops.OperationContext => ({ principal: req.principal!, clients });
  /** A route answering the operation's result as JSON. */
  const json =
    <Id extends OperationId>(run: (ctx: ops.OperationContext, query: ParsedQuery<QueryOf<Id>>, id: string) => Promise<unknown>): Handler<Id> =>
    async (req, res, query) => {
      sendJson(res, await run(ctx(req), query, String(req.params.id)));
    };
  const handlers: Handlers = {
    getOpenApiDocument: openApiHandler(options.version),
    getMe: json((c) => ops.getMe(c)),
    getUsage: json((c) => ops.getUsage(c)),
    listRecordings: json((c, q) => ops.listRecordings(c, q)),
    searchPassages: json((c, q) => ops.searchPassages(c, q)),
    getRecording: async (req, res, q) => {
      const format = ops.transcriptFormatOf(q.response_format);
      // Text and captions read the words (captions are cut on them), not shown in those bodies.
      const recording = await ops.getRecording(ctx(req), String(req.params.id), { words: (q.words ?? false) || format !== 'json' });
      if (format === 'json') {
        sendJson(res, recording);
        return;
      }
      const stored = renderRecording(recording, format);
      res.status(stored.status).set(stored.headers).end(stored.body);
    },
    setSpeakerNames: async (req, res) => {
      const input = ops.parseInput(ops.speakerNamesInputSchema, await readJsonBody(req, res, { limit: ops.MAX_SPEAKER_NAMES_BODY_BYTES, idleTimeoutMs: body.bodyIdleTimeoutMs }));
      sendJson(res, await ops.setSpeakerNames(ctx(req), String(req.params.id), input.names));
    },
    listThoughtThreads: json((c, q) => ops.listThoughtThreads(c, q)),
    getThoughtThread: json((c, _q, id) => ops.getThoughtThread(c, id)),
    listFolders: json((c, q) => ops.listFolders(c, q)),
    listKnowledgeBases: json((c, q) => ops.listKnowledgeBases(c, q)),
    convert: aiRoute(clients, idempotency, log, convertSpec(body)),
    ask: aiRoute(clients, idempotency, log, askSpec(body)),
    transcribe: aiRoute(clients, idempotency, log, transcribeSpec(body)),
    createTranscription: aiRoute(clients, idempotency, log, transcribeSpec(body, 'job')),
    listTranscriptions: json((c, q) => ops.listTranscriptions(c, q)),
    getTranscription: transcriptionRoute(clients),
    streamTranscriptionEvents: transcriptionEventsRoute(clients, log),
    cancelTranscription: json((c, _q, id) => ops.cancelTranscription(c, id)),
    retryTranscriptionWebhook: json((c, _q, id) => ops.retryWebhook(c, id)),
    listRequests: json((c, q) => ops.listRequests(c, q)),
    getAsyncApiDocument: asyncApiHandler(options.version),
    createListenToken: async (req, res) => {
      // A credential: no cache may keep it (as RFC 6749 §5.1 asks of token responses).
      res.status(201).set('Cache-Control', 'no-store');
      sendJson(res, await ops.createListenToken(ctx(req)));
    },
  };

  const router = Router({ strict: false, caseSensitive: true });
  // REST's resource is not the MCP server's, so an access token issued to an MCP client is refused here.
  // Every POST spends credits or changes state (the `ai` scope: a read-only key gets 403); every GET reads.
  const authenticate = requireKey(clients, keyCache, (req) => resourceOf(req, options.oauth ?? {}), (req) => (req.method === 'POST' ? 'ai' : 'read'));
  const allowed = new Map<string, string[]>();
  const templates = new Map<string, string>();
  for (const route of ROUTES) {
    const path = expressPath(route.path);
    const handler = handlers[route.operationId] as Handler<OperationId>;
    const rules = 'query' in route ? route.query : undefined;
    const run = (req: Request, res: Response) => handler(req, res, rules ? parseQuery(req, rules) : {});
    // Its template names it in metrics and the request log, never the path a client sent.
    const labelled = labelRoute(`${API_BASE}${route.path}`);
    templates.set(path, `${API_BASE}${route.path}`);
    if ('auth' in route && route.auth === 'none') router[route.method](path, labelled, run);
    else router[route.method](path, labelled, authenticate, run);
    allowed.set(path, [...(allowed.get(path) ?? []), route.method.toUpperCase()]);
  }
  for (const [path, methods] of allowed) {
    const allow = methods.includes('GET') ? [...methods, 'HEAD'] : methods;
    router.all(path, labelRoute(templates.get(path) ?? path), () => {
      throw new MurmurError('method_not_allowed', `This path accepts ${allow.join(', ')} only.`, { meta: { allow: allow.join(', ') } });
    });
  }
  return router;
}

/** The 404 of every path no route matched. */
export function notFound(): never {
  throw new MurmurError('not_found', 'Unknown route. See /api/v1/openapi.json for the routes of this API.');
}
