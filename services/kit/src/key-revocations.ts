/**
 * Revocations pushed to caches outside the auth service (the gateways' verified-key caches)
 * over Redis pub/sub, acknowledged: auth publishes the revoked key id and waits until every
 * subscribed cache has dropped it (bounded by a timeout), so a revoked key fails on the very
 * next request without any cache waiting for a TTL. A cache whose subscription is down must
 * not serve from memory (see {@link RevocationListener.live}).
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from './log';
import type { Redis } from './redis';

export const REVOCATION_CHANNEL = 'murmur:auth:key-revoked';

interface RevocationMessage {
  keyId: string;
  ack: string;
}

/**
 * Publishes a revocation and resolves once every cache subscribed at that moment has
 * acknowledged it, or after `timeoutMs` (then `acked < notified`; the caller logs it).
 */
export async function publishRevocation(redis: Redis, keyId: string, timeoutMs = 2_000): Promise<{ notified: number; acked: number }> {
  const ack = `${REVOCATION_CHANNEL}:ack:${randomBytes(8).toString('hex')}`;
  const sub = redis.duplicate();
  await sub.connect();
  try {
    let acked = 0;
    let expected = Infinity;
    let done!: () => void;
    const allAcked = new Promise<void>((resolve) => (done = resolve));
    await sub.subscribe(ack, () => {
      acked += 1;
      if (acked >= expected) done();
    });
    const message: RevocationMessage = { keyId, ack };
    const notified = await redis.publish(REVOCATION_CHANNEL, JSON.stringify(message));
    expected = notified;
    if (acked >= expected) done();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([allAcked, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
    return { notified, acked: Math.min(acked, notified) };
  } finally {
    await sub.quit().catch(() => undefined);
  }
}

/**
 * A cache's end of the channel: calls `onRevoked` for each revoked key id, then acknowledges.
 * `live` is true only while subscribed; on any break the cache is told to forget everything
 * (`onReset`) since revocations may have been missed.
 */
export class RevocationListener {
  private sub: Redis | undefined;
  private subscribed = false;

  constructor(
    private readonly redis: Redis,
    private readonly handlers: { onRevoked(keyId: string): void; onReset(): void },
    private readonly log?: Logger,
  ) {}

  get live(): boolean {
    return this.subscribed && this.sub?.isReady === true;
  }

  async start(): Promise<void> {
    const sub = this.redis.duplicate();
    this.sub = sub;
    const lost = () => {
      if (this.subscribed) this.log?.warn('revocation channel lost: verified-key cache off until it is back');
      this.subscribed = false;
      this.handlers.onReset();
    };
    sub.on('error', lost);
    sub.on('end', lost);
    sub.on('reconnecting', lost);
    sub.on('ready', () => {
      // node-redis resubscribes after a reconnect; serve from the cache again only then.
      if (this.sub === sub && sub.isReady) this.subscribed = true;
    });
    await sub.connect();
    await sub.subscribe(REVOCATION_CHANNEL, (raw) => {
      let message: RevocationMessage;
      try {
        message = JSON.parse(raw) as RevocationMessage;
      } catch {
        return;
      }
      this.handlers.onRevoked(message.keyId);
      void this.redis.publish(message.ack, '1').catch(() => undefined);
    });
    this.subscribed = true;
  }

  async stop(): Promise<void> {
    this.subscribed = false;
    await this.sub?.quit().catch(() => undefined);
    this.sub = undefined;
  }
}
