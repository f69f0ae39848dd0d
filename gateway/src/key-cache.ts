/**
 * The gateway's short-lived cache of verified keys, which takes the auth hop off most
 * requests. It is used only while the revocation channel is live (REDIS_URL set, subscribed):
 * auth pushes every revocation and waits for this cache to drop the key before RevokeApiKey
 * returns, so a revoked key still fails on the very next request. Expiry is re-checked on
 * every hit; an entry lives 30 s at most, so last_used_at lags by at most that much.
 *
 * When the channel breaks (Redis down) the cache is emptied and off; when it is back, it is
 * emptied again and caches nothing for {@link RESET_SETTLE_MS}, so a verification answered
 * before a revocation that happened during the break (and reached nobody) is never cached.
 *
 * Auth keeps a cache of its own behind this one (services/auth/src/verification-cache.ts) with
 * another invalidation, on purpose: docs/decisions/0015-verified-key-caches.md.
 */
import { hash } from 'node:crypto';
import type { auth } from '@murmur/proto';
import type { Clock } from '@murmur/kit';

export const KEY_CACHE_TTL_MS = 30_000;
const TOMBSTONE_MS = 120_000;
const MAX_ENTRIES = 50_000;
/** Longer than any verification can be in flight (the gRPC deadline, 10 s by default). */
export const RESET_SETTLE_MS = 30_000;

interface Entry {
  principal: auth.Principal;
  cachedUntil: number;
}

export class VerifiedKeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly byKeyId = new Map<string, Set<string>>();
  /** Key ids revoked recently: a verification that raced the revocation must not be cached. */
  private readonly tombstones = new Map<string, number>();
  private resetAt = -Infinity;

  constructor(private readonly clock: Clock, private readonly isLive: () => boolean) {}

  /** One-shot SHA-256 (no Hash object per request): this runs on every authenticated call. */
  private static slot(authorization: string): string {
    return hash('sha256', authorization);
  }

  get(authorization: string): auth.Principal | undefined {
    if (!this.isLive()) return undefined;
    const slot = VerifiedKeyCache.slot(authorization);
    const entry = this.entries.get(slot);
    if (!entry) return undefined;
    const now = this.clock.now().getTime();
    const keyExpiry = entry.principal.keyExpiresAt?.getTime() ?? Infinity;
    if (now >= entry.cachedUntil || now >= keyExpiry) {
      this.drop(slot, entry.principal.keyId);
      return undefined;
    }
    return entry.principal;
  }

  set(authorization: string, principal: auth.Principal): void {
    if (!this.isLive()) return;
    const now = this.clock.now().getTime();
    const revokedAt = this.tombstones.get(principal.keyId);
    if (revokedAt !== undefined && now - revokedAt < TOMBSTONE_MS) return;
    if (now - this.resetAt < RESET_SETTLE_MS) return;
    if (this.entries.size >= MAX_ENTRIES) this.wipe();
    const slot = VerifiedKeyCache.slot(authorization);
    this.entries.set(slot, { principal, cachedUntil: now + KEY_CACHE_TTL_MS });
    const slots = this.byKeyId.get(principal.keyId) ?? new Set<string>();
    slots.add(slot);
    this.byKeyId.set(principal.keyId, slots);
  }

  /** A revocation arrived: forget every way this key was presented, and refuse to re-cache it for a while. */
  revoke(keyId: string): void {
    const now = this.clock.now().getTime();
    this.tombstones.set(keyId, now);
    for (const [id, at] of this.tombstones) if (now - at >= TOMBSTONE_MS) this.tombstones.delete(id);
    for (const slot of this.byKeyId.get(keyId) ?? []) this.entries.delete(slot);
    this.byKeyId.delete(keyId);
  }

  /** The revocation channel broke or came back: revocations may have been missed. */
  clear(): void {
    this.resetAt = this.clock.now().getTime();
    this.wipe();
  }

  private wipe(): void {
    this.entries.clear();
    this.byKeyId.clear();
  }

  private drop(slot: string, keyId: string): void {
    this.entries.delete(slot);
    this.byKeyId.get(keyId)?.delete(slot);
  }
}
