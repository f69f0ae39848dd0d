/**
 * @murmur/transcription — audio in, transcript out: ffmpeg decoding, silence chunking, and
 * speech engines behind one interface (pocketsphinx, whisper.cpp, any OpenAI-compatible
 * endpoint), charged through billing by exact duration. main.ts runs it as a process; tests,
 * the gateway's integration tests and the benchmark start it in-process with
 * {@link startTranscriptionService}.
 */
import type { DiarizationPort } from './diarization/port';
import { DEFAULT_HOLD_LEASE_SECONDS, DEFAULT_OUTBOUND_POLICY, startGrpcServer, untracedUnlessInCall, type Database, type Logger, type PromiseClient, type AccessControl } from '@murmur/kit';
import { sealStoredSecrets, Webhooks, type WebhookOptions } from './webhooks/webhooks';
import type { SecretSealer } from './webhooks/secret-keys';
import { CallerLimits, MemoryLeaseSet, type LeaseSet } from './caller-limits';
import type { AudioStore } from './jobs/audio-store';
import type { LibraryPort } from './saving';
import { TranscriptionJobs } from './jobs/jobs';
import { JobStore } from './jobs/job-store';
import { startMaintenance } from './jobs/maintenance';
import { measureJobQueue } from './jobs/job-metrics';
import { DEFAULT_QUEUE_SETTINGS, JobQueue, type QueueSettings } from './jobs/queue';
import { JobWorker } from './jobs/worker';
import type { billing, transcription } from '@murmur/proto';
import type { SpeechEngine } from './engines/engine';
import { transcriptionHandlers } from './server';
import { LiveSessions } from './live/live-session';
import { TranscriptionService, type BillingPort } from './service';
import { ffprobeNextTo } from './jobs/probe';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * Largest message accepted. Audio arrives in chunks of ≤ 1 MiB; the headroom is for a client
 * that sends bigger ones (memory per call stays bounded by this, not by the file).
 */
/** The service's migrations (the jobs tables). */
export const TRANSCRIPTION_MIGRATIONS_DIR = path.join(__dirname, '..', 'migrations');

export const TRANSCRIPTION_MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

export interface TranscriptionServiceDeps {
  /** Who may call this service: its workload's access control (kit access/), checked on every RPC. */
  access: AccessControl;
  log: Logger;
  /** "host:port"; port 0 picks a free one. */
  address: string;
  billing: BillingPort;
  engine: SpeechEngine;
  /** Parent folder of each call's temp files (default the OS temp dir). */
  tmpDir?: string;
  /** Chunks recognised at once, across all calls (default the number of CPUs). */
  concurrency?: number;
  /** What ListEngines reports (default: the active engine only); main passes {@link probeEngines}. */
  engines?: transcription.Engine[];
  /** An upload silent for this long is abandoned (default 2 minutes). */
  uploadIdleMs?: number;
  /** The ffmpeg binary (default `ffmpeg` on PATH). */
  ffmpegPath?: string;
  /** Longest decoded audio accepted, in seconds (default 12 hours). */
  maxAudioSeconds?: number;
  /** Lease of each credit hold, renewed while the call runs (default 30 s). */
  leaseSeconds?: number;
  /** Transcription jobs (SubmitTranscription and the rest): without this, those RPCs answer service_unavailable. */
  jobs?: JobsDeps;
  /** Where transcripts are saved (save: true on Transcribe); default the jobs' library client. */
  library?: LibraryPort;
  /** Who finds speakers (`diarize`); without it `diarize` is refused naming the missing models. */
  diarization?: DiarizationPort;
}

/** What the job RPCs and this replica's worker need. */
export interface JobsDeps {
  /** The service's own schema (migrations/): jobs, their chunks, and pg-boss's queue. */
  db: Database;
  audio: AudioStore;
  library: LibraryPort;
  /** MURMUR_CURSOR_SECRET (page cursors of ListTranscriptions and ListWebhookDeliveries). */
  cursorSecret: string;
  /** Parent of the job's temp folders (default the service's tmpDir, else the OS temp dir). */
  spoolDir?: string;
  queue?: Partial<QueueSettings>;
  /** Take jobs from the queue in this process (default true). */
  work?: boolean;
  /** How often maintenance runs (default 60 s). */
  maintenanceIntervalMs?: number;
  /** Where webhook endpoints may be and how deliveries are retried (default: public https addresses, the standard schedule). */
  webhooks?: Partial<Omit<WebhookOptions, 'sealer' | 'limits' | 'cursorSecret'>>;
  /** Seals the owners' webhook signing secrets at rest (MURMUR_WEBHOOK_SECRET_KEY). */
  webhookSecrets: SecretSealer;
  /** Where the per-user caps count (caller-limits.ts): Redis across replicas; default in-process. */
  leases?: LeaseSet;
}

