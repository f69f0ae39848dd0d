/**
 * What every replica does now and then, so nothing a crash interrupted is left behind:
 *  - ended jobs whose credits were not released (billing was away) are released again, and
 *    their audio deleted;
 *  - audio in the store that belongs to no live job (a submission or cancel cut short) is
 *    deleted once it is older than a submission can take to commit;
 *  - the queue's depth and the age of its oldest job are logged (docs/operations.md).
 */
import { untracedUnlessInCall } from '@murmur/kit';
import { dropAudio, releaseHold, type JobDeps } from './deps';

/** Audio younger than this may belong to a submission still committing its job. */
export const ORPHAN_GRACE_MS = 10 * 60 * 1000;
export const DEFAULT_MAINTENANCE_INTERVAL_MS = 60_000;

export interface QueueDepth {
  queued: number;
  processing: number;
  oldestQueuedSeconds: number;
}

export async function maintainJobs(deps: JobDeps, now = Date.now(), graceMs = ORPHAN_GRACE_MS): Promise<{ released: number; orphans: number; depth: QueueDepth }> {
  let released = 0;
  for (const row of await deps.store.unsettled()) {
    if (row.hold_open && row.status !== 'completed' && (await releaseHold(deps, row, `${row.status} (retried)`))) {
      await deps.store.holdClosed(row.id);
      released++;
    }
    await dropAudio(deps, row);
  }
  const stored = await deps.audio.list();
  const old = stored.filter((s) => now - s.storedAt.getTime() > graceMs).map((s) => s.key);
  const live = await deps.store.liveAmong(old);
  let orphans = 0;
  for (const key of old) {
    if (live.has(key)) continue;
    await deps.audio.delete(key);
    orphans++;
  }
  const depth = await deps.store.depth();
  deps.log.info({ queued: depth.queued, processing: depth.processing, oldest_queued_seconds: Math.round(depth.oldestQueuedSeconds), orphans_deleted: orphans, holds_released: released }, 'job queue depth');
  return { released, orphans, depth };
}

/** Runs {@link maintainJobs} at start and every `intervalMs`; stop() ends it. */
export function startMaintenance(deps: JobDeps, intervalMs = DEFAULT_MAINTENANCE_INTERVAL_MS): { stop(): void } {
  let running = false;
  const tick = () => {
    if (running) return;
    running = true;
    untracedUnlessInCall(() => maintainJobs(deps))
      .catch((err: unknown) => deps.log.warn({ err: (err as Error).message }, 'job maintenance failed; next round retries'))
      .finally(() => (running = false));
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
