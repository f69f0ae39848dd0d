/**
 * Who spoke when: sherpa-onnx's offline speaker diarization (pyannote segmentation-3.0 in
 * 10 s windows, a speaker-embedding model per local speaker, then fast agglomerative
 * clustering), run in a child process of its own (diarizer-process.mts says why).
 *
 * One child per diarizer, started by {@link createDiarizer} (which waits until the models have
 * loaded, so a missing or damaged file fails there and not on a user's call) and started
 * again on the next call after an abort or a crash. Calls run one at a time, in order; each
 * uses `numThreads` cores (default 1). The audio of a call is copied once, into the child.
 */
import { fork, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { once } from 'node:events';
import type { DiarizationModels } from './models';
import type { FromChild, ToChild } from './protocol';

/** One stretch of one speaker's voice; `speaker` numbers are the clustering's (0, 1, …), in no particular order. */
export interface SpeakerTurn {
  /** Seconds from the start of the audio. */
  start: number;
  end: number;
  speaker: number;
}

export interface DiarizerOptions {
  /** CPU threads of each model (default 1). */
  numThreads?: number;
  /**
   * Without `speakersExpected`: the cosine distance under which two stretches are one speaker
   * (sherpa-onnx's default 0.5; higher merges more).
   */
  threshold?: number;
  /** Turns shorter than this are dropped, seconds (default 0.3). */
  minDurationOn?: number;
  /** Pauses shorter than this within one speaker's turn are closed, seconds (default 0.5). */
  minDurationOff?: number;
  /** Receives the child's stderr lines (sherpa-onnx's errors; never audio). */
  onLog?: (line: string) => void;
}

export interface DiarizeOptions {
  /** The number of speakers when the caller knows it; otherwise the threshold decides. */
  speakersExpected?: number;
  signal: AbortSignal;
  /** Speaker embeddings computed so far, of `total` (one per 10 s window and local speaker). */
  onProgress?: (done: number, total: number) => void;
}

export interface Diarizer {
  /** `samples`: 16 kHz mono in [-1, 1]. Turns sorted by start; empty when nobody speaks. */
  diarize(samples: Float32Array, opts: DiarizeOptions): Promise<SpeakerTurn[]>;
  /** Stops the child; calls still waiting fail. */
  close(): Promise<void>;
}

/** The diarizer failed (models would not load, the child died); the message is for the operator's log. */
export class DiarizationError extends Error {}

export const DIARIZATION_SAMPLE_RATE = 16_000;

/** The child's entry beside this file: the .mts source under the tests, the compiled .mjs in dist. */
const CHILD_ENTRY = path.join(__dirname, `diarizer-process${path.extname(__filename) === '.ts' ? '.mts' : '.mjs'}`);
const STDERR_TAIL_LINES = 8;

interface Child {
  process: ChildProcess;
  /** The last stderr lines, for the error when it dies. */
  tail: string[];
  /** Settles when the process has exited. */
  exited: Promise<string>;
}

/** Starts the child and waits for its models to load. */
async function startChild(models: DiarizationModels, opts: Required<Omit<DiarizerOptions, 'onLog' | 'threshold'>> & Pick<DiarizerOptions, 'onLog'>): Promise<Child> {
  const proc = fork(CHILD_ENTRY, [], {
    stdio: ['pipe', 'ignore', 'pipe', 'ipc'],
    serialization: 'json',
    execArgv: [],
    // The service's secrets stay out of a process that needs none of them.
    env: process.env.LD_LIBRARY_PATH ? { LD_LIBRARY_PATH: process.env.LD_LIBRARY_PATH } : {},
  });
  const tail: string[] = [];
  let partial = '';
  proc.stderr!.setEncoding('utf8');
  proc.stderr!.on('data', (data: string) => {
    const lines = (partial + data).split('\n');
    partial = (lines.pop() ?? '').slice(-4096);
    for (const line of lines) {
      if (!line.trim()) continue;
      opts.onLog?.(line);
      tail.push(line.slice(0, 500));
      if (tail.length > STDERR_TAIL_LINES) tail.shift();
    }
  });
  // A child that died mid-write: its exit is the error that counts.
  proc.stdin!.on('error', () => undefined);
  const exited = new Promise<string>((resolve) => {
    proc.on('error', (err) => resolve(`could not start: ${err.message}`));
    proc.on('exit', (code, signal) => resolve(signal ? `was killed by ${signal}` : `exited with code ${code}`));
  });
  const child: Child = { process: proc, tail, exited };
  const load: ToChild = {
    type: 'load',
    segmentation: models.segmentation,
    embedding: models.embedding,
    numThreads: opts.numThreads,
    minDurationOn: opts.minDurationOn,
    minDurationOff: opts.minDurationOff,
  };
  proc.send(load);
  const reply = await Promise.race([
    once(proc, 'message').then(([m]) => m as FromChild),
    exited.then((how) => ({ type: 'exited' as const, how })),
  ]);
  if (reply.type === 'ready') {
    if (reply.sampleRate !== DIARIZATION_SAMPLE_RATE) {
      proc.kill('SIGKILL');
      throw new DiarizationError(`the diarization models expect ${reply.sampleRate} Hz audio, not ${DIARIZATION_SAMPLE_RATE}`);
    }
    return child;
  }
  proc.kill('SIGKILL');
  const why = reply.type === 'exited' ? `the process ${reply.how}` : reply.type === 'failed' ? reply.message : `unexpected ${reply.type}`;
  throw new DiarizationError(`the diarization models could not be loaded (${why})${tail.length ? `: ${tail.join(' | ')}` : ''}`);
}

/**
 * Loads the models in a child process and returns the diarizer (fails with a
 * {@link DiarizationError} naming what went wrong when they do not load).
 */
export async function createDiarizer(models: DiarizationModels, options: DiarizerOptions = {}): Promise<Diarizer> {
  const childOpts = {
    numThreads: options.numThreads ?? 1,
    minDurationOn: options.minDurationOn ?? 0.3,
    minDurationOff: options.minDurationOff ?? 0.5,
    ...(options.onLog ? { onLog: options.onLog } : {}),
  };
  const threshold = options.threshold ?? 0.5;
  let child: Child | undefined = await startChild(models, childOpts);
  let closed = false;
  let nextId = 1;
  let queue: Promise<unknown> = Promise.resolve();

  const kill = (c: Child) => {
    if (c.process.exitCode === null && c.process.signalCode === null) c.process.kill('SIGKILL');
    if (child === c) child = undefined;
  };

  const run = async (samples: Float32Array, opts: DiarizeOptions): Promise<SpeakerTurn[]> => {
    opts.signal.throwIfAborted();
    if (closed) throw new DiarizationError('the diarizer is closed');
    const expected = opts.speakersExpected;
    if (expected !== undefined && !(Number.isInteger(expected) && expected >= 1)) throw new RangeError(`speakersExpected must be a whole number ≥ 1, not ${expected}`);
    if (samples.length === 0) return [];
    const c = child ?? (child = await startChild(models, childOpts));
    // Aborted while a new child loaded its models: the call never starts.
    opts.signal.throwIfAborted();
    const id = nextId++;
    const message: ToChild = { type: 'diarize', id, samples: samples.length, numClusters: expected ?? 0, threshold };
    const onAbort = () => kill(c);
    opts.signal.addEventListener('abort', onAbort, { once: true });
    try {
      const answer = new Promise<FromChild>((resolve) => {
        const onMessage = (m: FromChild) => {
          if (m.type === 'progress' && m.id === id) opts.onProgress?.(m.done, m.total);
          else if ((m.type === 'turns' || m.type === 'failed') && m.id === id) {
            c.process.off('message', onMessage);
            resolve(m);
          }
        };
        c.process.on('message', onMessage);
      });
      c.process.send(message);
      c.process.stdin!.write(new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength));
      const reply = await Promise.race([answer, c.exited.then((how) => ({ type: 'exited' as const, how }))]);
      opts.signal.throwIfAborted();
      if (reply.type === 'turns') return reply.turns;
      if (reply.type !== 'exited') throw new DiarizationError(`diarization failed: ${reply.type === 'failed' ? reply.message : reply.type}`);
      kill(c);
      throw new DiarizationError(`the diarization process ${reply.how}${c.tail.length ? `: ${c.tail.join(' | ')}` : ''}`);
    } finally {
      opts.signal.removeEventListener('abort', onAbort);
    }
  };

  return {
    diarize(samples, opts) {
      // Calls run in turn; one aborted while it waits leaves at once and never starts.
      const result = queue.then(() => run(samples, opts));
      queue = result.catch(() => undefined);
      return untilAborted(result, opts.signal);
    },
    async close() {
      closed = true;
      const c = child;
      child = undefined;
      if (!c) return;
      if (c.process.connected) c.process.disconnect();
      const timer = setTimeout(() => kill(c), 5_000);
      await c.exited;
      clearTimeout(timer);
    },
  };
}

/** `work`, or the signal's reason as soon as it aborts. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
