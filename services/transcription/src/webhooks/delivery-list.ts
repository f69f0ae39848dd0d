/** A page of webhook deliveries as ListWebhookDeliveries answers it (states are the contract's, job-json.ts). */
import { WEBHOOK_STATES } from '@murmur/contract';
import type { transcription } from '@murmur/proto';
import type { AttemptRow, ListedDeliveryRow } from './delivery-store';

/** Each delivery with its own attempts (`attempts` as the store reads them: grouped by delivery, oldest first). */
export function presentDeliveries(rows: readonly ListedDeliveryRow[], attempts: readonly AttemptRow[]): transcription.WebhookDeliveryRecord[] {
  const byDelivery = new Map<string, transcription.WebhookAttempt[]>();
  for (const a of attempts) {
    const list = byDelivery.get(a.delivery_id) ?? [];
    list.push({ startedAt: a.started_at, round: a.round, attempt: a.attempt, statusCode: a.status_code, latencyMs: a.latency_ms, error: a.error });
    byDelivery.set(a.delivery_id, list);
  }
  return rows.map((r) => ({
    id: r.id,
    jobId: r.job_id,
    event: r.event,
    url: r.url,
    state: WEBHOOK_STATES[r.state],
    createdAt: r.created_at,
    deliveredAt: r.delivered_at ?? undefined,
    nextAttemptAt: r.next_attempt_at ?? undefined,
    attemptCount: r.attempts,
    lastStatusCode: r.last_status_code,
    attempts: byDelivery.get(r.id) ?? [],
  }));
}
