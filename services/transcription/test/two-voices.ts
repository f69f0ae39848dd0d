/**
 * A conversation of two clearly different voices made on the fly: espeak-ng speaks three
 * sentences, A (a low male voice, slow) then B (a high female voice, fast) then A again,
 * ffmpeg turns each into 16 kHz mono float32, and they are laid end to end with pauses.
 * The true turns are where each voice is audible (its clip less the silence espeak-ng puts
 * around it).
 */
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { run } from './fixtures';

const RATE = 16_000;
const VOICES = {
  A: ['-v', 'en-us+m3', '-p', '15', '-s', '135'],
  B: ['-v', 'en-us+f4', '-p', '90', '-s', '185'],
} as const;
const LINES: Array<['A' | 'B', string]> = [
  ['A', 'the quarterly numbers look strong and we should keep the budget for the next project as it is'],
  ['B', 'i disagree because the marketing team needs more money to reach the new customers before summer'],
  ['A', 'fine then let us meet again on thursday and decide with the final figures on the table'],
];

export interface TrueTurn {
  voice: 'A' | 'B';
  start: number;
  end: number;
}

export interface Conversation {
  samples: Float32Array;
  turns: TrueTurn[];
  seconds: number;
}

/** First and last sample louder than -40 dBFS: where the voice is. */
function audible(x: Float32Array): [number, number] {
  let first = 0;
  while (first < x.length && Math.abs(x[first]!) < 0.01) first++;
  let last = x.length - 1;
  while (last > first && Math.abs(x[last]!) < 0.01) last--;
  return [first, last + 1];
}

async function speakAsFloat32(dir: string, name: string, voice: readonly string[], text: string): Promise<Float32Array> {
  const wav = path.join(dir, `${name}.wav`);
  const raw = path.join(dir, `${name}.f32`);
  await run('espeak-ng', [...voice, '-w', wav, text]);
  await run('ffmpeg', ['-v', 'error', '-y', '-i', wav, '-ac', '1', '-ar', String(RATE), '-f', 'f32le', raw]);
  const bytes = await readFile(raw);
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
}

/** A, B, A with `pauseSeconds` of silence between them. */
export async function twoVoices(dir: string, pauseSeconds = 0.6): Promise<Conversation> {
  const clips = await Promise.all(LINES.map(([voice, text], i) => speakAsFloat32(dir, `line-${i}`, VOICES[voice], text)));
  const pause = Math.round(pauseSeconds * RATE);
  const total = clips.reduce((n, c) => n + c.length, 0) + pause * (clips.length - 1);
  const samples = new Float32Array(total);
  const turns: TrueTurn[] = [];
  let at = 0;
  clips.forEach((clip, i) => {
    samples.set(clip, at);
    const [first, end] = audible(clip);
    turns.push({ voice: LINES[i]![0], start: (at + first) / RATE, end: (at + end) / RATE });
    at += clip.length + pause;
  });
  return { samples, turns, seconds: total / RATE };
}

/** `times` copies of `samples` one after the other. */
export function repeated(samples: Float32Array, times: number): Float32Array {
  const out = new Float32Array(samples.length * times);
  for (let i = 0; i < times; i++) out.set(samples, i * samples.length);
  return out;
}
