/**
 * Idempotency records of AI calls (Stripe's semantics, DESIGN.md §7): per owner and key, the
 * first request claims the key ("running"); once execution has begun its response is kept for
 * 24 h and replayed for the same parameters. Redis when REDIS_URL is set (exact across gateway
 * replicas: the claim is one SET NX), in-process otherwise (exact for one gateway).
 *
 * Redis down: without its records "once" cannot be promised, so every call fails fast (within
 * REDIS_CALL_TIMEOUT_MS) with service_unavailable and a request carrying Idempotency-Key is
 * refused before anything runs; requests without the header do not touch the store.
 */
import { MurmurError } from '@murmur/contract';
import { redisCall, unavailableCause, type Redis } from '@murmur/kit';

/** A stored response, replayed byte for byte. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type IdempotencyRecord =
  | { state: 'running'; fingerprint: string | null; startedAt: number }
  | { state: 'done'; fingerprint: string; response: StoredResponse };

export type ClaimResult = { claimed: true } | { claimed: false; record: IdempotencyRecord };

export interface IdempotencyStore {
  /** Claims the key for a new request; returns the existing record when it is taken. */
  claim(owner: string, key: string, fingerprint: string | null): Promise<ClaimResult>;
  /** Stores the response of a request whose execution began. */
  complete(owner: string, key: string, fingerprint: string, response: StoredResponse): Promise<void>;
  /** Frees the key of a request that failed before execution began (it may be retried as new). */
  release(owner: string, key: string): Promise<void>;
}

export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;
/** A claim whose request died without completing (crashed replica) frees itself after this. */
export const RUNNING_TTL_SECONDS = 60 * 60;

function recordKey(owner: string, key: string): string {
  return `${owner}:${Buffer.from(key).toString('base64url')}`;
}

/** A Redis failure as the contract's 503; anything else (a bug) passes through unchanged. */
async function bounded<T>(work: Promise<T>): Promise<T> {
  try {
    return await redisCall(work);
  } catch (err) {
    if (unavailableCause(err) === undefined) throw err;
    throw new MurmurError(
      'service_unavailable',
      'Idempotency-Key cannot be honoured right now (its store is unavailable); nothing was charged. Retry in a few seconds, or send the request without the header.',
    );
  }
}

export class RedisIdempotencyStore implements IdempotencyStore {
  constructor(private readonly redis: Redis, private readonly prefix = 'murmur:idem:') {}

  async claim(owner: string, key: string, fingerprint: string | null): Promise<ClaimResult> {
    const k = this.prefix + recordKey(owner, key);
    const running: IdempotencyRecord = { state: 'running', fingerprint, startedAt: Date.now() };
    const ok = await bounded(this.redis.set(k, JSON.stringify(running), { NX: true, EX: RUNNING_TTL_SECONDS }));
    if (ok === 'OK') return { claimed: true };
    const raw = await bounded(this.redis.get(k));
    if (raw === null) return this.claim(owner, key, fingerprint); // expired between the two calls
    return { claimed: false, record: JSON.parse(raw) as IdempotencyRecord };
  }

  async complete(owner: string, key: string, fingerprint: string, response: StoredResponse) {
    const done: IdempotencyRecord = { state: 'done', fingerprint, response };
    await bounded(this.redis.set(this.prefix + recordKey(owner, key), JSON.stringify(done), { EX: IDEMPOTENCY_TTL_SECONDS }));
  }

  async release(owner: string, key: string) {
    await bounded(this.redis.del(this.prefix + recordKey(owner, key)));
  }
}

export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly records = new Map<string, { record: IdempotencyRecord; expires: number }>();
  constructor(private readonly now: () => number = Date.now) {}

  async claim(owner: string, key: string, fingerprint: string | null): Promise<ClaimResult> {
    const k = recordKey(owner, key);
    const hit = this.records.get(k);
    if (hit && hit.expires > this.now()) return { claimed: false, record: hit.record };
    this.sweep();
    this.records.set(k, { record: { state: 'running', fingerprint, startedAt: this.now() }, expires: this.now() + RUNNING_TTL_SECONDS * 1000 });
    return { claimed: true };
  }

  async complete(owner: string, key: string, fingerprint: string, response: StoredResponse) {
    this.records.set(recordKey(owner, key), {
      record: { state: 'done', fingerprint, response },
      expires: this.now() + IDEMPOTENCY_TTL_SECONDS * 1000,
    });
  }

  async release(owner: string, key: string) {
    this.records.delete(recordKey(owner, key));
  }

  private sweep(): void {
    if (this.records.size < 10_000) return;
    const now = this.now();
    for (const [k, v] of this.records) if (v.expires <= now) this.records.delete(k);
  }
}
