/**
 * Real speech for the tests, generated on the fly into a temp folder (nothing is committed):
 * espeak-ng speaks known sentences, ffmpeg converts them to other formats, and the
 * pocketsphinx-testdata package supplies human recordings with their transcripts.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const exec = promisify(execFile);

export { LIBRIVOX_DIR, librivoxUtterances, ffmpeg, placeUtterances, probeSeconds, tempDir, wordsAtTheirPlaces, type Utterance } from '../src/speech-fixtures';

/** Sentences espeak-ng speaks for the accuracy tests. */
export const ESPEAK_SENTENCES = [
  'the quick brown fox jumps over the lazy dog',
  'one two three four five six seven eight nine ten',
  'she sells sea shells by the sea shore',
  "please call me tomorrow morning at nine o'clock",
  'the weather today is sunny and warm',
  'i would like to order a large pizza with extra cheese',
  'we need to finish the project before the end of the month',
  'can you send me the report by friday afternoon',
  'my phone number is five five five one two three four',
  'the meeting has been moved to next tuesday',
];

export async function run(cmd: string, args: string[]): Promise<void> {
  await exec(cmd, args, { maxBuffer: 16 * 1024 * 1024 });
}

/** Speaks `text` with espeak-ng (US English, 150 words a minute) into a WAV file. */
export async function speak(file: string, text: string): Promise<string> {
  await run('espeak-ng', ['-v', 'en-us', '-s', '150', '-w', file, text]);
  return file;
}

/** 16 kHz mono PCM: a 440 Hz tone for "speech" parts, digital silence for pauses. */
export function synthPcm(parts: Array<['tone' | 'silence', number]>): Buffer {
  return Buffer.concat(
    parts.map(([kind, seconds]) => {
      const samples = Math.round(seconds * 16_000);
      const buf = Buffer.alloc(samples * 2);
      if (kind === 'tone') for (let i = 0; i < samples; i++) buf.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 16_000)), i * 2);
      return buf;
    }),
  );
}
