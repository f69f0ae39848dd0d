/**
 * transcribe (c): a long file recognised three ways in one run, in the bench process with the
 * transcription package's functions (decodeAndCut → chunks → recognizeChunks → stitch):
 *
 * - `engine_plan`: what the service does — silence-cut pieces joined up to the engine's longest
 *   chunk (PocketSphinx: minutes), all cores;
 * - `pieces_30s`: every ≤ 30 s piece its own chunk (what a 30 s engine such as Whisper gets),
 *   all cores;
 * - `single_pass`: the whole file as one chunk on one core.
 *
 * The headline ratio is engine_plan ÷ single_pass (wall time); CPU ratios show what chunking
 * costs in work (one engine start and model load per chunk).
 */
import * as os from 'node:os';
import * as path from 'node:path';
import { wordErrorRate, type SpeechEngine } from '@murmur/transcription';
import { cpuMeter } from './processes';
import { NOISE_PERCENT } from './rounds';
import { loopWav, rawTranscribe, type RawPlan } from './transcribe-audio';

const CONCURRENCY = os.availableParallelism();
const round = (x: number, digits = 2) => Number(x.toFixed(digits));

export interface LongAudioInput {
  engine: SpeechEngine;
  /** The LibriVox set as one file, its length and its reference text. */
  setFile: string;
  setSeconds: number;
  setReference: string;
  minutes: number;
  why: string;
  tmpDir: string;
  log: (line: string) => void;
}

export async function measureLongAudio(input: LongAudioInput): Promise<Record<string, unknown>> {
  const { engine, log } = input;
  const loops = Math.max(1, Math.round((input.minutes * 60) / input.setSeconds));
  const longFile = path.join(input.tmpDir, 'long.wav');
  await loopWav(input.setFile, loops, longFile);
  const minutes = round((loops * input.setSeconds) / 60, 2);
  const reference = Array.from({ length: loops }, () => input.setReference).join(' ');
  log(`(c) ${minutes}-minute file (${loops} × the LibriVox set): engine plan, 30 s pieces, then single-pass…`);
  const metered = cpuMeter({});
  const variants: Array<[string, RawPlan, number]> = [
    ['engine_plan', 'engine', CONCURRENCY],
    ['pieces_30s', 'pieces', CONCURRENCY],
    ['single_pass', 'single', 1],
  ];
  const runs: Record<string, { seconds: number; chunks: number; concurrency: number; cpu_seconds: number; other_cpu_percent: number; wer: number }> = {};
  for (const [name, plan, concurrency] of variants) {
    const r = await metered(() => rawTranscribe(longFile, engine, { concurrency, plan, tmpDir: input.tmpDir }));
    runs[name] = {
      seconds: round(r.value.ms / 1000),
      chunks: r.value.chunks,
      concurrency,
      cpu_seconds: r.cpu_seconds,
      other_cpu_percent: r.other_cpu_percent,
      wer: round(wordErrorRate(reference, r.value.text).wer, 4),
    };
    log(`(c) ${name}: ${runs[name]!.seconds} s, ${r.value.chunks} chunk(s), CPU ${r.cpu_seconds} s, WER ${runs[name]!.wer}`);
  }
  const plan = runs.engine_plan!;
  const pieces = runs.pieces_30s!;
  const single = runs.single_pass!;
  return {
    minutes,
    why: input.why,
    engine: engine.name,
    engine_max_chunk_seconds: engine.maxChunkSeconds ?? 30,
    ...runs,
    /** The headline: the service's plan on every core ÷ one pass on one core (wall time). */
    parallel_over_single: round(plan.seconds / single.seconds, 3),
    speedup: round(single.seconds / plan.seconds, 2),
    pieces_over_single: round(pieces.seconds / single.seconds, 3),
    /** CPU ÷ single-pass CPU: what cutting costs in work. */
    cpu_plan_over_single: single.cpu_seconds > 0 ? round(plan.cpu_seconds / single.cpu_seconds, 3) : 0,
    cpu_pieces_over_single: single.cpu_seconds > 0 ? round(pieces.cpu_seconds / single.cpu_seconds, 3) : 0,
    noisy: Math.max(plan.other_cpu_percent, pieces.other_cpu_percent, single.other_cpu_percent) > NOISE_PERCENT,
    method:
      'each variant in the bench process with the package functions: decodeAndCut (ffmpeg + SilenceChunker) → chunks (engine_plan: planRecognition with the engine\'s maxChunkSeconds, as the service; pieces_30s: the ≤ 30 s pieces; single_pass: one chunk) → recognizeChunks (writeWavSlice + engine.recognize under a Semaphore) → stitchChunks',
  };
}