/** A started transcription server: its port and how to stop it (the engine stays the caller's). */
export interface RunningTranscriptionService {
  port: number;
  stop(): Promise<void>;
}

/** Starts the TranscriptionService gRPC server (with health and reflection). */
export async function startTranscriptionService(deps: TranscriptionServiceDeps): Promise<RunningTranscriptionService> {
  const service = new TranscriptionService({
    billing: deps.billing,
    engine: deps.engine,
    log: deps.log,
    ...(deps.tmpDir ? { tmpDir: deps.tmpDir } : {}),
    ...(deps.concurrency ? { concurrency: deps.concurrency } : {}),
    ...(deps.engines ? { engines: deps.engines } : {}),
    ...(deps.ffmpegPath ? { ffmpegPath: deps.ffmpegPath } : {}),
    ...(deps.maxAudioSeconds ? { maxAudioSeconds: deps.maxAudioSeconds } : {}),
    ...(deps.leaseSeconds ? { leaseSeconds: deps.leaseSeconds } : {}),
    ...((deps.library ?? deps.jobs?.library) ? { library: deps.library ?? deps.jobs!.library } : {}),
    ...(deps.diarization ? { diarization: deps.diarization } : {}),
  });
  // One count of per-user caps (watchers, webhook retries, live streams) for the whole process.
  const limits = new CallerLimits(deps.jobs?.leases ?? new MemoryLeaseSet());
  const jobs = deps.jobs ? await startJobs(service, deps, deps.jobs, limits) : undefined;
  const library = deps.library ?? deps.jobs?.library;
  const live = new LiveSessions({
    billing: deps.billing,
    engine: deps.engine,
    limits,
    log: deps.log,
    model: service.model,
    leaseSeconds: deps.leaseSeconds ?? DEFAULT_HOLD_LEASE_SECONDS,
    ...(library ? { library } : {}),
    ...(deps.ffmpegPath ? { ffmpegPath: deps.ffmpegPath } : {}),
  });
  const server = await startGrpcServer(
    {
      name: 'transcription',
      access: deps.access,
      log: deps.log,
      services: [transcriptionHandlers(service, { ...(deps.uploadIdleMs ? { uploadIdleMs: deps.uploadIdleMs } : {}), ...(jobs ? { jobs: jobs.api, webhooks: jobs.webhooks } : {}), live })],
      protoFiles: ['murmur/transcription/v1/transcription.proto'],
      maxReceiveMessageBytes: TRANSCRIPTION_MAX_MESSAGE_BYTES,
    },
    deps.address,
  );
  return {
    port: server.port,
    async stop() {
      await jobs?.stop();
      await server.shutdown();
    },
  };
}

/** Opens the queue, and unless told otherwise starts this replica's worker and maintenance. */
async function startJobs(service: TranscriptionService, deps: TranscriptionServiceDeps, j: JobsDeps, limits: CallerLimits): Promise<{ api: TranscriptionJobs; webhooks: Webhooks; stop(): Promise<void> }> {
  const settings = { ...DEFAULT_QUEUE_SETTINGS, ...j.queue };
  const queue = await JobQueue.open(j.db, settings, deps.log);
  const webhooks = new Webhooks(j.db, queue, deps.log, { policy: DEFAULT_OUTBOUND_POLICY, ...j.webhooks, sealer: j.webhookSecrets, limits, cursorSecret: j.cursorSecret });
  // Secrets written before they were sealed, or under a key rotated out: sealed now, before
  // serving. Start-up work, no one's call: it starts no trace of its own (kit background-work.ts).
  await untracedUnlessInCall(() => sealStoredSecrets(j.db, j.webhookSecrets, deps.log));
  const store = new JobStore(j.db, (tx, row) => webhooks.onJobEnded(tx, row));
  webhooks.store = store;
  const jobDeps = {
    store,
    queue,
    webhooks,
    audio: j.audio,
    billing: deps.billing,
    library: j.library,
    transcriber: service,
    log: deps.log,
    spoolDir: j.spoolDir ?? deps.tmpDir ?? os.tmpdir(),
    ...(deps.ffmpegPath ? { ffprobePath: ffprobeNextTo(deps.ffmpegPath) } : {}),
  };
  const api = new TranscriptionJobs(jobDeps, j.cursorSecret, limits);
  // Jobs by state and the oldest queued job's age, read on each scrape (jobs/job-metrics.ts).
  const unmeasure = measureJobQueue(store, deps.log);
  let maintenance: { stop(): void } | undefined;
  if (j.work !== false) {
    const worker = new JobWorker(jobDeps);
    await queue.work((m, a) => worker.run(m, a), (m) => worker.dead(m));
    await queue.workWebhooks((id) => webhooks.deliver(id));
    maintenance = startMaintenance(jobDeps, j.maintenanceIntervalMs);
  }
  return {
    api,
    webhooks,
    async stop() {
      unmeasure();
      maintenance?.stop();
      await queue.stop();
    },
  };
}

