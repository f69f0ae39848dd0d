/** A job row as the RPCs answer it (transcription.TranscriptionJob); the status tables are the contract's (job-json.ts). */
import { JOB_STATUSES, WEBHOOK_STATES } from '@murmur/contract';
import type { transcription } from '@murmur/proto';
import type { JobRow } from './job-store';
import { wireWordsFromBase64 } from './job-words';

export function presentJob(row: JobRow): transcription.TranscriptionJob {
  const duration = row.duration_seconds;
  const processed = row.status === 'completed' ? duration : Math.min(row.processed_seconds, duration);
  const r = row.result;
  return {
    id: row.id,
    userId: row.owner_id,
    status: JOB_STATUSES[row.status],
    progress: duration > 0 ? Math.round((processed / duration) * 1000) / 1000 : 0,
    durationSeconds: Math.round(duration * 1000) / 1000,
    processedSeconds: Math.round(processed * 1000) / 1000,
    createdAt: row.created_at,
    startedAt: row.started_at ?? undefined,
    finishedAt: row.finished_at ?? undefined,
    error: row.error ? { code: row.error.code, message: row.error.message, param: row.error.param ?? '' } : undefined,
    result: r
      ? {
          id: r.id,
          text: r.text,
          language: r.language,
          durationSeconds: r.duration_seconds,
          segments: r.segments.map((s) => ({ startSeconds: s.start, endSeconds: s.end, text: s.text, ...(s.speaker ? { speaker: s.speaker } : {}) })),
          model: r.model,
          creditsCharged: r.credits_charged,
          recordingId: row.recording_id,
          words: wireWordsFromBase64(r.words),
          speakers: r.speakers ?? [],
        }
      : undefined,
    recordingId: row.recording_id,
    language: row.language,
    creditsReserved: row.credits_reserved,
    webhookUrl: row.webhook_url,
    webhook: row.webhook
      ? {
          id: row.webhook.id,
          event: row.webhook.event,
          state: WEBHOOK_STATES[row.webhook.state],
          attempts: row.webhook.attempts,
          lastStatusCode: row.webhook.last_status_code,
          lastError: row.webhook.last_error,
          nextAttemptAt: row.webhook.next_attempt_at ? new Date(row.webhook.next_attempt_at) : undefined,
          deliveredAt: row.webhook.delivered_at ? new Date(row.webhook.delivered_at) : undefined,
        }
      : undefined,
  };
}
