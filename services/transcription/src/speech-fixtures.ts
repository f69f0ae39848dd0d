/**
 * Known speech for tests and the benchmark, generated on the fly into temp folders (nothing is
 * committed): the LibriVox utterances of Debian's pocketsphinx-testdata with their reference
 * texts, ffmpeg to mix and encode them, and a check that each utterance's words came back at
 * its own place on a transcript's timeline. Not used by the service itself.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { wordErrorRate } from './wer';

const exec = promisify(execFile);

/** Debian's pocketsphinx-testdata: five utterances of LibriVox "Sense and Sensibility", 16 kHz mono. */
export const LIBRIVOX_DIR = '/usr/share/pocketsphinx/test/data/librivox';

export interface Utterance {
  id: string;
  wav: string;
  text: string;
}

/** The LibriVox utterances with their reference transcripts (the package's `transcription` file). */
export function librivoxUtterances(): Utterance[] {
  let lines: string[];
  try {
    lines = readFileSync(path.join(LIBRIVOX_DIR, 'transcription'), 'utf8').split('\n');
  } catch {
    throw new Error(`${LIBRIVOX_DIR} is missing: apt-get install pocketsphinx-testdata`);
  }
  return lines
    .map((line) => /^<s> (.*) <\/s> \((.*)\)$/.exec(line.trim()))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ id: m[2]!, text: m[1]!, wav: path.join(LIBRIVOX_DIR, `${m[2]!}.wav`) }));
}

/** ffmpeg, quiet, overwriting. */
export async function ffmpeg(args: string[]): Promise<void> {
  await exec('ffmpeg', ['-nostdin', '-hide_banner', '-loglevel', 'error', '-y', ...args], { maxBuffer: 16 * 1024 * 1024 });
}

/** Seconds of audio in a file, by ffprobe. */
export async function probeSeconds(file: string): Promise<number> {
  const { stdout } = await exec('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', file]);
  return Number(stdout.trim());
}

/** A temp folder removed by the returned function. */
export async function tempDir(prefix: string): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * Writes `out`: `totalSeconds` of `background` (an ffmpeg lavfi source at 16 kHz mono, e.g.
 * `anullsrc=r=16000:cl=mono` or pink noise) with utterance i starting at `offsets[i]` seconds,
 * encoded with `codec` (ffmpeg output arguments, e.g. `['-c:a', 'flac']`).
 */
export async function placeUtterances(
  utterances: readonly Utterance[],
  offsets: readonly number[],
  out: string,
  opts: { totalSeconds: number; background: string; codec: string[] },
): Promise<void> {
  const delayed = utterances.map((_, i) => `[${i}]adelay=${Math.round(offsets[i]! * 1000)}:all=1[d${i}]`).join(';');
  const mix = `${utterances.map((_, i) => `[d${i}]`).join('')}[n]amix=inputs=${utterances.length + 1}:duration=longest:normalize=0`;
  await ffmpeg([
    ...utterances.flatMap((u) => ['-i', u.wav]),
    '-f', 'lavfi', '-t', String(opts.totalSeconds), '-i', opts.background,
    '-filter_complex', `${delayed};[${utterances.length}]anull[n];${mix}`,
    '-ac', '1', ...opts.codec, out,
  ]);
}

export interface PlacedWords {
  /** Per utterance: its reference words, and how many of them were recognised inside its window. */
  utterances: Array<{ id: string; referenceWords: number; found: number }>;
  /** Segments outside every utterance's window (words invented in silence or noise). */
  outside: Array<{ start: number; end: number; text: string }>;
}

/**
 * Which recognised words lie where they were spoken: an utterance's window runs from its
 * offset to its end, ±`slackSeconds` (default 0.5).
 */
export async function wordsAtTheirPlaces(
  segments: ReadonlyArray<{ start: number; end: number; text: string }>,
  utterances: readonly Utterance[],
  offsets: readonly number[],
  slackSeconds = 0.5,
): Promise<PlacedWords> {
  const windows = await Promise.all(utterances.map(async (u, i) => [offsets[i]! - slackSeconds, offsets[i]! + (await probeSeconds(u.wav)) + slackSeconds] as const));
  const inside = (s: { start: number; end: number }, [lo, hi]: readonly [number, number]) => s.start >= lo && s.end <= hi;
  return {
    utterances: utterances.map((u, i) => {
      const w = wordErrorRate(u.text, segments.filter((s) => inside(s, windows[i]!)).map((s) => s.text).join(' '));
      return { id: u.id, referenceWords: w.referenceWords, found: w.referenceWords - w.substitutions - w.deletions };
    }),
    outside: segments.filter((s) => !windows.some((win) => inside(s, win))),
  };
}
