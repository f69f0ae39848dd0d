/** `murmur recordings list|get`: the saved recordings of your library. */
import type { Command } from '../command.js';
import { duration, fields, table, when } from '../output.js';
import { take } from './jobs.js';

export const recordingsList: Command = {
  name: 'recordings list',
  summary: 'List your saved recordings, newest first',
  arity: [0, 0],
  options: {
    limit: { type: 'string', value: 'N', integer: [1, 10_000], description: 'At most N recordings (default 20)' },
    q: { type: 'string', value: 'WORDS', description: 'Only recordings whose title or transcript has these words' },
  },
  example: 'murmur recordings list --q budget --limit 5',
  async run(ctx, input) {
    const limit = input.integer('limit') ?? 20;
    const q = input.string('q');
    const recordings = await take((await ctx.client()).recordings.list({ limit: Math.min(limit, 100), ...(q ? { q } : {}) }), limit);
    if (ctx.out.json) return ctx.out.data(recordings);
    if (recordings.length === 0) return ctx.out.note('No recordings.');
    ctx.out.text(table(['ID', 'CREATED', 'LENGTH', 'TITLE'], recordings.map((r) => [r.id, when(r.created_at), duration(r.duration_seconds), r.title])));
  },
};

export const recordingsGet: Command = {
  name: 'recordings get',
  summary: 'Show a recording and its transcript (or only the transcript, as text or captions)',
  args: 'ID',
  arity: [1, 1],
  options: {
    format: { type: 'string', choices: ['text', 'srt', 'vtt'], description: 'Print only the transcript, in this format (speaker turns labelled)' },
  },
  example: 'murmur recordings get rec_8f2… --format vtt > talk.vtt',
  async run(ctx, input) {
    const id = input.positionals[0]!;
    const murmur = await ctx.client();
    const format = input.choice('format', ['text', 'srt', 'vtt'] as const);
    if (format && !ctx.out.json) return ctx.out.text(await murmur.recordings.transcript(id, format));
    const rec = await murmur.recordings.get(id);
    if (ctx.out.json) return ctx.out.data(rec);
    ctx.out.text(
      fields([
        ['ID', rec.id],
        ['Title', rec.title],
        ['Created', when(rec.created_at)],
        ['Length', duration(rec.duration_seconds)],
        ['Language', rec.transcript?.language],
        ['Words', rec.transcript?.word_count],
        ['Artifacts', rec.artifacts.length ? rec.artifacts.map((a) => `${a.kind} (${a.id})`).join(', ') : null],
      ]),
    );
    if (rec.transcript) ctx.out.text(`\n${rec.transcript.text}`);
  },
};
