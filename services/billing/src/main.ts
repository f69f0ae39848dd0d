/**
 * The billing service process: gRPC murmur.billing.v1.BillingService (plans, balances, caps,
 * ledger, AI rate limit) with health checking and reflection, on GRPC_LISTEN_ADDR or
 * BILLING_ADDR. Postgres schema "billing" (embedded PGlite under MURMUR_DATA_DIR/billing when
 * DATABASE_URL is unset); the rate-limit windows in Redis when REDIS_URL is set, in-process
 * otherwise (exact only while billing runs as one replica).
 */
import './tracing';
import { runServiceProcess } from '@murmur/kit';
import { BILLING_MIGRATIONS_DIR, startBillingService } from './index';
import { MemoryRateLimiter, RedisRateLimiter } from './rate-limiter';

runServiceProcess({
  name: 'billing',
  migrationsDir: BILLING_MIGRATIONS_DIR,
  address: (cfg) => cfg.BILLING_ADDR,
  start: ({ db, log, cfg, redis, access }, address) => {
    if (!redis) log.info('REDIS_URL unset: using the in-process rate limiter (exact for one billing replica only)');
    const rateLimiter = redis ? new RedisRateLimiter(redis) : new MemoryRateLimiter();
    return startBillingService({ db, log, address, access, rateLimiter, cursorSecret: cfg.MURMUR_CURSOR_SECRET });
  },
});
