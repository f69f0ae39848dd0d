/**
 * The VerifyKey cache: principal, scopes and expiry of a valid key, keyed by the key's SHA-256, for 60 s,
 * in a KeyValueCache (Redis across replicas, or in-process — exact only with one auth replica).
 *
 * Revocation must win over the cache (DESIGN.md §2: a revoked key fails on the very next
 * request). RevokeApiKey therefore deletes the entry; and because a VerifyKey that read the
 * row just before the revocation could write its entry just after that delete, revocation
 * first leaves a short-lived "revoked" marker. Every lookup reads the marker together with the
 * entry (one round trip on Redis, whose client pipelines the two GETs), and every write
 * re-checks it, so whatever the interleaving no request that starts after RevokeApiKey has
 * returned is served from a stale entry.
 *
 * The cache is an accelerator, never the only copy: a failing or slow cache turns into a
 * database lookup for VerifyKey, while a revocation that cannot clear the cache fails loudly
 * so the caller retries it.
 *
 * The gateways cache verifications too, in memory, told of revocations over Redis pub/sub
 * (gateway/src/key-cache.ts); why both, and why two protocols:
 * docs/decisions/0015-verified-key-caches.md.
 */
import { MurmurError } from '@murmur/contract';
import { withDeadline, type KeyValueCache, type Logger } from '@murmur/kit';

/** What a cache hit needs to answer VerifyKey; expiry is re-checked against the clock on every hit. */
export interface CachedPrincipal {
  userId: string;
  keyId: string;
  /** null: the key never expires. */
  expiresAt: Date | null;
  /** What the key may do (read, ai). */
  scopes: string[];
}

export interface VerificationCacheOptions {
  /** How long a verified key is served without the database. */
  ttlSeconds?: number;
  /** A cache call slower than this counts as failed (Redis down must not stall every request). */
  timeoutMs?: number;
}

/** Serialises an entry; short field names keep Redis values small. */
export function encodeEntry(p: CachedPrincipal): string {
  return JSON.stringify({ u: p.userId, k: p.keyId, e: p.expiresAt === null ? null : p.expiresAt.getTime(), s: p.scopes });
}

/** Parses an entry; anything unexpected (another version's format, corruption) is a miss. */
export function decodeEntry(raw: string): CachedPrincipal | null {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null) return null;
  const { u, k, e, s } = v as Record<string, unknown>;
  if (typeof u !== 'string' || typeof k !== 'string') return null;
  if (e !== null && (typeof e !== 'number' || !Number.isSafeInteger(e))) return null;
  // An entry without scopes (written before key scopes) is a miss: the database says what the key may do.
  if (!Array.isArray(s) || !s.every((x): x is string => typeof x === 'string')) return null;
  return { userId: u, keyId: k, expiresAt: e === null ? null : new Date(e), scopes: s };
}

const errMessage = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** See the module comment. Holds no key material beyond the key's hash. */
export class VerificationCache {
  private readonly ttlSeconds: number;
  private readonly timeoutMs: number;

  constructor(
    private readonly cache: KeyValueCache,
    private readonly log: Logger,
    options: VerificationCacheOptions = {},
  ) {
    this.ttlSeconds = options.ttlSeconds ?? 60;
    this.timeoutMs = options.timeoutMs ?? 500;
  }

  /** The cached principal of a key hash, or null on a miss or any cache failure. */
  async lookup(keyHash: string): Promise<CachedPrincipal | null> {
    let raw: string | null;
    let revoked: string | null;
    try {
      [raw, revoked] = await this.call(Promise.all([this.cache.get(entryKey(keyHash)), this.cache.get(revokedKey(keyHash))]));
    } catch (err) {
      this.log.warn({ err: errMessage(err) }, 'verification cache read failed; using the database');
      return null;
    }
    // A revoked key is never answered from the cache: the database has the final word.
    if (raw === null || revoked !== null) return null;
    const entry = decodeEntry(raw);
    if (!entry) {
      this.log.warn('unreadable verification cache entry; dropping it');
      await this.call(this.cache.delete(entryKey(keyHash))).catch(() => undefined);
    }
    return entry;
  }

  /** Caches a key just verified against the database, unless it was revoked meanwhile. */
  async remember(keyHash: string, principal: CachedPrincipal): Promise<void> {
    try {
      await this.call(this.cache.set(entryKey(keyHash), encodeEntry(principal), this.ttlSeconds));
      if ((await this.call(this.cache.get(revokedKey(keyHash)))) !== null) {
        await this.call(this.cache.delete(entryKey(keyHash)));
      }
    } catch (err) {
      this.log.warn({ key_id: principal.keyId, err: errMessage(err) }, 'verification cache write failed');
      // Queued behind the write on the same connection, so it cannot leave a stale entry.
      await this.call(this.cache.delete(entryKey(keyHash))).catch(() => undefined);
    }
  }

  /**
   * Makes a revoked key fail on its very next use. Throws service_unavailable when the cache
   * cannot be updated: the revocation itself is stored, and retrying it is safe.
   */
  async forget(keyHash: string, keyId: string): Promise<void> {
    try {
      // The marker outlives any entry written by a verification already in flight.
      await this.call(this.cache.set(revokedKey(keyHash), '1', this.ttlSeconds * 2));
      await this.call(this.cache.delete(entryKey(keyHash)));
    } catch (err) {
      this.log.error({ key_id: keyId, err: errMessage(err) }, 'could not clear a revoked key from the verification cache');
      throw new MurmurError(
        'service_unavailable',
        'The key is revoked, but the verification cache could not be cleared. Retry the revocation so the key stops working everywhere at once.',
      );
    }
  }

  private call<T>(work: Promise<T>): Promise<T> {
    return withDeadline(work, this.timeoutMs, 'verification cache');
  }
}

/** Cache key of a verified key's entry. */
export function entryKey(keyHash: string): string {
  return `key:${keyHash}`;
}

/** Cache key of the marker a revocation leaves for twice the entry TTL. */
export function revokedKey(keyHash: string): string {
  return `revoked:${keyHash}`;
}
