/**
 * Silero VAD v5 (snakers4/silero-vad, MIT) through sherpa-onnx-node's `Vad`: where speech starts
 * and ends in a live stream, for engines that recognise whole windows of audio rather than
 * decoding as it arrives (windowed-recognizer.ts). 512-sample windows at 16 kHz.
 *
 * It runs in the service's own process, not in a child as the diarizer does. The diarizer needs
 * a child because a run takes seconds to minutes and cannot be stopped, and because sherpa-onnx
 * aborts the whole process on a damaged model file. Neither holds here: one window costs ~0.15 ms
 * of CPU (measured: ~5 ms per second of audio, ~200× real time on one core of this machine), so
 * the event loop is never held for long; and the file is checked against its pinned SHA-256
 * before ONNX Runtime ever sees it, so a damaged or foreign file is refused with an EngineError
 * instead of an abort. A child per stream would cost a Node.js process (~40 MB, ~0.1 s to start)
 * to save those milliseconds, and a shared child would carry every stream's audio over IPC.
 * What a detector does cost: ~50 ms of CPU to create (synchronously, once per stream) and
 * ~12 MB of memory.
 *
 * The model file lives in MURMUR_MODELS_DIR as {@link SILERO_VAD_FILE}, fetched by
 * `npm run models -- fetch vad` ({@link SILERO_VAD_DOWNLOAD}); it is never part of the repository.
 */
// The package's types (it ships none); named here so every program that imports this file has them.
/// <reference path="../diarization/sherpa-onnx-node.d.ts" />
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import * as path from 'node:path';
import type { Vad } from 'sherpa-onnx-node';
import type { PinnedDownload } from '../diarization/models';
import { EngineError } from '../engines/engine';
import { SAMPLE_RATE } from '../pcm';

/** The file under MURMUR_MODELS_DIR. */
export const SILERO_VAD_FILE = 'silero_vad_v5.onnx';
/** What to tell an operator whose VAD model is missing. */
export const VAD_FETCH_COMMAND = 'npm run models -- fetch vad';
/** Samples per model run (Silero v5 at 16 kHz). */
export const VAD_WINDOW_SAMPLES = 512;

/**
 * Silero VAD v5 at a fixed commit of its repository (src/silero_vad/data/silero_vad.onnx), the
 * file the project's tests run on; its SHA-256 is checked on download and before every load.
 */
export const SILERO_VAD_DOWNLOAD: PinnedDownload = Object.freeze({
  url: 'https://raw.githubusercontent.com/snakers4/silero-vad/806dcba3f0b5d95282d0889a074954a2f8c6397b/src/silero_vad/data/silero_vad.onnx',
  bytes: 2_327_524,
  sha256: '1a153a22f4509e292a94e67d6f9b85e8deb25b4988682b7e174c65279d8788e3',
  file: SILERO_VAD_FILE,
  license: 'MIT (Silero Team)',
});

/** Where the VAD model is looked for. */
export function sileroVadPath(modelsDir: string): string {
  return path.resolve(modelsDir, SILERO_VAD_FILE);
}

export interface VoiceDetectorOptions {
  /** Speech probability above which a window is speech (default 0.5, Silero's). */
  threshold?: number;
  /** Silence that ends an utterance, seconds (default 0.5). */
  minSilenceSeconds?: number;
  /** Speech shorter than this is ignored, seconds (default 0.25). */
  minSpeechSeconds?: number;
}

/** One stream's detector. Sample positions count from its creation or last {@link VoiceDetector.reset}. */
export interface VoiceDetector {
  /** Takes exactly {@link VAD_WINDOW_SAMPLES} samples in [-1, 1]. */
  accept(window: Float32Array): void;
  /** In speech: from the window that turned it on until its segment ends. */
  readonly inSpeech: boolean;
  /** The ends (sample positions) of the segments finished since the last call. */
  takeSegmentEnds(): number[];
  /** Forgets the speech in progress and restarts the count of samples at 0. */
  reset(): void;
  /**
   * How far before the window that turned speech on the speech began, in samples: the
   * detector's own look-back (min speech plus its context), ~0.35 s at the defaults.
   */
  readonly lookBack: number;
}

/** Model files whose checksum matched, by path, size and mtime (hashing 2.3 MB per stream is waste). */
const verified = new Map<string, Promise<void>>();

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const block of createReadStream(file)) hash.update(block as Buffer);
  return hash.digest('hex');
}

/** Throws an EngineError naming the fetch command when the model is missing or not the pinned file. */
export async function checkVadModel(modelPath: string): Promise<void> {
  let info;
  try {
    info = await stat(modelPath);
  } catch {
    throw new EngineError(`the Silero VAD model ${modelPath} is missing; fetch it with \`${VAD_FETCH_COMMAND}\` (into MURMUR_MODELS_DIR)`);
  }
  const key = `${modelPath}:${info.size}:${info.mtimeMs}`;
  let check = verified.get(key);
  if (!check) {
    check = sha256Of(modelPath).then((sum) => {
      if (sum !== SILERO_VAD_DOWNLOAD.sha256) {
        throw new EngineError(`${modelPath} is not the pinned Silero VAD v5 (sha256 ${sum}); fetch it again with \`${VAD_FETCH_COMMAND} --force\``);
      }
    });
    verified.set(key, check);
    check.catch(() => verified.delete(key));
  }
  await check;
}

type SherpaModule = typeof import('sherpa-onnx-node');

/** Checks the model file and creates a detector on it. */
export async function openVoiceDetector(modelPath: string, opts: VoiceDetectorOptions = {}): Promise<VoiceDetector> {
  await checkVadModel(modelPath);
  let sherpa: SherpaModule['default'];
  try {
    sherpa = (await import('sherpa-onnx-node')).default;
  } catch (err) {
    throw new EngineError(`sherpa-onnx-node could not be loaded: ${(err as Error).message}`);
  }
  const minSpeechSeconds = opts.minSpeechSeconds ?? 0.25;
  let vad: Vad;
  try {
    vad = new sherpa.Vad(
      {
        sileroVad: {
          model: modelPath,
          threshold: opts.threshold ?? 0.5,
          minSilenceDuration: opts.minSilenceSeconds ?? 0.5,
          minSpeechDuration: minSpeechSeconds,
          windowSize: VAD_WINDOW_SAMPLES,
          // Utterances are cut by the caller (every 30 s at most); this only keeps the detector's own cut out of the way.
          maxSpeechDuration: 120,
        },
        sampleRate: SAMPLE_RATE,
        numThreads: 1,
        debug: 0,
      },
      // Seconds of audio its buffer holds before growing: one long utterance.
      60,
    );
  } catch (err) {
    throw new EngineError(`the Silero VAD model could not be loaded: ${(err as Error).message}`);
  }
  return {
    accept(window) {
      vad.acceptWaveform(window);
    },
    get inSpeech() {
      return vad.isDetected();
    },
    takeSegmentEnds() {
      const ends: number[] = [];
      while (!vad.isEmpty()) {
        const segment = vad.front(false);
        ends.push(segment.start + segment.samples.length);
        vad.pop();
      }
      return ends;
    },
    reset() {
      vad.reset();
    },
    lookBack: Math.round(minSpeechSeconds * SAMPLE_RATE) + 3 * VAD_WINDOW_SAMPLES,
  };
}
