/**
 * Redis when REDIS_URL is set, an in-process stand-in otherwise. Redis only ever holds
 * rate-limit windows and short-lived caches, never the only copy of anything.
 */
import { createClient, type RedisClientType } from 'redis';
import type { Logger } from './log';

export type Redis = RedisClientType;

export async function connectRedis(url: string, log?: Logger): Promise<Redis> {
  const client: Redis = createClient({
    url,
    socket: { reconnectStrategy: (retries) => Math.min(50 * 2 ** retries, 2_000), connectTimeout: 5_000 },
  });
  client.on('error', (err: Error) => log?.warn({ err: err.message }, 'redis error'));
  await client.connect();
  return client;
}

/** A small TTL cache of strings: Redis-backed across replicas, or in-process for one. */
export interface KeyValueCache {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlSeconds: number): Promise<void>;
  delete(key: string): Promise<void>;
}

export class RedisCache implements KeyValueCache {
  constructor(private readonly redis: Redis, private readonly prefix: string) {}
  async get(key: string): Promise<string | null> {
    return this.redis.get(this.prefix + key);
  }
  async set(key: string, value: string, ttlSeconds: number): Promise<void> {
    await this.redis.set(this.prefix + key, value, { EX: ttlSeconds });
  }
  async delete(key: string): Promise<void> {
    await this.redis.del(this.prefix + key);
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
