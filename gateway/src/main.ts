/**
 * The gateway process: the public HTTP edge of Murmur behind Envoy. `/api/v1/*` REST routes
 * (and, later, `/mcp`) are translated into gRPC calls to auth, billing and library; it owns
 * no data. Listens on PORT (default 8080); service addresses come from *_ADDR.
 */
import type { Server } from 'node:http';
import { commonSchema, createLogger, loadConfig, onShutdown, serviceAddressSchema, z } from '@murmur/kit';
import { createApp } from './app';
import { closeClients, createClients } from './clients';

const cfg = loadConfig({
  ...serviceAddressSchema,
  ...commonSchema,
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('0.0.0.0'),
});
const log = createLogger('gateway', cfg.LOG_LEVEL);
const clients = createClients(cfg, cfg.GRPC_DEADLINE_MS);
const app = createApp({ clients, log });
const server: Server = app.listen(cfg.PORT, cfg.HOST, () => {
  log.info({ port: cfg.PORT }, 'gateway listening');
});
server.keepAliveTimeout = 65_000;
onShutdown(log, [
  () => new Promise<void>((resolve) => server.close(() => resolve())),
  async () => closeClients(clients),
]);
