/**
 * Live (streaming) recognition: one `ps-live` process per stream (native/ps-live.c, Debian's
 * libpocketsphinx decoding as the audio arrives), fed framed PCM on stdin, answering JSON lines
 * on stdout. A process per stream keeps a crash or a slow stream to itself and costs one model
 * load (~0.3 s of CPU) per stream; the decoder runs in C, so the Node.js side only moves bytes.
 *
 * Cost, measured on this machine (2 cores) by feeding a 30 s file of LibriVox speech (25 s of
 * speech, 1.3 s pauses) as fast as the pipe takes it: 5.2–6.1 s of CPU, i.e. ~0.19 s of CPU per
 * second of audio (~0.22 per second of speech; pocketsphinx_continuous on the same file: 5.4 s),
 * plus ~0.35 s to start and load the model; 30 s of silence or quiet noise costs ~0.4 s (the
 * detector skips it); partials every 250 ms add no measurable cost. So one core keeps up with
 * about 5 streams of continuous speech, two cores with about 10 at saturation. Memory: ~92 MB
 * private per process (the language model and dictionary, loaded by every process).
 *
 * The recognizer is the batch engine's (engines/pocketsphinx.ts): the same model files, the same
 * `-vad_threshold` and the same idea of what is not a word, so live and uploaded audio
 * transcribe alike. Nothing here logs audio or text: errors name exit codes and the helper's own
 * messages only.
 */
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import * as path from 'node:path';
import { EngineError } from '../engines/engine';
import { DEBIAN_POCKETSPHINX_MODEL_DIR, DEFAULT_VAD_THRESHOLD, isFiller, pocketsphinxModelFiles } from '../engines/pocketsphinx-model';
import { spawnProcess } from '../process';

export type { LiveEvent, LiveRecognizer, LiveWord } from './live-events';
import type { LiveEvent, LiveRecognizer, LiveWord } from './live-events';

export interface LiveRecognizerOptions {
  /** Default {@link LIVE_BINARY}. */
  binary?: string;
  /** Folder holding en-us/, en-us.lm.bin and cmudict-en-us.dict (default Debian's). */
  modelDir?: string;
  /** `-vad_threshold` (default the batch engine's, {@link DEFAULT_VAD_THRESHOLD}). */
  vadThreshold?: number;
  /** At most one partial per this many milliseconds of audio (default 250). */
  partialMs?: number;
  /** Called for every event, in order. If it throws, the recognizer is killed and done rejects with that error. */
  onEvent(e: LiveEvent): void;
  /** Aborting kills the process, as kill() does. */
  signal?: AbortSignal;
}

/** Where scripts/build-native.js puts the helper: native/build/ps-live in this package. */
export const LIVE_BINARY = path.resolve(__dirname, '..', '..', 'native', 'build', 'ps-live');
const BUILD_HINT =
  'build it with `node scripts/build-native.js` (npm start and npm test do; it needs: apt-get install gcc pkg-config libpocketsphinx-dev libsphinxbase-dev)';

/** Throws an EngineError naming how to build the helper when `binary` is missing or not executable. */
export async function checkLiveBinary(binary: string = LIVE_BINARY): Promise<void> {
  try {
    await access(binary, constants.X_OK);
  } catch {
    throw new EngineError(`the live recognizer ${binary} is missing; ${BUILD_HINT}`);
  }
}

