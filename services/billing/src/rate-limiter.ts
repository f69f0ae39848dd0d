/**
 * The AI rate limit (DESIGN §5): a sliding-window log per user. With Redis it is one atomic
 * Lua script per call, so it stays exact across gateway and billing replicas; without Redis
 * (the embedded default) an in-process log with the same semantics, exact while billing runs
 * as one replica. Both take "now" from an injected clock and report through the one
 * {@link windowState} function, so tests drive either with a ManualClock and see the same
 * numbers.
 */
import { createHash, randomBytes } from 'node:crypto';
import { MurmurError } from '@murmur/contract';
import { redisCall, systemClock, unavailableCause, type Clock, type Redis } from '@murmur/kit';
import type { billing } from '@murmur/proto';
import { freeingHitIndex, windowState } from './limits';

/** limit, remaining, window_seconds and reset_seconds of one user's window. */
export type RateLimitState = billing.RateLimitState;

/** A sliding-window limiter keyed by user id. */
export interface RateLimiter {
  /** Takes one slot when one is free (`allowed: true`); a refused hit takes nothing. */
  hit(userId: string, limit: number, windowSeconds: number): Promise<RateLimitState & { allowed: boolean }>;
  /** Reports the window without taking a slot. */
  peek(userId: string, limit: number, windowSeconds: number): Promise<RateLimitState>;
}

function checkArgs(limit: number, windowSeconds: number): void {
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`rate limit must be a positive integer, got ${limit}`);
  if (!Number.isInteger(windowSeconds) || windowSeconds < 1) throw new Error(`rate-limit window must be a positive integer, got ${windowSeconds}`);
}

/**
 * In-process sliding-window log: exact for one process only, the default when REDIS_URL is
 * unset. Idle users' logs are swept now and then so memory follows active users, not all users.
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly logs = new Map<string, number[]>();
  private hitsSinceSweep = 0;
  private longestWindowMs = 0;

  constructor(private readonly clock: Clock = systemClock, private readonly sweepEvery = 10_000) {}

  async hit(userId: string, limit: number, windowSeconds: number): Promise<RateLimitState & { allowed: boolean }> {
    checkArgs(limit, windowSeconds);
    const now = this.clock.now().getTime();
    const floor = now - windowSeconds * 1000;
    this.longestWindowMs = Math.max(this.longestWindowMs, windowSeconds * 1000);
    const log = (this.logs.get(userId) ?? []).filter((t) => t > floor);
    const allowed = log.length < limit;
    if (allowed) {
      // Keep the log sorted even if the clock steps back, as a Redis sorted set would be.
      const at = log.findIndex((t) => t > now);
      log.splice(at === -1 ? log.length : at, 0, now);
    }
    if (log.length > 0) this.logs.set(userId, log);
    else this.logs.delete(userId);
    if (++this.hitsSinceSweep >= this.sweepEvery) this.sweep(now);
    return { ...windowState(log.length, log[freeingHitIndex(log.length, limit)], now, limit, windowSeconds), allowed };
  }

  async peek(userId: string, limit: number, windowSeconds: number): Promise<RateLimitState> {
    checkArgs(limit, windowSeconds);
    const now = this.clock.now().getTime();
    const floor = now - windowSeconds * 1000;
    const log = (this.logs.get(userId) ?? []).filter((t) => t > floor);
    return windowState(log.length, log[freeingHitIndex(log.length, limit)], now, limit, windowSeconds);
  }

  /** Drops every log whose newest hit has left even the longest window in use. */
  private sweep(now: number): void {
    this.hitsSinceSweep = 0;
    for (const [userId, log] of this.logs) {
      const newest = log[log.length - 1];
      if (newest === undefined || newest <= now - this.longestWindowMs) this.logs.delete(userId);
    }
  }
}

