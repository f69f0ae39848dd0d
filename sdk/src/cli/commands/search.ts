/** `murmur search WORDS…` and `murmur ask QUESTION…`: your library, searched and asked. */
import type { Answer, SearchResult } from '../../client.js';
import type { Command } from '../command.js';
import { duration, plural } from '../output.js';
import { take } from './jobs.js';

const TYPES = ['recording', 'thought_thread', 'knowledge_base'] as const;

/** Where a passage is: `rec_… 0:12–0:20, Maria`. */
function place(r: Pick<SearchResult, 'id' | 'start' | 'end' | 'speaker' | 'speaker_name'>): string {
  const at = r.start !== null ? ` ${duration(r.start)}${r.end !== null ? `–${duration(r.end)}` : ''}` : '';
  const who = r.speaker_name ?? r.speaker;
  return `${r.id}${at}${who ? `, ${who}` : ''}`;
}

export const search: Command = {
  name: 'search',
  summary: 'Search your library for passages, best first',
  args: 'WORDS…',
  arity: [1, Infinity],
  options: {
    limit: { type: 'string', value: 'N', integer: [1, 100], description: 'At most N passages (default 10)' },
    type: { type: 'string', choices: TYPES, description: 'Only this kind of source' },
    recording: { type: 'string', value: 'ID', description: 'Only in this recording' },
  },
  example: 'murmur search budget friday --limit 3',
  async run(ctx, input) {
    const limit = input.integer('limit') ?? 10;
    const type = input.choice('type', TYPES);
    const recording = input.string('recording');
    const results = await take(
      (await ctx.client()).search({ q: input.words(), limit, ...(type ? { type: [type] } : {}), ...(recording ? { recording_id: recording } : {}) }),
      limit,
    );
    if (ctx.out.json) return ctx.out.data(results);
    if (results.length === 0) return ctx.out.note('Nothing found.');
    ctx.out.text(results.map((r, i) => `${i + 1}. ${r.title} (${place(r)})\n   ${r.passage.replace(/\s+/g, ' ')}`).join('\n\n'));
  },
};

/** An answer with its sources, numbered as it cites them (`[1]`). */
export function answerText(answer: Answer): string {
  const sources = answer.citations.map((c, i) => `[${i + 1}] ${c.title} (${place(c)})`);
  return sources.length ? `${answer.answer}\n\nSources:\n${sources.join('\n')}` : answer.answer;
}

export const ask: Command = {
  name: 'ask',
  summary: 'Ask your library a question; the answer cites its passages',
  args: 'QUESTION…',
  arity: [1, Infinity],
  options: {
    type: { type: 'string', choices: TYPES, description: 'Only from this kind of source' },
    recording: { type: 'string', value: 'ID', description: 'Only from this recording' },
  },
  example: 'murmur ask what did we decide about the budget?',
  async run(ctx, input) {
    const type = input.choice('type', TYPES);
    const recording = input.string('recording');
    const answer = await (await ctx.client()).ask({ question: input.words(), ...(type ? { type: [type] } : {}), ...(recording ? { recording_id: recording } : {}) });
    if (ctx.out.json) return ctx.out.data(answer);
    ctx.out.text(answerText(answer));
    ctx.out.note(`Charged ${plural(answer.credits_charged, 'credit')}.`);
  },
};
