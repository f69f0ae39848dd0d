/**
 * @murmur/transcription — audio in, transcript out: ffmpeg decoding, silence chunking, and
 * speech engines behind one interface (pocketsphinx, whisper.cpp, any OpenAI-compatible
 * endpoint), charged through billing by exact duration. main.ts runs it as a process; tests,
 * the gateway's integration tests and the benchmark start it in-process with
 * {@link startTranscriptionService}.
 */
import { startGrpcServer, type Logger, type PromiseClient, type AccessControl } from '@murmur/kit';
import type { billing, transcription } from '@murmur/proto';
import type { SpeechEngine } from './engines/engine';
import { transcriptionHandlers } from './server';
import { TranscriptionService, type BillingPort } from './service';

/**
 * Largest message accepted. Audio arrives in chunks of ≤ 1 MiB; the headroom is for a client
 * that sends bigger ones (memory per call stays bounded by this, not by the file).
 */
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
  });
  const server = await startGrpcServer(
    {
      name: 'transcription',
      access: deps.access,
      log: deps.log,
      services: [transcriptionHandlers(service, deps.uploadIdleMs ? { uploadIdleMs: deps.uploadIdleMs } : {})],
      protoFiles: ['murmur/transcription/v1/transcription.proto'],
      maxReceiveMessageBytes: TRANSCRIPTION_MAX_MESSAGE_BYTES,
    },
    deps.address,
  );
  return { port: server.port, stop: () => server.shutdown() };
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
export { BYTES_PER_SECOND, SAMPLE_RATE, wavHeader } from './pcm';
export { decodeToPcm, spoolUpload, writeWavSlice, UndecodableAudioError, FFMPEG_FORMAT_WHITELIST } from './audio-files';
export { mapInOrder, Semaphore } from './pool';
export { openInstanceSpool, removeDeadSpools, SPOOL_FOLDER, type InstanceSpool } from './spool';
export { decodeAndCut, recognizeChunks, type DecodedAudio, type DecodeOptions, type RecognizeChunksOptions } from './pipeline';
export { isSilent, planRecognition, PIECE_SECONDS, SILENT_PEAK_RMS, type PlanOptions } from './plan';