/**
 * KEYS[1]: the user's sorted set (score = hit time in ms, member unique per hit).
 * ARGV: now_ms, floor_ms (= now - window; hits at or before it have left the window),
 *       window_ms, limit, member ('' peeks: counts without removing or adding anything).
 * Returns { allowed 0|1, hits in window after this call, score of the hit that frees the next
 * slot (the oldest unless a lowered limit leaves more) or '' when the window is empty }.
 */
const SLIDING_WINDOW_LUA = `
local key = KEYS[1]
local now, floor, window_ms, limit, member = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]
local count
if member ~= '' then
  redis.call('ZREMRANGEBYSCORE', key, '-inf', floor)
  count = redis.call('ZCARD', key)
else
  count = redis.call('ZCOUNT', key, '(' .. floor, '+inf')
end
local allowed = 0
if member ~= '' and count < limit then
  redis.call('ZADD', key, now, member)
  redis.call('PEXPIRE', key, window_ms)
  count = count + 1
  allowed = 1
end
local freeing = ''
if count > 0 then
  local hit = redis.call('ZRANGEBYSCORE', key, '(' .. floor, '+inf', 'WITHSCORES', 'LIMIT', math.max(0, count - limit), 1)
  if hit[2] then freeing = hit[2] end
end
return { allowed, count, freeing }
`;

const SLIDING_WINDOW_SHA = createHash('sha1').update(SLIDING_WINDOW_LUA).digest('hex');

/**
 * Redis sliding-window log: one atomic script per call, so concurrent hits from any number of
 * replicas never admit more than `limit`. "Now" comes from the injected clock (each replica's
 * own; keep them NTP-synced) so tests can move time; the key expires one window after the
 * last admitted hit, so idle users cost nothing.
 *
 * Redis down: the limit cannot be exact, so a call fails fast (within REDIS_CALL_TIMEOUT_MS)
 * with service_unavailable rather than admitting unlimited calls; nothing is charged.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly clock: Clock;
  private readonly keyPrefix: string;

  constructor(private readonly redis: Redis, options: { clock?: Clock; keyPrefix?: string } = {}) {
    this.clock = options.clock ?? systemClock;
    this.keyPrefix = options.keyPrefix ?? 'murmur:billing:ratelimit:';
  }

  async hit(userId: string, limit: number, windowSeconds: number): Promise<RateLimitState & { allowed: boolean }> {
    const member = randomBytes(9).toString('base64url');
    const { allowed, state } = await this.run(userId, limit, windowSeconds, member);
    return { ...state, allowed };
  }

  async peek(userId: string, limit: number, windowSeconds: number): Promise<RateLimitState> {
    return (await this.run(userId, limit, windowSeconds, '')).state;
  }

  private async run(userId: string, limit: number, windowSeconds: number, member: string): Promise<{ allowed: boolean; state: RateLimitState }> {
    checkArgs(limit, windowSeconds);
    const now = this.clock.now().getTime();
    const windowMs = windowSeconds * 1000;
    const options = {
      keys: [this.keyPrefix + userId],
      arguments: [String(now), String(now - windowMs), String(windowMs), String(limit), member],
    };
    let reply: unknown;
    try {
      reply = await redisCall(this.evaluate(options));
    } catch (err) {
      if (unavailableCause(err) === undefined) throw err;
      throw new MurmurError('service_unavailable', 'The rate limiter is unavailable right now; nothing was charged. Retry in a few seconds.');
    }
    const [allowed, count, freeing] = reply as [number, number, string];
    return {
      allowed: Number(allowed) === 1,
      state: windowState(Number(count), freeing === '' ? undefined : Number(freeing), now, limit, windowSeconds),
    };
  }

  private async evaluate(options: { keys: string[]; arguments: string[] }): Promise<unknown> {
    try {
      return await this.redis.evalSha(SLIDING_WINDOW_SHA, options);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return this.redis.eval(SLIDING_WINDOW_LUA, options); // loads it for the next calls
    }
  }
}