/** Resolves once the process printed ready. */
export async function startLiveRecognizer(opts: LiveRecognizerOptions): Promise<LiveRecognizer> {
  opts.signal?.throwIfAborted();
  const binary = opts.binary ?? LIVE_BINARY;
  await checkLiveBinary(binary);
  const model = await pocketsphinxModelFiles(opts.modelDir ?? DEBIAN_POCKETSPHINX_MODEL_DIR);
  const args = ['-hmm', model.hmm, '-lm', model.lm, '-dict', model.dict, '-vad_threshold', (opts.vadThreshold ?? DEFAULT_VAD_THRESHOLD).toFixed(2)];
  args.push('-partial_ms', String(Math.max(1, Math.round(opts.partialMs ?? 250))));

  // Our own abort, so kill() and the caller's signal both end up in spawnProcess' SIGKILL.
  const stop = new AbortController();
  let stoppedByUs = false;
  let callbackError: unknown;
  const kill = () => {
    stoppedByUs = true;
    stop.abort();
  };
  if (opts.signal?.aborted) kill();
  opts.signal?.addEventListener('abort', kill, { once: true });
  const proc = spawnProcess(binary, args, { signal: stop.signal, stdin: 'pipe', stderrFilter: (l) => /^(ps-live:|ERROR|FATAL)/.test(l) });
  const stdin = proc.child.stdin;
  if (!stdin) throw new EngineError('the live recognizer has no stdin');
  // A dead process makes writes fail with EPIPE: done reports why, the write rejects.
  stdin.on('error', () => {});

  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  let buffered = '';
  const onLine = (line: string) => {
    const event = parseLine(line);
    if (event === 'ready') markReady();
    else if (event && !stoppedByUs) {
      try {
        opts.onEvent(event);
      } catch (err) {
        callbackError ??= err;
        kill();
      }
    }
  };
  proc.child.stdout.setEncoding('utf8');
  proc.child.stdout.on('data', (chunk: string) => {
    const lines = (buffered + chunk).split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) onLine(line);
  });

  // 'close' comes after stdout ended, so every event has been delivered when done settles.
  const done = proc.done.then((result) => {
    opts.signal?.removeEventListener('abort', kill);
    if (buffered) onLine(buffered);
    if (callbackError !== undefined) throw callbackError;
    if (stoppedByUs) return;
    if (result.spawnError) throw new EngineError(`the live recognizer ${binary} could not start: ${result.spawnError.message}`);
    if (result.code !== 0) {
      throw new EngineError(`the live recognizer exited with ${result.signal ?? `code ${result.code}`}: ${result.stderrTail.join(' | ') || 'no error output'}`);
    }
  });
  done.catch(() => {});
  try {
    await Promise.race([ready, done.then(() => Promise.reject(new EngineError('the live recognizer stopped before it was ready')))]);
  } catch (err) {
    kill();
    throw opts.signal?.aborted ? opts.signal.reason : err;
  }

  const frame = (type: 'A' | 'F', payload: Uint8Array) => {
    const head = Buffer.alloc(5);
    head.write(type, 0, 'latin1');
    head.writeUInt32LE(payload.byteLength, 1);
    return payload.byteLength > 0 ? Buffer.concat([head, payload]) : head;
  };
  return {
    write(pcm) {
      if (stoppedByUs) return Promise.resolve();
      if (stdin.writableEnded) return Promise.reject(new EngineError('the live recognizer was ended; no more audio'));
      return new Promise<void>((resolve, reject) => {
        stdin.write(frame('A', pcm), (err) => {
          if (!err || stoppedByUs) resolve();
          // The process is gone: its own failure (done) is the better reason.
          else done.then(() => reject(new EngineError('the live recognizer stopped taking audio')), reject);
        });
      });
    },
    finalize() {
      if (!stoppedByUs && !stdin.writableEnded) stdin.write(frame('F', new Uint8Array(0)));
    },
    end() {
      if (!stdin.writableEnded) stdin.end();
      return done;
    },
    kill,
    done,
  };
}

/** One stdout line as an event, 'ready', or undefined for anything else (ignored). */
function parseLine(line: string): LiveEvent | 'ready' | undefined {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Record<string, unknown>;
  const num = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
  switch (o.type) {
    case 'ready':
      return 'ready';
    case 'speech_started':
    case 'utterance_end':
      return num(o.at) ? { type: o.type, at: o.at } : undefined;
    case 'partial':
      if (typeof o.text !== 'string' || !num(o.start) || !num(o.end)) return undefined;
      return { type: 'partial', text: o.text.split(' ').filter((w) => w && !isFiller(w)).join(' '), start: o.start, end: o.end };
    case 'final': {
      if (!num(o.start) || !num(o.end) || !Array.isArray(o.words)) return undefined;
      const words: LiveWord[] = [];
      for (const w of o.words as unknown[]) {
        if (!Array.isArray(w) || typeof w[0] !== 'string' || !num(w[1]) || !num(w[2]) || !num(w[3])) return undefined;
        if (!isFiller(w[0])) words.push({ text: w[0], start: w[1], end: w[2], confidence: w[3] });
      }
      return { type: 'final', start: o.start, end: o.end, words };
    }
    default:
      return undefined;
  }
}
