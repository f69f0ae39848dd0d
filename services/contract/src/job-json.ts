/**
 * A transcription job's public JSON (POST/GET /api/v1/transcriptions, its SSE events, MCP tasks
 * and webhook event bodies) from the service's message: one rendering for the gateway and the
 * transcription service (which sends it in webhooks), and the one table of job statuses and
 * webhook states both sides read. DESIGN.md §3: snake_case, ISO-8601 UTC,
 * `object`, nulls rather than missing fields.
 */
import { presentSegments, presentSpeakers, presentWords } from './timeline-json';
import { transcription } from '@murmur/proto';
import { ERROR_CODES } from './errors';

function iso(d: Date | undefined): string | null {
  return d ? d.toISOString() : null;
}

/** A job's public statuses, in the order a job moves through them. */
export const JOB_STATUS_NAMES = ['queued', 'processing', 'completed', 'failed', 'canceled'] as const;
export type JobStatusName = (typeof JOB_STATUS_NAMES)[number];

/** A job's public status and its wire value: the one table, read both ways. */
export const JOB_STATUSES: Readonly<Record<JobStatusName, transcription.JobStatus>> = {
  queued: transcription.JobStatus.JOB_STATUS_QUEUED,
  processing: transcription.JobStatus.JOB_STATUS_PROCESSING,
  completed: transcription.JobStatus.JOB_STATUS_COMPLETED,
  failed: transcription.JobStatus.JOB_STATUS_FAILED,
  canceled: transcription.JobStatus.JOB_STATUS_CANCELED,
};
const JOB_STATUS = Object.fromEntries(Object.entries(JOB_STATUSES).map(([name, value]) => [value, name])) as Record<number, JobStatusName>;

/** The public name of a wire status; undefined for UNSPECIFIED (a list filter's "all") or an unknown value. */
export function jobStatusNameOf(status: transcription.JobStatus): JobStatusName | undefined {
  return JOB_STATUS[status];
}

/** A webhook delivery's public state and its wire value. */
export const WEBHOOK_STATES = {
  pending: transcription.WebhookState.WEBHOOK_STATE_PENDING,
  delivered: transcription.WebhookState.WEBHOOK_STATE_DELIVERED,
  failed: transcription.WebhookState.WEBHOOK_STATE_FAILED,
} as const satisfies Record<string, transcription.WebhookState>;
export type WebhookStateName = keyof typeof WEBHOOK_STATES;
const WEBHOOK_STATE = Object.fromEntries(Object.entries(WEBHOOK_STATES).map(([name, value]) => [value, name])) as Record<number, WebhookStateName>;

/** The public name of a wire webhook state; undefined for UNSPECIFIED (a list filter's "all") or an unknown value. */
export function webhookStateNameOf(state: transcription.WebhookState): WebhookStateName | undefined {
  return WEBHOOK_STATE[state];
}

/**
 * A transcription job: its state and progress, and once completed the fields of POST
 * /transcribe's answer, so a client reads one shape either way; with a webhook endpoint, the
 * delivery of its end.
 */
export function presentJob(j: transcription.TranscriptionJob, options: { words?: boolean } = {}) {
  const r = j.status === transcription.JobStatus.JOB_STATUS_COMPLETED ? j.result : undefined;
  const failure = j.error ? errorObjectOf(j.error) : null;
  return {
    id: j.id,
    object: 'transcription' as const,
    status: jobStatusNameOf(j.status) ?? 'queued',
    progress: j.progress,
    duration_seconds: j.durationSeconds,
    processed_seconds: j.processedSeconds,
    created_at: iso(j.createdAt),
    started_at: iso(j.startedAt),
    finished_at: iso(j.finishedAt),
    error: failure,
    credits_reserved: j.creditsReserved,
    text: r ? r.text : null,
    language: r ? r.language || null : j.language || null,
    language_confidence: r ? (r.languageConfidence ?? null) : null,
    segments: r ? presentSegments(r.segments) : null,
    speakers: r ? presentSpeakers(r.speakers) : null,
    ...(options.words ? { words: r ? presentWords(r.words, r.speakers) : null } : {}),
    model: r ? r.model : null,
    credits_charged: r ? r.creditsCharged : null,
    recording_id: j.recordingId || null,
    webhook_url: j.webhookUrl || null,
    webhook: j.webhook ? presentDelivery(j.webhook) : null,
  };
}

function presentDelivery(w: transcription.WebhookDelivery) {
  return {
    id: w.id,
    event: w.event,
    state: WEBHOOK_STATE[w.state] ?? 'pending',
    attempts: w.attempts,
    last_status_code: w.lastStatusCode || null,
    last_error: w.lastError || null,
    next_attempt_at: iso(w.nextAttemptAt),
    delivered_at: iso(w.deliveredAt),
  };
}

/** A failed job's error as the contract's error object (type from the code, as every error body has it). */
function errorObjectOf(e: transcription.JobError) {
  const known = (ERROR_CODES as Record<string, { type: string } | undefined>)[e.code];
  return { type: known?.type ?? 'api_error', code: e.code, message: e.message, param: e.param || null };
}
