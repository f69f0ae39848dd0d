/**
 * The diarizer's child process: loads sherpa-onnx's OfflineSpeakerDiarization once and runs
 * one call at a time (protocol.ts). It lives in its own process because sherpa-onnx ends the
 * whole process on a bad model file (ONNX Runtime's exception → abort(), a missing metadata key
 * → _Exit(-1)) and cannot stop a run half-way: here a damaged file fails one load, and an
 * aborted call is a killed child, its CPU and memory back at once. Plain ESM with erasable
 * types only, so Node runs this file as it is in the tests and as compiled .mjs in dist.
 */
import sherpa from 'sherpa-onnx-node';
import addon from 'sherpa-onnx-node/addon.js';
import type { FromChild, LoadMessage, ToChild } from './protocol.js';

const send = (message: FromChild) => process.send?.(message);

let diarization: InstanceType<typeof sherpa.OfflineSpeakerDiarization> | undefined;

/** Bytes read from stdin not yet claimed by a call, and the call waiting for its samples. */
const pending: Buffer[] = [];
let pendingBytes = 0;
let waiting: { bytes: number; resolve: (samples: Float32Array) => void } | undefined;

function deliver(): void {
  if (!waiting || pendingBytes < waiting.bytes) return;
  const { bytes, resolve } = waiting;
  waiting = undefined;
  const samples = new Float32Array(bytes / 4);
  const target = new Uint8Array(samples.buffer);
  let filled = 0;
  while (filled < bytes) {
    const head = pending[0]!;
    const take = Math.min(head.length, bytes - filled);
    target.set(head.subarray(0, take), filled);
    filled += take;
    if (take === head.length) pending.shift();
    else pending[0] = head.subarray(take);
  }
  pendingBytes -= bytes;
  resolve(samples);
}

process.stdin.on('data', (chunk: Buffer) => {
  pending.push(chunk);
  pendingBytes += chunk.length;
  deliver();
});

const readSamples = (count: number) =>
  new Promise<Float32Array>((resolve) => {
    waiting = { bytes: count * 4, resolve };
    deliver();
  });

function load(m: LoadMessage): void {
  try {
    diarization = new sherpa.OfflineSpeakerDiarization({
      segmentation: { pyannote: { model: m.segmentation }, numThreads: m.numThreads },
      embedding: { model: m.embedding, numThreads: m.numThreads },
      clustering: { numClusters: 0, threshold: 0.5 },
      minDurationOn: m.minDurationOn,
      minDurationOff: m.minDurationOff,
    });
    send({ type: 'ready', sampleRate: diarization.sampleRate });
  } catch (err) {
    send({ type: 'failed', message: (err as Error).message });
  }
}

let queue: Promise<void> = Promise.resolve();

process.on('message', (m: ToChild) => {
  if (m.type === 'load') return load(m);
  // Calls are strictly one after the other: each takes its samples from stdin in turn.
  queue = queue.then(async () => {
    try {
      if (!diarization) throw new Error('no models loaded');
      diarization.setConfig({ clustering: { numClusters: m.numClusters, threshold: m.threshold } });
      // The addon copies the samples before it starts: ours are garbage from then on.
      let total = 0;
      let done = 0;
      const run = addon.offlineSpeakerDiarizationProcessAsync(diarization.handle, await readSamples(m.samples), (d, t) => {
        [done, total] = [d, t];
        send({ type: 'progress', id: m.id, done: d, total: t });
      });
      const turns = (await run).map(({ start, end, speaker }) => ({ start, end, speaker }));
      // The addon's last progress callback may come after its result: the work is done, so the
      // caller hears so before the turns (a later callback of this call is no longer listened to).
      if (done < total) send({ type: 'progress', id: m.id, done: total, total });
      send({ type: 'turns', id: m.id, turns });
    } catch (err) {
      send({ type: 'failed', id: m.id, message: (err as Error).message });
    }
  });
});

// The service went away (or closed the diarizer): nothing left to do.
process.on('disconnect', () => process.exit(0));
