/**
 * The job queue as operators see it (decision 0041): live jobs by state (`queued`, `processing`)
 * and the age of the oldest queued job, read from the job store when Prometheus scrapes — one
 * query on the live-jobs index (JobStore.depth, the figure maintenance logs), nothing kept up to
 * date on the hot path. Ended jobs are not counted here: their states grow without bound and
 * would need a scan. Every replica reports the same database's view: a dashboard takes `max`, not
 * `sum`. A scrape whose query fails drops both series (absent, not stale) rather than failing
 * the whole scrape.
 */
import { defineGauge, untracedUnlessInCall, type Logger } from '@murmur/kit';
import type { QueueDepth } from './maintenance';

/** Where the gauges read the queue: the job store of the transcription server started last in this process. */
let source: { depth(): Promise<QueueDepth>; log: Logger } | undefined;

/** The read under way: both gauges of one scrape share it (one query). */
let inFlight: Promise<QueueDepth | undefined> | undefined;

function depthOnce(): Promise<QueueDepth | undefined> {
  inFlight ??= readDepth().finally(() => (inFlight = undefined));
  return inFlight;
}

async function readDepth(): Promise<QueueDepth | undefined> {
  if (!source) return undefined;
  try {
    return await untracedUnlessInCall(() => source!.depth());
  } catch (err) {
    source.log.warn({ err: (err as Error).message }, 'job queue depth could not be read for metrics');
    return undefined;
  }
}

defineGauge('murmur_transcription_jobs', 'Live transcription jobs by state (queued, processing), as the database holds them.', ['state'], async function collect() {
  const depth = await depthOnce();
  this.reset();
  if (!depth) return;
  this.labels('queued').set(depth.queued);
  this.labels('processing').set(depth.processing);
});

defineGauge('murmur_transcription_oldest_queued_job_age_seconds', 'Seconds the oldest queued transcription job has waited; 0 when none waits.', [], async function collect() {
  const depth = await depthOnce();
  this.reset();
  if (depth) this.set(depth.oldestQueuedSeconds);
});

/** Makes `store` the one the gauges read; returns how to stop (a stopped server's store is not read). */
export function measureJobQueue(store: { depth(): Promise<QueueDepth> }, log: Logger): () => void {
  const mine = { depth: () => store.depth(), log };
  source = mine;
  return () => {
    if (source === mine) source = undefined;
  };
}
