/**
 * Webhook deliveries as operators see them (decision 0041): every attempt, and every failed one by
 * what failed — the receiver's status class (`4xx`, `5xx`, another non-2xx) or `network` (no
 * answer: refused, timed out, an address the policy refused, no signing secret). Never the URL:
 * it is a user's.
 */
import { counterChildren, defineCounter } from '@murmur/kit';

const attempts = counterChildren(defineCounter('murmur_webhook_attempts_total', 'Webhook delivery attempts, by outcome (delivered, failed).', ['outcome']), 1);
const failures = counterChildren(defineCounter('murmur_webhook_failures_total', 'Failed webhook delivery attempts, by reason (4xx, 5xx, other_status, network).', ['reason']), 1);

/** Why an attempt failed, as a label: the receiver's status class, or `network` when there was no answer. */
function reasonOf(status: number): string {
  if (status >= 400 && status < 500) return '4xx';
  if (status >= 500 && status < 600) return '5xx';
  return status > 0 ? 'other_status' : 'network';
}

/** Counts one attempt's outcome (webhooks.ts record()). */
export function countWebhookAttempt(outcome: { ok: boolean; status: number }): void {
  attempts.get(outcome.ok ? 'delivered' : 'failed').inc();
  if (!outcome.ok) failures.get(reasonOf(outcome.status)).inc();
}
