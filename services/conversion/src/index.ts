/**
 * @murmur/conversion — transcripts into artifacts (summary, email, spreadsheet, action items,
 * meeting notes, key points) with a local, llama or OpenAI-compatible engine, charged through
 * billing and stored through library. main.ts runs it as a process; tests, the gateway's
 * integration tests and the bench start it in-process with {@link startConversionService}.
 */
import { startGrpcServer, type Clock, type Logger, type AccessControl } from '@murmur/kit';
import type { ConversionEngine } from './engines/engine';
import { conversionHandlers } from './server';
import { ConversionService, type BillingClient, type LibraryClient } from './service';

/**
 * Largest request accepted: a whole transcript (the largest plan allows 2,000,000 characters,
 * up to 8 MB of UTF-8) with room to spare, so an over-limit transcript gets the plan's
 * invalid_request rather than a transport error.
 */
export const CONVERSION_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** What the conversion service needs from its host process (main.ts or a test). */
export interface ConversionServiceDeps {
  /** Who may call this service: its workload's access control (kit access/), checked on every RPC. */
  access: AccessControl;
  log: Logger;
  /** "host:port"; port 0 picks a free one. */
  address: string;
  /** Billing client (GetUsage, Reserve, Commit, Release); the caller owns and closes it. */
  billing: BillingClient;
  /** Library client (GetRecording, AddArtifact); the caller owns and closes it. */
  library: LibraryClient;
  /** The engine; the caller owns it (and calls its `close`). */
  engine: ConversionEngine;
  clock?: Clock;
  /** Longest one conversion may run (MURMUR_CONVERSION_TIMEOUT_MS); 120 s by default. */
  engineTimeoutMs?: number;
  /** Lease of each credit hold, renewed while the conversion runs (MURMUR_HOLD_LEASE_SECONDS; default 30 s). */
  leaseSeconds?: number;
}

/** A started conversion server: its port (useful with port 0) and how to stop it. */
export interface RunningConversionService {
  port: number;
  stop(): Promise<void>;
}

/** Starts the ConversionService gRPC server (with health and reflection). */
export async function startConversionService(deps: ConversionServiceDeps): Promise<RunningConversionService> {
  const service = new ConversionService({
    billing: deps.billing,
    library: deps.library,
    engine: deps.engine,
    log: deps.log,
    ...(deps.clock ? { clock: deps.clock } : {}),
    ...(deps.engineTimeoutMs ? { engineTimeoutMs: deps.engineTimeoutMs } : {}),
    ...(deps.leaseSeconds ? { leaseSeconds: deps.leaseSeconds } : {}),
  });
  const server = await startGrpcServer(
    {
      name: 'conversion',
      access: deps.access,
      log: deps.log,
      services: [conversionHandlers(service)],
      protoFiles: ['murmur/conversion/v1/conversion.proto'],
      maxReceiveMessageBytes: CONVERSION_MAX_MESSAGE_BYTES,
    },
    deps.address,
  );
  return { port: server.port, stop: () => server.shutdown() };
}

export { ConversionService, countCharacters, type BillingClient, type ConversionServiceOptions, type LibraryClient } from './service';
export { conversionConfigSchema, loadConversionConfig, type ConversionConfig } from './config';
export {
  buildPrompt, condenseTranscript, createEngine, ggufHeaderProblem, EngineConfigError, EngineError, extractArtifact, LlamaEngine, llamaModelPath, LocalEngine, OpenAiEngine,
  modelArtifact, schemaFor, strictSchema, type ConversionEngine, type EngineInput, type LlamaEngineOptions, type OpenAiEngineOptions,
} from './engines/index';
export type { AnswerInput, AnswerPassage, EngineAnswer } from './engines/engine';
export { ANSWER_SCHEMA, answerPrompt, extractiveAnswer, modelAnswer, passageLine, questionQuery } from './answers';
export { isKindName, KIND_NAMES, KINDS, unknownKind, type KindName } from './kinds';
export { escapeMarkdown, markdownCell, markdownTable, renderArtifact, type OutputFormatName } from './render';
export { artifactData, columnKeys, type ActionItemData } from './artifact-data';
export { csvField, parseCsv, toCsv } from './csv';
export {
  artifactJsonSchema, parseArtifact, UnusableOutputError, type ActionItem, type ActionItemsArtifact, type Artifact, type EmailArtifact,
  type KeyPointsArtifact, type MeetingNotesArtifact, type SpreadsheetArtifact, type SummaryArtifact,
} from './artifacts';
