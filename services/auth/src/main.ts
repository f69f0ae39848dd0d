/**
 * The auth service process: murmur.auth.v1.AuthService over gRPC (users, API keys, and
 * VerifyKey on the hot path of every public call), with gRPC health and reflection. Listens on
 * GRPC_LISTEN_ADDR or AUTH_ADDR; stores users and key hashes in the "auth" Postgres schema
 * (embedded PGlite under MURMUR_DATA_DIR/auth when DATABASE_URL is unset); caches verified keys
 * in Redis when REDIS_URL is set, in-process otherwise (then run exactly one replica).
 */
import * as path from 'node:path';
import { commonSchema, connectRedis, createLogger, loadConfig, onShutdown, openDatabase, RedisCache, serviceAddressSchema, storageSchema } from '@murmur/kit';
import { startAuthService } from './index';

async function main(): Promise<void> {
  const cfg = loadConfig({ ...serviceAddressSchema, ...storageSchema, ...commonSchema });
  const log = createLogger('auth', cfg.LOG_LEVEL);
  const db = await openDatabase({
    schema: 'auth',
    migrationsDir: path.resolve(__dirname, '../migrations'),
    url: cfg.DATABASE_URL,
    embeddedDataDir: path.join(cfg.MURMUR_DATA_DIR, 'auth'),
    log,
  });
  const redis = cfg.REDIS_URL ? await connectRedis(cfg.REDIS_URL, log) : undefined;
  if (!redis) log.info('REDIS_URL unset: verification cache is in-process (exact only with one auth replica)');
  const server = await startAuthService({
    db,
    log,
    address: cfg.GRPC_LISTEN_ADDR ?? cfg.AUTH_ADDR,
    cache: redis ? new RedisCache(redis, 'murmur:auth:') : undefined,
    cursorSecret: cfg.MURMUR_CURSOR_SECRET,
  });
  onShutdown(log, [server.stop, async () => redis?.close(), db.close]);
}

main().catch((err: unknown) => {
  // Start-up failures (bad config, unreachable database) end the process with a readable line.
  process.stderr.write(`auth: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
