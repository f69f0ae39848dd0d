/**
 * Redis when REDIS_URL is set, an in-process stand-in otherwise. Redis only ever holds
 * rate-limit windows and short-lived caches, never the only copy of anything.
 *
 * Redis being down must never stall a request (docs/operations.md, "Redis down"): a command
 * sent while the client is reconnecting fails at once (no offline queue) instead of waiting
 * for the reconnect; a connection that stops answering (a frozen server, a silent network
 * partition) is noticed by a PING every second and dropped after {@link REDIS_SOCKET_TIMEOUT_MS},
 * failing what waited on it; callers that must answer fast bound each call with
 * {@link redisCall}. Reconnection never stops, and node-redis resubscribes pub/sub channels
 * before it reports 'ready', so everything recovers by itself when Redis is back.
 */
import { createClient, type RedisClientType } from 'redis';
import { withDeadline } from './errors';
import type { Logger } from './log';

export type Redis = RedisClientType;

/** Budget of one Redis call on a request path: past it the caller fails fast or degrades. */
export const REDIS_CALL_TIMEOUT_MS = 1_000;
/** A connection silent this long (while PINGed every second) is dropped and reconnected. */
export const REDIS_SOCKET_TIMEOUT_MS = 3_000;
const PING_INTERVAL_MS = 1_000;
const MAX_RECONNECT_DELAY_MS = 1_000;

export async function connectRedis(url: string, log?: Logger): Promise<Redis> {
  const client: Redis = createClient({
    url,
    disableOfflineQueue: true,
    pingInterval: PING_INTERVAL_MS,
    socket: {
      reconnectStrategy: (retries) => Math.min(50 * 2 ** retries, MAX_RECONNECT_DELAY_MS),
      connectTimeout: 2_000,
      socketTimeout: REDIS_SOCKET_TIMEOUT_MS,
    },
  });
  // Duplicates (pub/sub) inherit these options; each one needs its own 'error' listener.
  let down = false;
  client.on('error', (err: Error) => {
    if (!down) log?.warn({ err: err.message }, 'redis unavailable; reconnecting');
    down = true;
  });
  client.on('ready', () => {
    if (down) log?.info('redis is back');
    down = false;
  });
  await client.connect();
  return client;
}

/** One Redis call bounded by `ms`: rejects with an error {@link unavailableCause} recognises. */
export function redisCall<T>(work: Promise<T>, ms = REDIS_CALL_TIMEOUT_MS): Promise<T> {
  return withDeadline(work, ms, 'redis');
}

/**
 * A small TTL cache of strings: Redis-backed across replicas, or in-process for one. The Redis
 * one fails within {@link REDIS_CALL_TIMEOUT_MS} when Redis is down; callers treat that as a miss.
 */
export interface KeyValueCache {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlSeconds: number): Promise<void>;
  delete(key: string): Promise<void>;
}

export class RedisCache implements KeyValueCache {
  constructor(private readonly redis: Redis, private readonly prefix: string) {}
  async get(key: string): Promise<string | null> {
    return redisCall(this.redis.get(this.prefix + key));
  }
  async set(key: string, value: string, ttlSeconds: number): Promise<void> {
    await redisCall(this.redis.set(this.prefix + key, value, { EX: ttlSeconds }));
  }
  async delete(key: string): Promise<void> {
    await redisCall(this.redis.del(this.prefix + key));
  }
}

/** In-process cache; exact only while one process serves (the embedded default). */
export class MemoryCache implements KeyValueCache {
  private readonly entries = new Map<string, { value: string; expires: number }>();
  constructor(private readonly maxEntries = 10_000, private readonly now: () => number = Date.now) {}
  async get(key: string): Promise<string | null> {
    const hit = this.entries.get(key);
    if (!hit) return null;
    if (hit.expires <= this.now()) {
      this.entries.delete(key);
      return null;
    }
    return hit.value;
  }
  async set(key: string, value: string, ttlSeconds: number): Promise<void> {
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, { value, expires: this.now() + ttlSeconds * 1000 });
  }
  async delete(key: string): Promise<void> {
    this.entries.delete(key);
  }
}
