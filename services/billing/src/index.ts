/**
 * @murmur/billing: plans, AI Credit balances, spending caps, the ledger, the AI rate limit and
 * charging (admission, reserve → commit / release, expiry of forgotten holds).
 * `startBillingService` runs it in-process (main.ts, this package's tests and the gateway's
 * integration tests); the plan config and the rate limiters are exported for reuse.
 */
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { CursorCodec, startGrpcServer, systemClock, untracedUnlessInCall, type Clock, type Database, type Logger, type AccessControl } from '@murmur/kit';
import { Accounts } from './accounts';
import { Charging } from './charging';
import { Ledger } from './ledger';
import { AccountLifecycle } from './lifecycle';
import { billingHandlers } from './server';
import { MemoryRateLimiter, type RateLimiter } from './rate-limiter';
import { PostgresBillingStore } from './postgres-store';
import { UsageHistory } from './usage-history';

/** services/billing/migrations (same from src/ under jest and dist/ under node). */
export const BILLING_MIGRATIONS_DIR = path.resolve(__dirname, '../migrations');

export { DEFAULT_PLAN_ID, PLANS, planById } from './plans';
export { RATE_LIMIT_WINDOW_SECONDS } from './limits';
export { MemoryRateLimiter, RedisRateLimiter, type RateLimiter, type RateLimitState } from './rate-limiter';

export interface BillingServiceDeps {
  /** Who may call this service: its workload's access control (kit access/), checked on every RPC. */
  access: AccessControl;
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
  /** How often the sweeper expires forgotten holds; default {@link EXPIRY_SWEEP_INTERVAL_MS}, 0 turns it off. */
  sweepIntervalMs?: number;
}

/** How often the expiry sweeper runs: a forgotten hold is returned at most this long after its deadline. */
export const EXPIRY_SWEEP_INTERVAL_MS = 30_000;

/** A running billing service. */
export interface RunningBillingService {
  port: number;
  /** Runs one expiry sweep now (what the timer runs); resolves to how many reservations expired. */
  sweepExpiredReservations(): Promise<number>;
  /** Stops the sweeper (waiting for a sweep in progress), then drains the gRPC server. */
  stop(): Promise<void>;
}

/** Starts the billing gRPC server (with health and reflection) and its expiry sweeper; the caller owns `db`. */
export async function startBillingService(deps: BillingServiceDeps): Promise<RunningBillingService> {
  const clock = deps.clock ?? systemClock;
  const store = new PostgresBillingStore(deps.db);
  const limiter = deps.rateLimiter ?? new MemoryRateLimiter(clock);
  const lifecycle = new AccountLifecycle(store, clock);
  const charging = new Charging({ store, lifecycle, limiter, clock, log: deps.log });
  const domain = {
    accounts: new Accounts(lifecycle, limiter),
    charging,
    ledger: new Ledger(store, lifecycle, new CursorCodec(deps.cursorSecret ?? randomBytes(32).toString('hex'))),
    usageHistory: new UsageHistory(store, lifecycle, clock),
  };
  const server = await startGrpcServer(
    { name: 'billing', access: deps.access, log: deps.log, services: [billingHandlers(domain)], protoFiles: ['murmur/billing/v1/billing.proto'] },
    deps.address,
  );

  // One sweep at a time: a tick that finds the previous sweep still running is skipped.
  let running: Promise<unknown> | undefined;
  const tick = () => {
    // Background work: untraced (kit background-work.ts).
    running ??= untracedUnlessInCall(() => charging.sweepExpiredReservations())
      .then(
        (expired) => expired > 0 && deps.log.info({ expired }, 'expired forgotten reservations'),
        (err: unknown) => deps.log.error({ err: err instanceof Error ? err.message : String(err) }, 'expiry sweep failed'),
      )
      .finally(() => {
        running = undefined;
      });
  };
  const interval = deps.sweepIntervalMs ?? EXPIRY_SWEEP_INTERVAL_MS;
  const timer = interval > 0 ? setInterval(tick, interval) : undefined;
  timer?.unref();

  return {
    port: server.port,
    sweepExpiredReservations: () => charging.sweepExpiredReservations(),
    async stop() {
      clearInterval(timer);
      await running;
      await server.shutdown();
    },
  };
}
