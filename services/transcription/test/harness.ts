/**
 * Real billing and library services (test databases: real Postgres when DATABASE_URL is set,
 * PGlite otherwise) and a real transcription service on 127.0.0.1:0, with gRPC clients, plus
 * helpers to stream a file into Transcribe the way the gateway does.
 */
import type { DiarizationPort } from '../src/diarization/port';
import { once } from 'node:events';
import { createReadStream } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { MurmurError } from '@murmur/contract';
import { createClient, createLogger, newId, newRequestId, runWithContext, type Database, type PromiseClient } from '@murmur/kit';
import { createPolicyClient, openTestDatabase, testAccess, testMinter } from '@murmur/kit/testing';
import { BILLING_MIGRATIONS_DIR, startBillingService } from '@murmur/billing';
import { LIBRARY_MIGRATIONS_DIR, startLibraryService } from '@murmur/library';
import { billing, library, transcription } from '@murmur/proto';
import type { SpeechEngine } from '../src/engines/engine';
import { startTranscriptionService, type BillingPort } from '../src/index';
import { tempDir } from './fixtures';

export type TranscriptionClient = PromiseClient<transcription.TranscriptionServiceClient>;
export type BillingClient = PromiseClient<billing.BillingServiceClient>;

export interface Stack {
  db: Database;
  billing: BillingClient;
  /** The library, as whoever may call each RPC (the tests' view of saved recordings). */
  library: PromiseClient<library.LibraryServiceClient>;
  /** Makes the service's next Commit fail as billing being unreachable would (after the real billing is not asked). */
  failNextCommit(): void;
  client: TranscriptionClient;
  /** Parent of the service's per-call temp folders: empty whenever no call runs. */
  tmpDir: string;
  /** Billing releases seen by the service, resolved once billing answered. */
  releases: Array<{ reservationId: string; reason: string }>;
  /** Resolves when the next release has been answered by billing. */
  nextRelease(): Promise<{ reservationId: string; reason: string }>;
  stop(): Promise<void>;
}

export async function startStack(opts: { engine: SpeechEngine; concurrency?: number; maxAudioSeconds?: number; diarization?: DiarizationPort }): Promise<Stack> {
  const log = createLogger('transcription-test', process.env.TEST_LOG_LEVEL ?? 'silent');
  const db = await openTestDatabase('billing', BILLING_MIGRATIONS_DIR);
  const libraryDb = await openTestDatabase('library', LIBRARY_MIGRATIONS_DIR);
  const billingServer = await startBillingService({ access: testAccess('billing'), db, log, address: '127.0.0.1:0' });
  const libraryServer = await startLibraryService({ access: testAccess('library'), db: libraryDb, log, address: '127.0.0.1:0' });
  const libraryClient = createPolicyClient(library.LibraryServiceClient, `127.0.0.1:${libraryServer.port}`, { deadlineMs: 30_000 });
  const ownLibrary = createClient(library.LibraryServiceClient, `127.0.0.1:${libraryServer.port}`, { deadlineMs: 30_000, identity: testMinter('transcription') });
  let commitFails = false;
  // The tests' view of billing (as whoever may call each RPC), and the service's own (its workload identity).
  const billingClient = createPolicyClient(billing.BillingServiceClient, `127.0.0.1:${billingServer.port}`, { deadlineMs: 30_000 });
  const ownBilling = createClient(billing.BillingServiceClient, `127.0.0.1:${billingServer.port}`, { deadlineMs: 30_000, identity: testMinter('transcription') });
  const releases: Stack['releases'] = [];
  let waiters: Array<(r: { reservationId: string; reason: string }) => void> = [];
  // The service's view of billing, with releases observable by the tests.
  const port: BillingPort = {
    reserve: (req, o) => ownBilling.reserve(req, o),
    commit: (req, o) => {
      if (!commitFails) return ownBilling.commit(req, o);
      commitFails = false;
      return Promise.reject(new MurmurError('service_unavailable', 'billing is unreachable (test)'));
    },
    renewReservation: (req, o) => ownBilling.renewReservation(req, o),
    extendReservation: (req, o) => ownBilling.extendReservation(req, o),
    release: async (req, o) => {
      const res = await ownBilling.release(req, o);
      const seen = { reservationId: req.reservationId, reason: req.reason };
      releases.push(seen);
      const w = waiters;
      waiters = [];
      w.forEach((fn) => fn(seen));
      return res;
    },
  };
  const tmp = await tempDir('murmur-trn-test-');
  const server = await startTranscriptionService({
    access: testAccess('transcription'),
    log,
    address: '127.0.0.1:0',
    billing: port,
    engine: opts.engine,
    tmpDir: tmp.dir,
    concurrency: opts.concurrency ?? 2,
    maxAudioSeconds: opts.maxAudioSeconds ?? 600,
    library: ownLibrary,
    ...(opts.diarization ? { diarization: opts.diarization } : {}),
  });
  const client = createPolicyClient(transcription.TranscriptionServiceClient, `127.0.0.1:${server.port}`, { deadlineMs: 120_000 });
  return {
    db,
    billing: billingClient,
    library: libraryClient,
    failNextCommit: () => {
      commitFails = true;
    },
    client,
    tmpDir: tmp.dir,
    releases,
    nextRelease: () => new Promise((resolve) => waiters.push(resolve)),
    async stop() {
      client.close();
      await server.stop();
      billingClient.close();
      ownBilling.close();
      await billingServer.stop();
      libraryClient.close();
      ownLibrary.close();
      await libraryServer.stop();
      await db.close();
      await libraryDb.close();
      await tmp.remove();
    },
  };
}

