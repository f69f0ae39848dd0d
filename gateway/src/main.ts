/**
 * The gateway process: the public HTTP edge of Murmur behind Envoy. `/api/v1/*` REST routes
 * and the MCP server at `/mcp` are translated into gRPC calls to auth, billing, library, transcription
 * and conversion; it owns no data (idempotency records live in Redis when REDIS_URL is set,
 * in-process otherwise). Listens on PORT (default 8080); service addresses come from *_ADDR;
 * metrics on MURMUR_METRICS_ADDR when set.
 */
import './tracing';
import { appPublicUrl, closeServiceClients, commonSchema, connectRedis, createLogger, createServiceClients, exitStartFailure, listenOn, loadConfig, loadWorkloadIdentity, metricsSchema, onShutdown, publicApiUrl, publicUrlsSchema, RevocationListener, serveMetricsIfConfigured, serviceAddressSchema, storageSchema, systemClock, trustedProxiesSchema, z } from '@murmur/kit';
import { createApp } from './app';
import { createHttpServer } from './http/server';
import { attachListen } from './live/listen-socket';
import { MemoryIdempotencyStore, RedisIdempotencyStore } from './idempotency/store';
import { VerifiedKeyCache } from './key-cache';
import { RequestLogQueue } from './request-log/queue';
import { DEFAULT_BODY_IDLE_TIMEOUT_MS } from './http/body-idle-timeout';
import { audioUrlConfigSchema, audioUrlPolicyOf } from './upload/fetch-audio';

async function main(): Promise<void> {
  const cfg = loadConfig({
    ...serviceAddressSchema,
    ...storageSchema,
    ...commonSchema,
    PORT: z.coerce.number().int().min(0).max(65535).default(8080),
    HOST: z.string().default('0.0.0.0'),
    /** Comma-separated browser origins allowed to call /mcp (DNS-rebinding protection). */
    MCP_ALLOWED_ORIGINS: z.string().default(''),
    /** A request body that stops arriving for this long answers 408 request_timeout and frees what it held. */
    MURMUR_BODY_IDLE_TIMEOUT_MS: z.coerce.number().int().min(1).default(DEFAULT_BODY_IDLE_TIMEOUT_MS),
    ...audioUrlConfigSchema,
    ...publicUrlsSchema,
    ...trustedProxiesSchema,
    /** `off` keeps no request log (docs/request-log.md); on by default. */
    MURMUR_REQUEST_LOG: z.enum(['on', 'off']).default('on'),
    ...metricsSchema,
  });
  const log = createLogger('gateway', cfg.LOG_LEVEL);
  // GET /metrics on a port of its own (MURMUR_METRICS_ADDR), never the API's.
  const metrics = await serveMetricsIfConfigured(cfg, log);
  const redis = cfg.REDIS_URL ? await connectRedis(cfg.REDIS_URL, log) : undefined;
  if (!redis) log.info('REDIS_URL unset: idempotency records are in-process (exact for one gateway replica only)');
  // The gateway calls as its own workload, with a principal assertion for each verified caller.
  const clients = createServiceClients(cfg, { deadlineMs: cfg.GRPC_DEADLINE_MS, identity: loadWorkloadIdentity(cfg, 'gateway').minter });
  // With Redis, verified keys are cached here and auth pushes revocations (acknowledged).
  let keyCache: VerifiedKeyCache | undefined;
  let listener: RevocationListener | undefined;
  if (redis) {
    const cache = new VerifiedKeyCache(systemClock, () => listener?.live === true);
    listener = new RevocationListener(redis, { onRevoked: (keyId) => cache.revoke(keyId), onReset: () => cache.clear() }, log);
    await listener.start();
    keyCache = cache;
  }
  // Each authenticated call's entry, sent to auth in batches off the hot path (request-log/queue.ts).
  const requestLog = cfg.MURMUR_REQUEST_LOG === 'on' ? new RequestLogQueue((entries) => clients.auth.recordRequests({ entries }), log).start() : undefined;
  const app = createApp({
    clients,
    log,
    idempotency: redis ? new RedisIdempotencyStore(redis) : new MemoryIdempotencyStore(),
    mcpAllowedOrigins: cfg.MCP_ALLOWED_ORIGINS.split(',').map((o) => o.trim()).filter(Boolean),
    keyCache,
    bodyIdleTimeoutMs: cfg.MURMUR_BODY_IDLE_TIMEOUT_MS,
    // The MCP server's resource identifier and where clients get tokens for it (docs/oauth.md).
    oauth: { publicUrl: publicApiUrl(cfg), authorizationServer: appPublicUrl(cfg) },
    audioUrlPolicy: audioUrlPolicyOf(cfg),
    trustedProxies: cfg.MURMUR_TRUSTED_PROXIES,
    requestLog,
  });
  // Its timeouts (headers 10 s, no whole-request limit, keep-alive 65 s) are http/server.ts's.
  const server = createHttpServer(app, log);
  // GET /api/v1/listen: live transcription over WebSocket upgrades of the same server (docs/live.md).
  const listen = attachListen(server, { clients, log, keyCache, app, oauth: { publicUrl: publicApiUrl(cfg) } });
  await listenOn(server, cfg.PORT, cfg.HOST);
  log.info({ port: cfg.PORT }, 'gateway listening');
  onShutdown(log, [
    // Live streams first: each gets its last finals, then 1012 (reconnect) — before the clients close.
    () => listen.drain(),
    () => new Promise<void>((resolve) => server.close(() => resolve())),
    // The last calls' entries, before the clients close.
    async () => requestLog?.stop(),
    async () => closeServiceClients(clients),
    async () => listener?.stop(),
    async () => void (await redis?.close()),
    async () => metrics?.stop(),
  ]);
}

// A taken PORT exits EXIT_CANNOT_BIND, so the launcher stops rather than restarting us.
main().catch((err: unknown) => exitStartFailure('gateway', err, 'PORT'));
