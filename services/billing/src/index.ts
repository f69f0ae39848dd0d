/**
 * @murmur/billing: plans, AI Credit balances, spending caps, the ledger and the AI rate limit.
 * `startBillingService` runs it in-process (main.ts, this package's tests and the gateway's
 * integration tests); the plan config and the rate limiters are exported for reuse.
 */
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { CursorCodec, startGrpcServer, systemClock, type Clock, type Database, type Logger } from '@murmur/kit';
import { billingHandlers } from './server';
import { BillingService } from './service';
import { MemoryRateLimiter, type RateLimiter } from './rate-limiter';
import { PostgresBillingStore } from './store';

/** services/billing/migrations (same from src/ under jest and dist/ under node). */
export const BILLING_MIGRATIONS_DIR = path.resolve(__dirname, '../migrations');

export { DEFAULT_PLAN_ID, PLANS, planById } from './plans';
export { RATE_LIMIT_WINDOW_SECONDS } from './limits';
export { MemoryRateLimiter, RedisRateLimiter, type RateLimiter, type RateLimitState } from './rate-limiter';

export interface BillingServiceDeps {
  /** The billing schema (migrations/ applied), e.g. from openDatabase or openTestDatabase. */
  db: Database;
  log: Logger;
  /** host:port to listen on; port 0 picks a free one. */
  address: string;
  /** Defaults to the system clock; tests pass a ManualClock to cross period boundaries. */
  clock?: Clock;
  /** Defaults to the in-process limiter (exact for one replica); main passes the Redis one when REDIS_URL is set. */
  rateLimiter?: RateLimiter;
  /** HMAC key of ledger page tokens (MURMUR_CURSOR_SECRET); defaults to a random per-process key. */
  cursorSecret?: string;
}

/** Starts the billing gRPC server (with health and reflection). `stop` drains it; the caller owns `db`. */
export async function startBillingService(deps: BillingServiceDeps): Promise<{ port: number; stop(): Promise<void> }> {
  const clock = deps.clock ?? systemClock;
  const service = new BillingService({
    store: new PostgresBillingStore(deps.db),
    limiter: deps.rateLimiter ?? new MemoryRateLimiter(clock),
    cursors: new CursorCodec(deps.cursorSecret ?? randomBytes(32).toString('hex')),
    clock,
  });
  const server = await startGrpcServer(
    { name: 'billing', log: deps.log, services: [billingHandlers(service)], protoFiles: ['murmur/billing/v1/billing.proto'] },
    deps.address,
  );
  return { port: server.port, stop: () => server.shutdown() };
}