export const newUser = (): string => newId('usr');

export function config(userId: string, overrides: Partial<transcription.TranscribeConfig> = {}): transcription.TranscribeConfig {
  return { userId, language: '', idempotencyKey: newId('idem'), maxBytes: 0, filename: '', contentType: '', admissionId: '', save: false, title: '', folderId: '', timeline: undefined, ...overrides };
}

const configMessage = (cfg: transcription.TranscribeConfig): transcription.TranscribeRequest => ({ payload: { $case: 'config', value: cfg } });
const audioMessage = (chunk: Buffer): transcription.TranscribeRequest => ({ payload: { $case: 'audioChunk', value: chunk } });

/** Opens a Transcribe call as `caller` (the gateway's principal assertion for them), without sending anything. */
export function transcribeAs(client: TranscriptionClient, caller: string) {
  return runWithContext({ requestId: newRequestId(), principal: { userId: caller, keyId: 'key_test' } }, () => client.transcribe());
}

/**
 * Opens a Transcribe call and sends its config; the caller writes audio and ends it. As the
 * gateway calls it: for `caller`, by default the user the config names.
 */
export function openTranscribe(client: TranscriptionClient, cfg: transcription.TranscribeConfig, caller = cfg.userId) {
  const call = transcribeAs(client, caller);
  call.stream.write(configMessage(cfg));
  return {
    ...call,
    async write(chunk: Buffer) {
      if (!call.stream.write(audioMessage(chunk))) await once(call.stream, 'drain');
    },
  };
}

/** Streams `file` in 256 KiB messages (like the gateway) and returns the response. */
export async function transcribeFile(client: TranscriptionClient, file: string, cfg: transcription.TranscribeConfig, caller = cfg.userId): Promise<transcription.TranscribeResponse> {
  const call = openTranscribe(client, cfg, caller);
  call.response.catch(() => undefined);
  for await (const chunk of createReadStream(file, { highWaterMark: 256 * 1024 })) await call.write(chunk as Buffer);
  call.stream.end();
  return call.response;
}

/** Streams an in-memory buffer. */
export async function transcribeBuffer(client: TranscriptionClient, data: Buffer, cfg: transcription.TranscribeConfig): Promise<transcription.TranscribeResponse> {
  const call = openTranscribe(client, cfg);
  call.response.catch(() => undefined);
  for (let i = 0; i < data.length; i += 256 * 1024) await call.write(data.subarray(i, i + 256 * 1024));
  call.stream.end();
  return call.response;
}

/** The MurmurError a call failed with: kit's, re-exported for the tests here. */
export { failure } from '@murmur/kit/testing';

/** The user's usage as billing reports it. */
export async function usageOf(billingClient: BillingClient, userId: string): Promise<billing.Usage> {
  const { usage } = await billingClient.getUsage({ userId });
  if (!usage) throw new Error('no usage');
  return usage;
}

/** The temp folders the service left behind (none, if it cleans up). */
export async function leftovers(dir: string): Promise<string[]> {
  return readdir(dir);
}

/** Segments in order, each with start ≤ end and starting at or after the previous end. */
export function assertMonotonic(segments: transcription.Segment[]): void {
  let cursor = 0;
  for (const s of segments) {
    expect(s.startSeconds).toBeGreaterThanOrEqual(cursor);
    expect(s.endSeconds).toBeGreaterThanOrEqual(s.startSeconds);
    cursor = s.endSeconds;
  }
}
