/**
 * Per-user caps on the job calls that cost the service work without costing the caller credits:
 *  - watchers (WatchTranscription, so GET /transcriptions/{id}/events and the MCP `transcribe`
 *    tool's progress): each live one re-reads its job every 500 ms, so at most
 *    {@link MAX_WATCHERS_PER_USER} at once per user;
 *  - webhook retries (RetryWebhook, POST /transcriptions/{id}/webhook/retry): each one is an
 *    outbound POST now and a new round of up to 8 after it, so at most
 *    {@link WEBHOOK_RETRY_LIMIT} per user in a sliding window.
 * Over a cap → 429 `rate_limit_exceeded` with Retry-After (ErrorInfo `retry_after`).
 *
 * Both are one primitive, a set of expiring leases per user: a watcher holds a lease it renews
 * while it runs and gives back when it ends (a crashed replica's leases lapse within
 * {@link WATCH_LEASE_MS}); a retry takes a lease of the window's length that is never given back.
 * With Redis (REDIS_URL) the set is one sorted set per user changed by one atomic script, exact
 * across every replica; without it, in-process, exact while one replica serves (as billing's
 * rate limiter). Redis down: the call answers 503 `service_unavailable` (a cap that cannot be
 * counted is not a cap), as billing's limiter does.
 */
import { randomBytes } from 'node:crypto';
import { MAX_LIVE_STREAMS_PER_USER, MAX_WATCHERS_PER_USER, MurmurError, WEBHOOK_RETRY_LIMIT } from '@murmur/contract';
import { redisCall, unavailableCause, type Redis } from '@murmur/kit';

export { MAX_WATCHERS_PER_USER, WEBHOOK_RETRY_LIMIT };

/** How long a watcher's lease lasts without a renewal (a lost replica's watchers free within it). */
export const WATCH_LEASE_MS = 30_000;
/** How often a live watcher renews its lease. */
export const WATCH_RENEW_MS = 10_000;

/** Leases per key: at most `limit` alive at once, each ending when released or when it expires. */
export interface LeaseSet {
  /** A new lease until now + ttlMs, or how long until the soonest one ends when `limit` are alive. */
  acquire(key: string, limit: number, ttlMs: number): Promise<{ lease: string } | { retryAfterMs: number }>;
  renew(key: string, lease: string, ttlMs: number): Promise<void>;
  release(key: string, lease: string): Promise<void>;
}

/** In-process leases: exact for one process (the embedded default). Empty sets are dropped. */
export class MemoryLeaseSet implements LeaseSet {
  private readonly sets = new Map<string, Map<string, number>>();

  constructor(private readonly now: () => number = Date.now) {}

  private live(key: string): Map<string, number> {
    const set = this.sets.get(key) ?? new Map<string, number>();
    const now = this.now();
    for (const [lease, until] of set) if (until <= now) set.delete(lease);
    return set;
  }

  async acquire(key: string, limit: number, ttlMs: number): Promise<{ lease: string } | { retryAfterMs: number }> {
    const set = this.live(key);
    if (set.size >= limit) return { retryAfterMs: Math.min(...set.values()) - this.now() };
    const lease = randomBytes(9).toString('base64url');
    set.set(lease, this.now() + ttlMs);
    this.sets.set(key, set);
    return { lease };
  }

  async renew(key: string, lease: string, ttlMs: number): Promise<void> {
    const set = this.live(key);
    if (set.has(lease)) set.set(lease, this.now() + ttlMs);
  }

  async release(key: string, lease: string): Promise<void> {
    const set = this.live(key);
    set.delete(lease);
    if (set.size === 0) this.sets.delete(key);
  }
}

/**
 * KEYS[1]: the user's sorted set (member = lease, score = when it ends, in ms).
 * ARGV: now, limit, lease, until. Drops ended leases; adds this one when fewer than `limit` are
 * alive ({1, 0}), else answers when the soonest ends ({0, its end}). The key expires with its
 * last lease (PEXPIRE, relative: Redis's clock need not agree with ours), so idle users cost nothing.
 */
const ACQUIRE_LUA = `
local key = KEYS[1]
redis.call('ZREMRANGEBYSCORE', key, '-inf', ARGV[1])
if redis.call('ZCARD', key) < tonumber(ARGV[2]) then
  redis.call('ZADD', key, ARGV[4], ARGV[3])
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  redis.call('PEXPIRE', key, math.max(1, math.ceil(tonumber(last[2]) - tonumber(ARGV[1]))))
  return {1, 0}
end
local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return {0, first[2]}
`;

/**
 * ARGV: now, lease, until. Moves a live lease's end (a lapsed one stays gone) and the key's
 * expiry with it. Expiries are relative (PEXPIRE): Redis's clock need not agree with ours.
 */
