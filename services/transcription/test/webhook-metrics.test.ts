/** Webhook attempts as operators count them: every attempt by outcome, every failure by what failed — never the URL. */
import { metricsRegistry } from '@murmur/kit';
import { parseExposition, sampleSum } from '@murmur/kit/testing';
import { countWebhookAttempt } from '../src/webhooks/webhook-metrics';

const read = async () => parseExposition(await metricsRegistry().metrics());

describe('webhook metrics', () => {
  it.each([
    [{ ok: true, status: 204 }, 'delivered', undefined],
    [{ ok: false, status: 410 }, 'failed', '4xx'],
    [{ ok: false, status: 503 }, 'failed', '5xx'],
    [{ ok: false, status: 302 }, 'failed', 'other_status'],
    [{ ok: false, status: 0 }, 'failed', 'network'],
  ] as const)('counts %j as %s (%s)', async (outcome, counted, reason) => {
    const before = await read();
    countWebhookAttempt(outcome);
    const after = await read();
    const moved = (name: string, labels: Record<string, string> = {}) => sampleSum(after, name, labels) - sampleSum(before, name, labels);
    expect(moved('murmur_webhook_attempts_total', { outcome: counted })).toBe(1);
    expect(moved('murmur_webhook_attempts_total')).toBe(1);
    expect(moved('murmur_webhook_failures_total')).toBe(reason ? 1 : 0);
    if (reason) expect(moved('murmur_webhook_failures_total', { reason })).toBe(1);
  });
});
