/**
 * `murmur transcribe FILE|URL`: one call to POST /transcribe (or, with `--job`, a job followed to
 * its end), the upload's bytes and the job's progress as bars on stderr, the transcript on stdout.
 */
import { stat } from 'node:fs/promises';
import type { FormattedTranscript, Transcription } from '../../client.js';
import type { TranscriptFormat, TranscriptionJob, TranscriptionOptions } from '../../jobs.js';
import type { AudioInput } from '../../uploads.js';
import type { Input } from '../args.js';
import type { Command, Context, Stdin } from '../command.js';
import { EXIT, UsageError, type ExitCode } from '../exit-codes.js';
import { duration, plural, type Output } from '../output.js';
import { bytesDetail } from '../progress.js';

const FORMATS = ['text', 'json', 'srt', 'vtt'] as const;

/** The audio a command line names: `-` (stdin), an http(s) URL, or a file that exists. */
export async function audioOf(source: string, stdin: Stdin, command: string): Promise<AudioInput> {
  if (source === '-') {
    if (stdin.isTTY) throw new UsageError("'-' reads the audio from stdin: pipe a file into it", command);
    return stdin as AsyncIterable<Uint8Array>;
  }
  if (/^https?:\/\//i.test(source)) return source;
  const info = await stat(source).catch(() => undefined);
  if (!info) throw new UsageError(`no such file: ${source}`, command);
  if (!info.isFile()) throw new UsageError(`not a file: ${source}`, command);
  return source;
}

/** The transcription options of the command line. */
function optionsOf(input: Input): TranscriptionOptions {
  const language = input.string('language');
  const title = input.string('title');
  return {
    ...(language ? { language } : {}),
    ...(input.flag('save') ? { save: true } : {}),
    ...(title ? { title } : {}),
    ...(input.flag('words') ? { words: true } : {}),
    ...(input.flag('diarize') ? { diarize: true } : {}),
  };
}

/** The format to print: `--format`, `json` with `--json`; both at once must agree. */
function formatOf(input: Input, json: boolean): (typeof FORMATS)[number] {
  const format = input.choice('format', FORMATS);
  if (json && format && format !== 'json') throw new UsageError(`--json prints the transcription as JSON; drop it to print --format ${format}`, input.command);
  return json ? 'json' : (format ?? 'text');
}

/** Uploads with a bar of bytes; once sent, a line saying what happens now (`Transcribing…`). */
function uploadBar(out: Output, afterUpload: string) {
  const upload = out.bar('Uploading');
  let waiting: ReturnType<Output['bar']> | undefined;
  return {
    onUploadProgress: ({ loaded, total }: { loaded: number; total: number | null }) => {
      upload.update(total ? loaded / total : null, bytesDetail(loaded, total));
      if (total !== null && loaded >= total && !waiting) {
        upload.done();
        waiting = out.bar(afterUpload);
        waiting.update(null);
      }
    },
    done: () => {
      upload.done();
      waiting?.done();
    },
  };
}

function saved(out: Output, result: { credits_charged: number | null; recording_id: string | null }): void {
  const parts = [`Charged ${plural(result.credits_charged ?? 0, 'credit')}.`];
  if (result.recording_id) parts.push(`Saved as recording ${result.recording_id}.`);
  out.note(parts.join(' '));
}

async function transcribeNow(ctx: Context, audio: AudioInput, options: TranscriptionOptions, format: (typeof FORMATS)[number]): Promise<void> {
  const murmur = await ctx.client();
  const bar = uploadBar(ctx.out, 'Transcribing…');
  let result: Transcription | FormattedTranscript;
  try {
    result = await murmur.transcribe({ audio, ...options, response_format: format }, { onUploadProgress: bar.onUploadProgress });
  } finally {
    bar.done();
  }
  if ('content' in result) ctx.out.text(result.content);
  else ctx.out.data(result);
  saved(ctx.out, result);
}

async function transcribeAsJob(ctx: Context, audio: AudioInput, options: TranscriptionOptions, format: (typeof FORMATS)[number]): Promise<ExitCode | void> {
  const murmur = await ctx.client();
  const bar = uploadBar(ctx.out, 'Submitting…');
  let job: TranscriptionJob;
  try {
    job = await murmur.transcriptions.create({ audio, ...options }, { onUploadProgress: bar.onUploadProgress });
  } finally {
    bar.done();
  }
  ctx.out.note(`Job ${job.id} ${job.status}.`);
  const progress = ctx.out.bar('Transcribing');
  let done: TranscriptionJob;
  try {
    done = await ctx.interruptible((signal) =>
      murmur.transcriptions.wait(job.id, {
        signal,
        ...(options.words ? { words: true } : {}),
        onProgress: (j) => progress.update(j.status === 'queued' ? 0 : j.progress, j.status === 'queued' ? 'queued' : `${duration(j.processed_seconds)} of ${duration(j.duration_seconds)}`),
      }),
    );
  } catch (err) {
    progress.done();
    if (err instanceof Error && err.name === 'AbortError') {
      ctx.out.error(`Stopped following ${job.id}; the job goes on. Follow it with: murmur jobs watch ${job.id}`);
      return EXIT.interrupted;
    }
    throw err;
  }
  progress.done();
  if (format === 'json') ctx.out.data(done);
  else ctx.out.text(await murmur.transcriptions.transcript(done.id, format as TranscriptFormat));
  saved(ctx.out, done);
}

export const transcribe: Command = {
  name: 'transcribe',
  summary: 'Transcribe an audio file or URL and print its transcript',
  args: 'FILE|URL|-',
  arity: [1, 1],
  description:
    'Uploads the audio (streamed, up to 500 MB; `-` reads it from stdin), or has Murmur download a public http(s) URL, ' +
    'and prints the transcript on stdout. With --job it is submitted as a job and followed to its end (long audio; ' +
    'Ctrl-C stops following, not the job). Progress bars go to stderr on a terminal.',
  options: {
    job: { type: 'boolean', description: 'Submit a job and follow its progress (for long audio)' },
    format: { type: 'string', choices: FORMATS, description: 'What to print: the text (default), the JSON object, or captions' },
    save: { type: 'boolean', description: 'Save it as a recording in your library (its id is printed on stderr)' },
    title: { type: 'string', value: 'TITLE', description: "The saved recording's title" },
    language: { type: 'string', value: 'LANG', description: 'The spoken language (`en`, `de`, …; default auto)' },
    words: { type: 'boolean', description: 'Add word timings (to the JSON)' },
    diarize: { type: 'boolean', description: 'Tell the speakers apart (turns labelled in text and captions)' },
  },
  example: 'murmur transcribe standup.m4a --save --title "Standup" --format srt > standup.srt',
  async run(ctx, input) {
    const format = formatOf(input, ctx.out.json);
    const audio = await audioOf(input.positionals[0]!, ctx.stdin, input.command);
    const options = optionsOf(input);
    if (input.flag('job')) return transcribeAsJob(ctx, audio, options, format);
    return transcribeNow(ctx, audio, options, format);
  },
};
