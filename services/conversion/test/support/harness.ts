/**
 * Starts the real billing and library services (each on its own test database) and the
 * conversion service in-process on 127.0.0.1:0, with gRPC clients to all three. The engine is
 * swappable per test, so one harness serves the local, failing, openai and llama cases.
 */
import { BILLING_MIGRATIONS_DIR, startBillingService } from '@murmur/billing';
import { createClient, createLogger, newId, type Database, type PromiseClient } from '@murmur/kit';
import { createPolicyClient, openTestDatabase, testAccess, testMinter } from '@murmur/kit/testing';
import { LIBRARY_MAX_MESSAGE_BYTES, LIBRARY_MIGRATIONS_DIR, startLibraryService } from '@murmur/library';
import { billing, conversion, library } from '@murmur/proto';
import { CONVERSION_MAX_MESSAGE_BYTES, LocalEngine, startConversionService, type AnswerInput, type Artifact, type ConversionEngine, type EngineAnswer, type EngineInput } from '../../src/index';

/** An engine that forwards to whichever engine the test set last. */
export class SwitchableEngine implements ConversionEngine {
  current: ConversionEngine = new LocalEngine();
  /** The inputs the engine saw, newest last. */
  readonly calls: EngineInput[] = [];

  get name(): string {
    return this.current.name;
  }

  convert(input: EngineInput): Promise<Artifact> {
    this.calls.push(input);
    return this.current.convert(input);
  }

  /** The questions the engine saw, newest last. */
  readonly questions: AnswerInput[] = [];

  answer(input: AnswerInput): Promise<EngineAnswer> {
    this.questions.push(input);
    return this.current.answer(input);
  }
}

export interface Harness {
  engine: SwitchableEngine;
  conversion: PromiseClient<conversion.ConversionServiceClient>;
  billing: PromiseClient<billing.BillingServiceClient>;
  library: PromiseClient<library.LibraryServiceClient>;
  stop(): Promise<void>;
}

export async function startHarness(opts: { engineTimeoutMs?: number } = {}): Promise<Harness> {
  const log = createLogger('conversion-test', 'silent');
  const dbs: Database[] = [];
  const stops: (() => Promise<void>)[] = [];
  const closers: (() => void)[] = [];
  try {
    const billingDb = await openTestDatabase('billing', BILLING_MIGRATIONS_DIR);
    dbs.push(billingDb);
    const libraryDb = await openTestDatabase('library', LIBRARY_MIGRATIONS_DIR);
    dbs.push(libraryDb);
    const billingServer = await startBillingService({ access: testAccess('billing'), db: billingDb, log, address: '127.0.0.1:0', cursorSecret: 'conversion-test-cursor-secret' });
    stops.push(billingServer.stop);
    const libraryServer = await startLibraryService({ access: testAccess('library'), db: libraryDb, log, address: '127.0.0.1:0', cursorSecret: 'conversion-test-cursor-secret' });
    stops.push(libraryServer.stop);

    // What the tests use to set up and inspect (as whoever may call each RPC) …
    const billingClient = createPolicyClient(billing.BillingServiceClient, `127.0.0.1:${billingServer.port}`, { deadlineMs: 20_000 });
    const libraryClient = createPolicyClient(library.LibraryServiceClient, `127.0.0.1:${libraryServer.port}`, {
      deadlineMs: 20_000,
      maxReceiveMessageBytes: LIBRARY_MAX_MESSAGE_BYTES,
    });
    // … and what the conversion service calls with: its own workload identity, as in production.
    const ownBilling = createClient(billing.BillingServiceClient, `127.0.0.1:${billingServer.port}`, { deadlineMs: 20_000, identity: testMinter('conversion') });
    const ownLibrary = createClient(library.LibraryServiceClient, `127.0.0.1:${libraryServer.port}`, {
      deadlineMs: 20_000,
      maxReceiveMessageBytes: LIBRARY_MAX_MESSAGE_BYTES,
      identity: testMinter('conversion'),
    });
    closers.push(() => billingClient.close(), () => libraryClient.close(), () => ownBilling.close(), () => ownLibrary.close());

    const engine = new SwitchableEngine();
    const server = await startConversionService({
      access: testAccess('conversion'),
      log,
      address: '127.0.0.1:0',
      billing: ownBilling,
      library: ownLibrary,
      engine,
      ...(opts.engineTimeoutMs ? { engineTimeoutMs: opts.engineTimeoutMs } : {}),
    });
    stops.push(server.stop);
    const conversionClient = createPolicyClient(conversion.ConversionServiceClient, `127.0.0.1:${server.port}`, {
      deadlineMs: 30_000,
      maxReceiveMessageBytes: CONVERSION_MAX_MESSAGE_BYTES,
    });
    closers.push(() => conversionClient.close());

    return {
      engine,
      conversion: conversionClient,
      billing: billingClient,
      library: libraryClient,
      async stop() {
        for (const close of closers.reverse()) close();
        for (const stop of stops.reverse()) await stop();
        for (const db of dbs.reverse()) await db.close();
      },
    };
  } catch (err) {
    for (const close of closers.reverse()) close();
    for (const stop of stops.reverse()) await stop();
    for (const db of dbs.reverse()) await db.close();
    throw err;
  }
}

/** A fresh user: its own balance and rate-limit window (10 AI calls a minute). */
export const newUser = (): string => newId('usr');

/** A ConvertRequest with every field (ts-proto requires them all), defaults filled in. */
export function convertRequest(fields: Partial<conversion.ConvertRequest> & { userId: string }): conversion.ConvertRequest {
  return {
    source: undefined,
    kind: 'summary',
    outputFormat: conversion.OutputFormat.OUTPUT_FORMAT_UNSPECIFIED,
    instructions: '',
    idempotencyKey: newId('idem'),
    referenceTime: undefined,
    admissionId: '',
    ...fields,
  };
}

export const transcriptSource = (value: string): conversion.ConvertRequest['source'] => ({ $case: 'transcript', value });
export const recordingSource = (value: string): conversion.ConvertRequest['source'] => ({ $case: 'recordingId', value });

/** The MurmurError a call failed with: kit's, re-exported for the tests here. */
export { failure } from '@murmur/kit/testing';
