/** What the job code works with, and the steps that end a job (shared by cancel, the worker and maintenance). */
import { billing } from '@murmur/proto';
import type { Logger } from '@murmur/kit';
import { recordingIdOf, takeBackRecording, type LibraryPort } from '../saving';
import type { BillingPort, TranscriptionService } from '../service';
import type { AudioStore } from './audio-store';
import type { JobRow, JobStore } from './job-store';
import type { JobQueue } from './queue';
import type { Webhooks } from '../webhooks/webhooks';

/** The library RPCs a job uses: the folder check at submission, the recording at completion (saving.ts). */
export type { LibraryPort };

/**
 * How long a job's credits stay held without a renewal: billing's longest hold (24 h). The
 * worker renews it while it runs; a job still queued after a day of outage fails, charging nothing.
 */
export const JOB_HOLD_SECONDS = 24 * 60 * 60;

export interface JobDeps {
  store: JobStore;
  queue: JobQueue;
  audio: AudioStore;
  billing: BillingPort;
  library: LibraryPort;
  transcriber: TranscriptionService;
  log: Logger;
  /** Where jobs' ends are delivered (the owner's endpoints and secrets). */
  webhooks: Webhooks;
  /** Parent of each submission's and attempt's temp folder (the instance spool). */
  spoolDir: string;
  ffprobePath?: string;
}

/** Returns a job's credits; false when billing could not be reached (maintenance retries it). */
export async function releaseHold(deps: Pick<JobDeps, 'billing' | 'log'>, row: Pick<JobRow, 'id' | 'owner_id' | 'reservation_id'>, reason: string): Promise<boolean> {
  try {
    const { reservation } = await deps.billing.release({ reservationId: row.reservation_id, userId: row.owner_id, reason });
    deps.log.info({ job_id: row.id, reservation_id: row.reservation_id, reason, state: reservation?.state }, 'job credits released');
    return true;
  } catch (err) {
    deps.log.warn({ job_id: row.id, reservation_id: row.reservation_id, err: (err as Error).message }, 'job credits not released yet; maintenance retries');
    return false;
  }
}

/**
 * Takes back the recording an attempt of an uncharged job may have saved (canceled or failed
 * after its recording was stored but before its charge): a transcript is never kept free of
 * charge. Best effort: a failure is logged.
 */
export async function dropRecording(deps: Pick<JobDeps, 'library' | 'log'>, row: Pick<JobRow, 'id' | 'owner_id' | 'save' | 'recording_id'>): Promise<void> {
  if (!row.save) return;
  await takeBackRecording(deps.library, deps.log, row.owner_id, row.recording_id || recordingIdOf(row.id), { job_id: row.id });
}

/** Deletes an ended job's audio; a failure is left to the sweeper. */
export async function dropAudio(deps: Pick<JobDeps, 'audio' | 'store' | 'log'>, row: Pick<JobRow, 'id' | 'audio_key'>): Promise<void> {
  if (!row.audio_key) return;
  try {
    await deps.audio.delete(row.audio_key);
    await deps.store.audioDeleted(row.id);
  } catch (err) {
    deps.log.warn({ job_id: row.id, err: (err as Error).message }, 'job audio not deleted yet; the sweeper retries');
  }
}

export const HELD = billing.ReservationState.RESERVATION_STATE_HELD;
export const COMMITTED = billing.ReservationState.RESERVATION_STATE_COMMITTED;
