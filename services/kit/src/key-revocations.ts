/**
 * Revocations pushed to caches outside the auth service (the gateways' verified-key caches)
 * over Redis pub/sub, acknowledged: auth publishes the revoked key id and waits until every
 * subscribed cache has dropped it (bounded by a timeout), so a revoked key fails on the very
 * next request without any cache waiting for a TTL. A cache whose subscription is down must
 * not serve from memory (see {@link RevocationListener.live}).
 */
import { randomBytes } from 'node:crypto';
import { MurmurError } from '@murmur/contract';
import type { Logger } from './log';
import { redisCall, type Redis } from './redis';

export const REVOCATION_CHANNEL = 'murmur:auth:key-revoked';

interface RevocationMessage {
  keyId: string;
  ack: string;
}

/**
 * Publishes a revocation and resolves once every cache subscribed at that moment has
 * acknowledged it, or after `timeoutMs` (then `acked < notified`; the caller logs it).
 * With Redis down it throws service_unavailable at once: no cache is live then (each one
 * listens on this same Redis), and the stored revocation is safe to retry.
 */
export async function publishRevocation(redis: Redis, keyId: string, timeoutMs = 2_000): Promise<{ notified: number; acked: number }> {
  const ack = `${REVOCATION_CHANNEL}:ack:${randomBytes(8).toString('hex')}`;
  const unavailable = () =>
    new MurmurError('service_unavailable', 'The key is revoked, but the gateways could not be told. Retry the revocation in a few seconds.');
  if (!redis.isReady) throw unavailable();
  const sub = redis.duplicate();
  // Without its own listener an 'error' of the duplicate (Redis dying meanwhile) would crash the process.
  sub.on('error', () => undefined);
  try {
    // connect() retries forever while Redis is down; the revocation must not wait for it.
    await redisCall(sub.connect(), timeoutMs).catch(() => {
      throw unavailable();
    });
    let acked = 0;
    let expected = Infinity;
    let done!: () => void;
    const allAcked = new Promise<void>((resolve) => (done = resolve));
    await sub.subscribe(ack, () => {
      acked += 1;
      if (acked >= expected) done();
    });
    const message: RevocationMessage = { keyId, ack };
    const notified = await redisCall(redis.publish(REVOCATION_CHANNEL, JSON.stringify(message)), timeoutMs).catch(() => {
      throw unavailable();
    });
    expected = notified;
    if (acked >= expected) done();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([allAcked, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
    return { notified, acked: Math.min(acked, notified) };
  } finally {
    sub.destroy();
  }
}

/**
 * A cache's end of the channel: calls `onRevoked` for each revoked key id, then acknowledges.
 * `live` is true only while subscribed; on any break the cache is told to forget everything
 * (`onReset`) since revocations may have been missed, and again when the channel is back
 * (node-redis reconnects and resubscribes by itself before it reports 'ready').
 */
export class RevocationListener {
  private sub: Redis | undefined;
  private subscribed = false;
  private started = false;

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
    sub.on('error', () => {
      if (!sub.isReady) lost();
    });
    sub.on('end', lost);
    sub.on('reconnecting', lost);
    sub.on('ready', () => {
      // node-redis resubscribed before 'ready'; serve from the cache again only now, and start
      // it empty so nothing verified before the break is kept.
      if (this.sub !== sub || !this.started || !sub.isReady) return;
      this.handlers.onReset();
      this.subscribed = true;
      this.log?.info('revocation channel back: verified-key cache on');
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
      void redisCall(this.redis.publish(message.ack, '1')).catch(() => undefined);
    });
    this.started = true;
    this.subscribed = true;
  }

  async stop(): Promise<void> {
    this.subscribed = false;
    this.started = false;
    const sub = this.sub;
    this.sub = undefined;
    if (sub?.isReady) await sub.quit().catch(() => undefined);
    else sub?.destroy();
  }
}
