/** `murmur jobs list|get|cancel|watch`: transcription jobs, read, stopped and followed. */
import { JobEndedError, type TranscriptionJob } from '../../jobs.js';
import type { Command } from '../command.js';
import { duration, fields, plural, table, when } from '../output.js';

const STATUSES = ['queued', 'processing', 'completed', 'failed', 'canceled'] as const;

/** A job's progress for people: `processing 42% (0:03 of 0:07)`. */
export function jobLine(job: TranscriptionJob): string {
  if (job.status === 'processing') return `processing ${Math.floor(job.progress * 100)}% (${duration(job.processed_seconds)} of ${duration(job.duration_seconds)})`;
  if (job.status === 'failed' && job.error) return `failed: ${job.error.message}`;
  return job.status;
}

/** At most `limit` items of a list, walking its pages. */
export async function take<T>(items: AsyncIterable<T>, limit: number): Promise<T[]> {
  const out: T[] = [];
  if (limit <= 0) return out;
  for await (const item of items) {
    out.push(item);
    if (out.length >= limit) break;
  }
  return out;
}

export const jobsList: Command = {
  name: 'jobs list',
  summary: 'List your transcription jobs, newest first',
  arity: [0, 0],
  options: {
    status: { type: 'string', choices: STATUSES, description: 'Only jobs in this status' },
    limit: { type: 'string', value: 'N', integer: [1, 10_000], description: 'At most N jobs (default 20)' },
  },
  example: 'murmur jobs list --status processing',
  async run(ctx, input) {
    const limit = input.integer('limit') ?? 20;
    const status = input.choice('status', STATUSES);
    const jobs = await take((await ctx.client()).transcriptions.list({ limit: Math.min(limit, 100), ...(status ? { status } : {}) }), limit);
    if (ctx.out.json) return ctx.out.data(jobs);
    if (jobs.length === 0) return ctx.out.note('No jobs.');
    ctx.out.text(table(['ID', 'STATUS', 'DURATION', 'CREATED', 'RECORDING'], jobs.map((j) => [j.id, jobLine(j), duration(j.duration_seconds), when(j.created_at), j.recording_id ?? ''])));
  },
};

export const jobsGet: Command = {
  name: 'jobs get',
  summary: 'Show a job (and its transcript once completed)',
  args: 'ID',
  arity: [1, 1],
  options: {},
  example: 'murmur jobs get trn_2x9…',
  async run(ctx, input) {
    const job = await (await ctx.client()).transcriptions.get(input.positionals[0]!);
    if (ctx.out.json) return ctx.out.data(job);
    ctx.out.text(
      fields([
        ['ID', job.id],
        ['Status', jobLine(job)],
        ['Duration', duration(job.duration_seconds)],
        ['Created', when(job.created_at)],
        ['Finished', when(job.finished_at)],
        ['Credits', job.credits_charged !== null ? plural(job.credits_charged, 'credit') + ' charged' : plural(job.credits_reserved, 'credit') + ' reserved'],
        ['Recording', job.recording_id],
        ['Error', job.error ? `${job.error.code}: ${job.error.message}` : null],
      ]),
    );
    if (job.text) ctx.out.text(`\n${job.text}`);
  },
};

export const jobsCancel: Command = {
  name: 'jobs cancel',
  summary: 'Cancel a queued or processing job (its credits come back)',
  args: 'ID',
  arity: [1, 1],
  options: {},
  example: 'murmur jobs cancel trn_2x9…',
  async run(ctx, input) {
    const job = await (await ctx.client()).transcriptions.cancel(input.positionals[0]!);
    if (ctx.out.json) return ctx.out.data(job);
    ctx.out.text(`${job.id} ${job.status}`);
  },
};

export const jobsWatch: Command = {
  name: 'jobs watch',
  summary: 'Follow a job’s progress until it ends',
  args: 'ID',
  arity: [1, 1],
  description:
    'Prints a line at every change of the job (with --json, the job as one JSON object per line) until it ends; ' +
    'exits 0 when it completed, 9 when it failed or was canceled.',
  options: {},
  example: 'murmur jobs watch trn_2x9… --json | jq .progress',
  async run(ctx, input) {
    const id = input.positionals[0]!;
    let last = '';
    // Every change once: the end comes as an event, or (the stream dropped) from the poll that follows.
    const show = (job: TranscriptionJob) => {
      const line = ctx.out.json ? JSON.stringify(job) : `${job.id} ${jobLine(job)}`;
      if (line !== last) ctx.out.text(line);
      last = line;
    };
    try {
      show(await (await ctx.client()).transcriptions.wait(id, { onProgress: show }));
    } catch (err) {
      if (err instanceof JobEndedError) show(err.job);
      throw err;
    }
  },
};
