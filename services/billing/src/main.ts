/**
 * The billing service process: gRPC murmur.billing.v1.BillingService (plans, balances, caps,
 * ledger, AI rate limit) with health checking and reflection, on GRPC_LISTEN_ADDR or
 * BILLING_ADDR. Postgres schema "billing" (embedded PGlite under MURMUR_DATA_DIR/billing when
 * DATABASE_URL is unset); the rate-limit windows in Redis when REDIS_URL is set, in-process
 * otherwise (exact only while billing runs as one replica).
 */
import * as path from 'node:path';
import { commonSchema, connectRedis, createLogger, loadConfig, onShutdown, openDatabase, serviceAddressSchema, storageSchema } from '@murmur/kit';
import { startBillingService } from './index';
import { MemoryRateLimiter, RedisRateLimiter, type RateLimiter } from './rate-limiter';

async function main(): Promise<void> {
  const cfg = loadConfig({ ...serviceAddressSchema, ...storageSchema, ...commonSchema });
  const log = createLogger('billing', cfg.LOG_LEVEL);
  const db = await openDatabase({
    schema: 'billing',
    migrationsDir: path.resolve(__dirname, '../migrations'),
    url: cfg.DATABASE_URL,
    embeddedDataDir: path.join(cfg.MURMUR_DATA_DIR, 'billing'),
    log,
  });
  const redis = cfg.REDIS_URL ? await connectRedis(cfg.REDIS_URL, log) : undefined;
  let rateLimiter: RateLimiter;
  if (redis) {
    rateLimiter = new RedisRateLimiter(redis);
  } else {
    log.info('REDIS_URL unset: using the in-process rate limiter (exact for one billing replica only)');
    rateLimiter = new MemoryRateLimiter();
  }
  const server = await startBillingService({
    db,
    log,
    address: cfg.GRPC_LISTEN_ADDR ?? cfg.BILLING_ADDR,
    rateLimiter,
    cursorSecret: cfg.MURMUR_CURSOR_SECRET,
  });
  onShutdown(log, [
    server.stop,
    async () => {
      await redis?.close();
    },
    db.close,
  ]);
}

main().catch((err: unknown) => {
  // Start-up failures (bad config, unreachable database) end the process with a readable line.
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
