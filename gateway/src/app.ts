/** The gateway's HTTP app: request context, `/api/v1` REST routes, `/mcp`, health, and the one error renderer. */
import express, { type Express } from 'express';
import { DEFAULT_TRUSTED_PROXIES, type Logger, type ServiceClients, type TrustedProxies } from '@murmur/kit';
import type { AudioUrlPolicy } from './upload/fetch-audio';
import type { IdempotencyStore } from './idempotency/store';
import type { VerifiedKeyCache } from './key-cache';
import { mcpHandlers } from './mcp/handler';
import { errorHandler } from './http/errors';
import { httpMetrics, labelRoute } from './http/http-metrics';
import { FAILED_KEYS_LOCAL } from './http/authenticate';
import { FailedKeyLimiter } from './http/failed-keys';
import { requestContext } from './http/request-context';
import type { RequestLogQueue } from './request-log/queue';
import { apiRouter, notFound } from './rest/routes';
import { LISTEN_PATH, listenWithoutUpgrade } from './live/listen-socket';
import { PROTECTED_RESOURCE_METADATA_PATHS, protectedResourceMetadataHandler, type OAuthResourceOptions } from './oauth/protected-resource';

export interface AppDeps {
  clients: ServiceClients;
  log: Logger;
  /** Idempotency records of AI calls: Redis-backed with REDIS_URL, in-process otherwise. */
  idempotency: IdempotencyStore;
  /** Browser origins allowed to call /mcp (requests without an Origin header always are). */
  mcpAllowedOrigins?: string[];
  /** Verified keys cached in the gateway (only with the Redis revocation channel). */
  keyCache?: VerifiedKeyCache;
  /** MURMUR_BODY_IDLE_TIMEOUT_MS (default 30 s): a request body that stops arriving answers 408. */
  bodyIdleTimeoutMs?: number;
  /** Where uploads are spooled when they must be; default the OS temp dir (TMPDIR). */
  spoolDir?: string;
  /** Where an `audio_url` may point (MURMUR_AUDIO_URL_*); default public http(s) on 80/443 only. */
  audioUrlPolicy?: AudioUrlPolicy;
  /** The MCP server as an OAuth protected resource: public URL and authorization server (read per request). */
  oauth?: OAuthResourceOptions;
  /** Which proxies' X-Forwarded-For to believe for `req.ip` (MURMUR_TRUSTED_PROXIES, kit client-address.ts); default loopback. */
  trustedProxies?: TrustedProxies;
  /** The bound on unknown keys per client address (http/failed-keys.ts); default a fresh one. */
  failedKeys?: FailedKeyLimiter;
  /** Where each authenticated call's request-log entry goes (request-log/queue.ts); absent, none is kept. */
  requestLog?: RequestLogQueue;
}

/** Reported to MCP clients as the server version. */
export const MURMUR_VERSION = '0.1.0';

export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  // The client address (req.ip) that per-client limits are keyed by, behind the proxies trusted.
  app.set('trust proxy', deps.trustedProxies ?? DEFAULT_TRUSTED_PROXIES);
  // Read by requireKey on both front ends (http/authenticate.ts).
  app.locals[FAILED_KEYS_LOCAL] = deps.failedKeys ?? new FailedKeyLimiter();
  app.use(requestContext(deps.requestLog));
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  // Every request below the probe is counted and timed by its route template (http/http-metrics.ts).
  app.use(httpMetrics);
  const oauth = deps.oauth ?? {};
  // No key needed: how to get a token (RFC 9728).
  for (const path of PROTECTED_RESOURCE_METADATA_PATHS) app.get(path, labelRoute(path), protectedResourceMetadataHandler(oauth));
  // Every route of the table (routes.ts); GET /api/v1/openapi.json needs no key.
  const body = { bodyIdleTimeoutMs: deps.bodyIdleTimeoutMs, spoolDir: deps.spoolDir, audioUrlPolicy: deps.audioUrlPolicy };
  // The live stream's WebSocket is served on upgrades (live/listen-socket.ts); a plain request learns how to connect.
  app.all(LISTEN_PATH, labelRoute(LISTEN_PATH), () => listenWithoutUpgrade());
  app.use('/api/v1', apiRouter(deps.clients, deps.idempotency, deps.log, deps.keyCache, { version: MURMUR_VERSION, body, oauth }));
  const mcp = mcpHandlers({ clients: deps.clients, log: deps.log, allowedOrigins: deps.mcpAllowedOrigins ?? [], version: MURMUR_VERSION, keyCache: deps.keyCache, bodyIdleTimeoutMs: deps.bodyIdleTimeoutMs, audioUrlPolicy: deps.audioUrlPolicy, oauth });
  const mcpRoute = labelRoute('/mcp');
  app.post('/mcp', mcpRoute, mcp.checkOrigin, mcp.requireKey, mcp.post);
  app.all('/mcp', mcpRoute, mcp.checkOrigin, mcp.requireKey, mcp.notAllowed);
  app.use(() => notFound());
  app.use(errorHandler(deps.log));
  return app;
}
