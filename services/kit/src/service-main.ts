/**
 * The shared shape of every service's main.ts: validated config, a logger, the service's own
 * Postgres schema (migrated; embedded PGlite under MURMUR_DATA_DIR/<name> when DATABASE_URL is
 * unset), Redis when REDIS_URL is set, then `start`, and a drain in reverse order on SIGTERM.
 * With MURMUR_METRICS_ADDR, its metrics on a port of their own (metrics-server.ts). A start-up
 * failure ends the process with one readable line; a taken port exits EXIT_CANNOT_BIND naming
 * the variable to change.
 */
import * as path from 'node:path';
import { commonSchema, loadConfig, serviceAddressSchema, storageSchema } from './config';
import { createServiceClients } from './service-clients';
import type { AccessControl } from './access/access-control';
import { keyVerifierVia, loadWorkloadIdentity, type WorkloadIdentity } from './access/workload-identity';
import { isWorkload } from '@murmur/contract';
import { openDatabase, type Database } from './db';
import { createLogger, type Logger } from './log';
import { exitStartFailure } from './bind-error';
import { metricsSchema, serveMetricsIfConfigured } from './metrics-server';
import { connectRedis, type Redis } from './redis';
import { onShutdown } from './shutdown';

const processSchema = { ...serviceAddressSchema, ...storageSchema, ...commonSchema, ...metricsSchema };

export type ServiceConfig = ReturnType<typeof loadConfig<typeof processSchema>>;

export interface ServiceProcess {
  cfg: ServiceConfig;
  log: Logger;
  /** The service's own schema; absent for a service without storage (no migrationsDir). */
  db: Database;
  /** Present when REDIS_URL is set. */
  redis?: Redis;
  /** This process's workload identity: its clients call with `identity.minter`. */
  identity: WorkloadIdentity;
  /** Its server's access control, verifying developer keys through auth's VerifyKey (not for auth itself). */
  access: AccessControl;
}

/** The variable that set a service's listen address: GRPC_LISTEN_ADDR when given, else AUTH_ADDR, BILLING_ADDR, …. */
function addressVariable(name: string): string {
  return process.env.GRPC_LISTEN_ADDR ? 'GRPC_LISTEN_ADDR' : `${name.toUpperCase()}_ADDR`;
}

export function runServiceProcess(opts: {
  /** Service name: logger name, Postgres schema and data folder. */
  name: string;
  /** The service's migrations; `null` for a stateless service (no database is opened). */
  migrationsDir: string | null;
  /** Listen address from config, e.g. `(cfg) => cfg.AUTH_ADDR`. */
  address: (cfg: ServiceConfig) => string;
  start: (proc: ServiceProcess, address: string) => Promise<{ stop(): Promise<void> }>;
}): void {
  (async () => {
    const cfg = loadConfig(processSchema);
    const log = createLogger(opts.name, cfg.LOG_LEVEL);
    // Its own port, bound first: a taken one stops the start before any migration (MURMUR_METRICS_ADDR).
    const metrics = await serveMetricsIfConfigured(cfg, log);
    const db = opts.migrationsDir
      ? await openDatabase({
          schema: opts.name,
          migrationsDir: opts.migrationsDir,
          url: cfg.DATABASE_URL,
          embeddedDataDir: path.join(cfg.MURMUR_DATA_DIR, opts.name),
          log,
        })
      : undefined;
    const redis = cfg.REDIS_URL ? await connectRedis(cfg.REDIS_URL, log) : undefined;
    if (!isWorkload(opts.name)) throw new Error(`${opts.name} is not a workload`);
    const identity = loadWorkloadIdentity(cfg, opts.name);
    const { auth: authClient } = createServiceClients(cfg, { deadlineMs: cfg.GRPC_DEADLINE_MS, identity: identity.minter }, ['auth']);
    const access = identity.accessControl(keyVerifierVia(authClient));
    const server = await opts.start({ cfg, log, db: db as Database, redis, identity, access }, cfg.GRPC_LISTEN_ADDR ?? opts.address(cfg));
    onShutdown(log, [server.stop, async () => authClient.close(), async () => void (await redis?.close()), async () => db?.close(), async () => metrics?.stop()]);
  })().catch((err: unknown) => exitStartFailure(opts.name, err, addressVariable(opts.name)));
}
