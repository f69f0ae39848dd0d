/** A page of webhook deliveries as ListWebhookDeliveries answers it (states are the contract's, job-json.ts). */
import { WEBHOOK_STATES } from '@murmur/contract';
import type { transcription } from '@murmur/proto';
import type { ListedDeliveryRow } from './delivery-store';

/** Each delivery with its kept attempts, oldest first. */
export function presentDeliveries(rows: readonly ListedDeliveryRow[]): transcription.WebhookDeliveryRecord[] {
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
    attempts: r.attempt_list.map((a) => ({
      startedAt: new Date(Math.round(Number(a.started_ms))),
      round: a.round,
      attempt: a.attempt,
      statusCode: a.status_code,
      latencyMs: a.latency_ms,
      error: a.error,
    })),
  }));
}