const RENEW_LUA = `
local key = KEYS[1]
redis.call('ZREMRANGEBYSCORE', key, '-inf', ARGV[1])
if redis.call('ZADD', key, 'XX', 'CH', ARGV[3], ARGV[2]) == 1 then
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  redis.call('PEXPIRE', key, math.max(1, math.ceil(tonumber(last[2]) - tonumber(ARGV[1]))))
end
return 1
`;

/** Leases in Redis: exact across replicas (see the file comment). */
export class RedisLeaseSet implements LeaseSet {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'murmur:transcription:leases:',
    private readonly now: () => number = Date.now,
  ) {}

  private async call<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await redisCall(work());
    } catch (err) {
      if (unavailableCause(err) === undefined) throw err;
      throw new MurmurError('service_unavailable', 'The per-user limits are unavailable right now. Retry in a few seconds.');
    }
  }

  async acquire(key: string, limit: number, ttlMs: number): Promise<{ lease: string } | { retryAfterMs: number }> {
    const lease = randomBytes(9).toString('base64url');
    const now = this.now();
    const [ok, soonest] = (await this.call(() =>
      this.redis.eval(ACQUIRE_LUA, { keys: [this.prefix + key], arguments: [String(now), String(limit), lease, String(now + ttlMs)] }),
    )) as [number, string | number];
    return Number(ok) === 1 ? { lease } : { retryAfterMs: Number(soonest) - now };
  }

  async renew(key: string, lease: string, ttlMs: number): Promise<void> {
    const now = this.now();
    await this.call(() => this.redis.eval(RENEW_LUA, { keys: [this.prefix + key], arguments: [String(now), lease, String(now + ttlMs)] }));
  }

  async release(key: string, lease: string): Promise<void> {
    await this.call(() => this.redis.zRem(this.prefix + key, lease));
  }
}

/** A watcher's hold on one of its owner's slots. */
export interface WatcherSlot {
  /** Keeps the slot (call it now and then while the watch lives; cheap when not yet due). */
  keep(): Promise<void>;
  release(): Promise<void>;
}

function tooMany(message: string, retryAfterMs: number): MurmurError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new MurmurError('rate_limit_exceeded', `${message} Retry in ${seconds} s (Retry-After).`, { meta: { retry_after: String(seconds) } });
}

/** The caps of one service (every replica shares them through Redis when it is configured). */
export class CallerLimits {
  constructor(
    private readonly leases: LeaseSet,
    private readonly now: () => number = Date.now,
  ) {}

  /** One of the user's watcher slots, or 429 when {@link MAX_WATCHERS_PER_USER} are open. */
  watcher(userId: string): Promise<WatcherSlot> {
    return this.slot(`watch:${userId}`, MAX_WATCHERS_PER_USER, `At most ${MAX_WATCHERS_PER_USER} transcription event streams can be open at once per user. Close one first.`);
  }

  /** One of the user's live-stream slots (docs/live.md), or 429 when {@link MAX_LIVE_STREAMS_PER_USER} are open. */
  async liveStream(userId: string): Promise<WatcherSlot> {
    const slot = await this.slot(`live:${userId}`, MAX_LIVE_STREAMS_PER_USER, `At most ${MAX_LIVE_STREAMS_PER_USER} live streams can be open at once per user. Close one first.`);
    // A stream lives for hours: its slot is kept alive while it does.
    const timer = setInterval(() => void slot.keep().catch(() => undefined), WATCH_RENEW_MS);
    timer.unref();
    return {
      keep: () => slot.keep(),
      release: () => {
        clearInterval(timer);
        return slot.release();
      },
    };
  }

  /** A slot of `key`'s `limit`, renewed by `keep` and freed by `release` (or by its lease lapsing). */
  private async slot(key: string, limit: number, refusal: string): Promise<WatcherSlot> {
    const got = await this.leases.acquire(key, limit, WATCH_LEASE_MS);
    if ('retryAfterMs' in got) {
      // A live slot renews its lease, so its end says little: suggest one renewal period.
      throw tooMany(refusal, WATCH_RENEW_MS);
    }
    let renewed = this.now();
    let released = false;
    return {
      keep: async () => {
        if (released || this.now() - renewed < WATCH_RENEW_MS) return;
        renewed = this.now();
        await this.leases.renew(key, got.lease, WATCH_LEASE_MS);
      },
      release: async () => {
        if (released) return;
        released = true;
        await this.leases.release(key, got.lease);
      },
    };
  }

  /** Takes one of the user's webhook retries of the window, or 429 when none is left. */
  async webhookRetry(userId: string): Promise<void> {
    const { limit, windowSeconds } = WEBHOOK_RETRY_LIMIT;
    const got = await this.leases.acquire(`retry:${userId}`, limit, windowSeconds * 1000);
    if ('retryAfterMs' in got) throw tooMany(`At most ${limit} webhook retries per ${windowSeconds} seconds per user.`, got.retryAfterMs);
  }
}
