/**
 * bench/convert: the local conversion engine's time per kind on 1k-, 10k- and 100k-word
 * transcripts, in-process (no gRPC, no billing), and the exponent of a log-log fit of time
 * against words per kind — about 1 means cost grows linearly with the transcript.
 *
 * Transcripts are realistic: the demo seed's voice notes (app/src/seed/seed-content.ts),
 * concatenated as paragraphs and cut at a sentence end at the target word count. Each size
 * is converted once to warm up, then timed several times; the median is reported.
 */
import * as os from 'node:os';
import { performance } from 'node:perf_hooks';
import { KIND_NAMES, LocalEngine, renderArtifact, type KindName } from '@murmur/conversion';
import { buildSeedPlan } from '@murmur/app';

/** Target sizes in words. */
export const CONVERT_BENCH_SIZES = [1_000, 10_000, 100_000] as const;
/** Timed runs per size (after one warm-up run): fewer for the big ones. */
const RUNS: Record<number, number> = { 1_000: 15, 10_000: 5, 100_000: 3 };
const REFERENCE = new Date('2026-03-01T12:00:00Z');

/** A transcript of about `words` words made of seed voice notes, one paragraph each. */
export function benchTranscript(words: number): string {
  const notes = buildSeedPlan({ recordings: Math.min(10_000, Math.ceil(words / 60)), now: REFERENCE }).recordings.map((r) => r.text);
  const out: string[] = [];
  let count = 0;
  for (let i = 0; count < words; i += 1) {
    const note = notes[i % notes.length]!;
    const noteWords = note.split(/\s+/);
    if (count + noteWords.length <= words) {
      out.push(note);
      count += noteWords.length;
      continue;
    }
    // Cut the last note at the sentence end nearest the target.
    const sentences = note.split(/(?<=[.!?])\s+/);
    const taken: string[] = [];
    for (const s of sentences) {
      if (count >= words) break;
      taken.push(s);
      count += s.split(/\s+/).length;
    }
    out.push(taken.join(' '));
  }
  return out.join('\n\n');
}

/** Median of `xs` (mean of the middle two for an even count). */
export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** Least-squares slope of log(y) on log(x): the growth exponent. */
export function logLogSlope(points: { x: number; y: number }[]): number {
  const xs = points.map((p) => Math.log(p.x));
  const ys = points.map((p) => Math.log(p.y));
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let num = 0;
  let den = 0;
  xs.forEach((x, i) => {
    num += (x - mx) * (ys[i]! - my);
    den += (x - mx) ** 2;
  });
  return den === 0 ? NaN : num / den;
}

const round = (x: number, digits = 2) => Number(x.toFixed(digits));

/** Runs the benchmark; returns the JSON written to bench/results/convert.json. */
export async function runConvertBench(): Promise<Record<string, unknown>> {
  const engine = new LocalEngine();
  const signal = new AbortController().signal;
  const transcripts = CONVERT_BENCH_SIZES.map((words) => ({ words, text: benchTranscript(words) }));
  const ms: Record<string, Record<string, number>> = {};
  const outputChars: Record<string, Record<string, number>> = {};

  for (const kind of KIND_NAMES) {
    ms[kind] = {};
    outputChars[kind] = {};
    for (const t of transcripts) {
      const input = { transcript: t.text, kind: kind as KindName, instructions: '', referenceTime: REFERENCE, signal };
      // The engine's artifact rendered, as the service does.
      const run = async () => renderArtifact(await engine.convert(input), 'markdown');
      const warm = await run();
      const times: number[] = [];
      for (let i = 0; i < (RUNS[t.words] ?? 3); i += 1) {
        const started = performance.now();
        await run();
        times.push(performance.now() - started);
      }
      ms[kind]![String(t.words)] = round(median(times));
      outputChars[kind]![String(t.words)] = warm.length;
    }
  }

  const exponents = Object.fromEntries(
    KIND_NAMES.map((kind) => [kind, round(logLogSlope(transcripts.map((t) => ({ x: t.words, y: ms[kind]![String(t.words)]! }))), 3)]),
  );
  const maxExponent = Math.max(...Object.values(exponents));
  const wordsPerSecond = Object.fromEntries(KIND_NAMES.map((kind) => [kind, Math.round(100_000 / (ms[kind]!['100000']! / 1000))]));
  return {
    benchmark: 'convert',
    engine: 'local',
    timestamp: new Date().toISOString(),
    machine: { node: process.version, cpus: os.cpus().length, cpu: os.cpus()[0]?.model ?? 'unknown' },
    transcripts: transcripts.map((t) => ({ words: t.text.split(/\s+/).length, characters: t.text.length })),
    median_ms: ms,
    words_per_second_at_100k: wordsPerSecond,
    log_log_exponent: exponents,
    max_exponent: maxExponent,
    targets_met: { roughly_linear: maxExponent <= 1.2 },
    output_characters: outputChars,
    method: 'In-process LocalEngine.convert (markdown), one warm-up run then the median of 15 / 5 / 3 timed runs at 1k / 10k / 100k words; exponent = least-squares slope of ln(ms) on ln(words) over the three sizes.',
  };
}
