/**
 * The callers of the billing benchmark: `callers` concurrent loops of Reserve + Commit over gRPC
 * until `seconds` have passed. They run either in the benchmark's main thread, beside the
 * billing service they call (how the figures were first taken: then the callers' gRPC client
 * work and the service share one thread), or in a worker thread of their own, as callers in
 * other processes would (the service's thread then holds only the service).
 */
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { adoptTestKeys, createPolicyClient, testKeyPems } from '@murmur/kit/testing';
import { billing } from '@murmur/proto';

/** A 90-second transcription: 2 credits on every plan. */
export const AUDIO_SECONDS = 90;

export interface CallerRun {
  address: string;
  userIds: string[];
  callers: number;
  seconds: number;
}

export interface CallerSamples {
  pair: number[];
  reserve: number[];
  commit: number[];
  errors: Record<string, number>;
  wallSeconds: number;
  /** CPU of the thread the callers ran on, in ms. */
  callerThreadCpuMs: number;
}

const elapsedMs = (from: bigint) => Number(process.hrtime.bigint() - from) / 1e6;
const threadCpuMs = () => {
  const u = process.threadCpuUsage();
  return (u.user + u.system) / 1e3;
};

/** Runs the loops in this thread. */
export async function callInline(run: CallerRun): Promise<CallerSamples> {
  const client = createPolicyClient(billing.BillingServiceClient, run.address, { deadlineMs: 30_000 });
  const pair: number[] = [];
  const reserve: number[] = [];
  const commit: number[] = [];
  const errors: Record<string, number> = {};
  const cpuBefore = threadCpuMs();
  const started = process.hrtime.bigint();
  const endAt = Date.now() + run.seconds * 1_000;
  try {
    await Promise.all(
      Array.from({ length: run.callers }, async (_, caller) => {
        const userId = run.userIds[caller % run.userIds.length]!;
        while (Date.now() < endAt) {
          const t0 = process.hrtime.bigint();
          try {
            const { reservation } = await client.reserve({
              userId,
              operation: billing.Operation.OPERATION_TRANSCRIBE,
              credits: 0,
              audioSeconds: AUDIO_SECONDS,
              transcriptChars: 0,
              idempotencyKey: randomBytes(12).toString('hex'),
              admissionId: '',
              holdSeconds: 0,
              requestFingerprint: 'bench',
            });
            const reserved = elapsedMs(t0);
            const t1 = process.hrtime.bigint();
            await client.commit({ userId, reservationId: reservation!.id, credits: reservation!.credits, usageSeconds: AUDIO_SECONDS, audioSeconds: 0 });
            commit.push(elapsedMs(t1));
            reserve.push(reserved);
            pair.push(elapsedMs(t0));
          } catch (err) {
            const code = (err as { code?: string }).code ?? 'unknown';
            errors[code] = (errors[code] ?? 0) + 1;
          }
        }
      }),
    );
  } finally {
    client.close();
  }
  return { pair, reserve, commit, errors, wallSeconds: elapsedMs(started) / 1_000, callerThreadCpuMs: threadCpuMs() - cpuBefore };
}

/** Runs the loops in a worker thread of their own. */
export function callFromWorker(run: CallerRun): Promise<CallerSamples> {
  return new Promise((resolve, reject) => {
    // The worker signs its calls with this thread's test keys, which the service trusts.
    const worker = new Worker(path.join(__dirname, 'billing-callers.js'), { workerData: { run, keys: testKeyPems() } });
    worker.once('message', (samples: CallerSamples) => resolve(samples));
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (code !== 0) reject(new Error(`billing callers' worker exited with ${code}`));
    });
  });
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  const { run, keys } = workerData as { run: CallerRun; keys: Parameters<typeof adoptTestKeys>[0] };
  adoptTestKeys(keys);
  void callInline(run).then((samples) => port.postMessage(samples));
}
