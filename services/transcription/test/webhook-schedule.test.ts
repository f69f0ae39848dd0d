/**
 * The webhook retry schedule (Standard Webhooks' suggestion) and signatures, without a network:
 * 8 attempts spread over more than a day, each wait within ±10 % of its step, the round over
 * after the eighth; fake timers run a receiver that is down for 25 hours and comes back before
 * the last attempt. Signatures — one secret, and two during a rotation — verified by the
 * `standardwebhooks` package, not by our code.
 */
import { Webhook } from 'standardwebhooks';
import { nextAttemptDelay, WEBHOOK_RETRY_SECONDS } from '../src/webhooks/schedule';
import { newSecret, webhookHeaders } from '../src/webhooks/signature';

describe('webhook retry schedule', () => {
  it('tries 8 times over more than 24 hours, then stops', () => {
    const mid = () => 0.5;
    const waits: number[] = [];
    for (let failed = 1; ; failed++) {
      const wait = nextAttemptDelay(failed, WEBHOOK_RETRY_SECONDS, mid);
      if (wait === null) break;
      waits.push(wait);
    }
    expect(waits).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
    expect(waits.length + 1).toBe(8);
    expect(waits.reduce((a, b) => a + b, 0)).toBeGreaterThan(24 * 3600);
  });

  it('jitters each wait by at most ±10 %', () => {
    for (const r of [0, 0.25, 0.999]) {
      for (let failed = 1; failed <= 7; failed++) {
        const base = WEBHOOK_RETRY_SECONDS[failed - 1]!;
        const wait = nextAttemptDelay(failed, WEBHOOK_RETRY_SECONDS, () => r)!;
        expect(wait).toBeGreaterThanOrEqual(base * 0.9);
        expect(wait).toBeLessThan(base * 1.1);
      }
    }
    const spread = new Set(Array.from({ length: 20 }, () => nextAttemptDelay(3)));
    expect(spread.size).toBeGreaterThan(1);
  });

  it('reaches a receiver that is down for 25 hours (fake timers)', async () => {
    jest.useFakeTimers({ now: new Date('2026-11-26T00:00:00Z') });
    try {
      const start = Date.now();
      const upAt = start + 25 * 3600_000;
      const attempts: number[] = [];
      let delivered = false;
      const attempt = (failedBefore: number): void => {
        attempts.push(Date.now() - start);
        if (Date.now() >= upAt) return void (delivered = true);
        const wait = nextAttemptDelay(failedBefore + 1);
        if (wait !== null) setTimeout(() => attempt(failedBefore + 1), wait * 1000);
      };
      attempt(0);
      await jest.advanceTimersByTimeAsync(30 * 3600_000);
      expect(delivered).toBe(true);
      expect(attempts.length).toBe(8);
    } finally {
      jest.useRealTimers();
    }
  });
});

describe('webhook signatures', () => {
  const body = JSON.stringify({ type: 'transcription.completed', data: { id: 'trn_x' } });

  it('verify with the standardwebhooks package', () => {
    const secret = newSecret();
    expect(secret).toMatch(/^whsec_/);
    const headers = webhookHeaders([secret], 'msg_1', new Date(), body);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(secret).verify(body, { ...headers, 'webhook-id': 'msg_2' })).toThrow();
  });

  it('carry one signature per secret during a rotation, each verifying', () => {
    const [next, previous] = [newSecret(), newSecret()];
    const headers = webhookHeaders([next, previous], 'msg_1', new Date(), body);
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(new Webhook(next).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(previous).verify(body, headers)).toEqual(JSON.parse(body));
  });
});