export { TranscriptionService, audioLimitOf, DEFAULT_MAX_AUDIO_SECONDS, type BillingPort, type TranscriptionServiceOptions } from './service';
export { EngineError, type Recognition, type RecognizeOptions, type SpeechEngine } from './engines/engine';
export { createPocketsphinxEngine, DEBIAN_POCKETSPHINX_MODEL_DIR, type PocketsphinxOptions } from './engines/pocketsphinx';
export { createWhisperEngine, type WhisperOptions } from './engines/whisper';
export { createOpenAiEngine, type OpenAiEngineOptions } from './engines/openai';
export { createEngineFromConfig, findWhisperModel, probeEngines, transcriptionConfigSchema, type TranscriptionConfig } from './config';
export { SilenceChunker, planChunks, type ChunkRange, type ChunkerOptions } from './chunker';
export { stitchChunks, type TimedSegment, type ChunkTranscript } from './stitch';
export { wordErrorRate, normalizeWords, type WerResult } from './wer';
export { fetchModel, KNOWN_MODELS, type FetchModelOptions } from './models';
export {
  assignSpeakers,
  createDiarizer,
  DiarizationError,
  diarizationModelsOf,
  DIARIZATION_FETCH_COMMAND,
  DIARIZATION_SAMPLE_RATE,
  type DiarizationModels,
  type Diarizer,
  type DiarizerOptions,
  type DiarizeOptions,
  type SpeakerTurn,
  diarizationPort,
  type DiarizationPort,
} from './diarization';
export { fetchDiarizationModels } from './diarization/fetch-models';
export { BYTES_PER_SECOND, SAMPLE_RATE, wavHeader } from './pcm';
export { decodeToPcm, spoolUpload, writeWavSlice, UndecodableAudioError, FFMPEG_FORMAT_WHITELIST } from './audio-files';
export { mapInOrder, Semaphore } from './pool';
export { openInstanceSpool, removeDeadSpools, SPOOL_FOLDER, type InstanceSpool } from './spool';
export { decodeAndCut, recognizeChunks, type DecodedAudio, type DecodeOptions, type RecognizeChunksOptions } from './pipeline';
export { FileAudioStore, type AudioStore } from './jobs/audio-store';
export { S3AudioStore, type S3AudioStoreOptions } from './jobs/s3-audio-store';
export { JobQueue, DEFAULT_QUEUE_SETTINGS, JOB_QUEUE, queueSchemaOf, type QueueSettings } from './jobs/queue';
export { JobStore, type JobRow } from './jobs/job-store';
export { maintainJobs } from './jobs/maintenance';
export { JOB_HOLD_SECONDS } from './jobs/deps';
export type { LibraryPort } from './saving';
export { newSecretKeyEntry, parseSecretKeys, SecretSealer, type SecretKey } from './webhooks/secret-keys';
export { sealStoredSecrets } from './webhooks/webhooks';
export { CallerLimits, MemoryLeaseSet, RedisLeaseSet, WATCH_LEASE_MS, type LeaseSet } from './caller-limits';
export { isSilent, planRecognition, PIECE_SECONDS, SILENT_PEAK_RMS, type PlanOptions } from './plan';
export { redactTimeline, findPii, type RedactionResult } from './redaction/redact-timeline';
export { DETECTORS, type Detector } from './redaction/detectors';
