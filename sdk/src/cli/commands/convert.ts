/** `murmur convert`: a transcript (stdin) or a saved recording turned into a summary, email, … */
import type { Command } from '../command.js';
import { UsageError } from '../exit-codes.js';
import { plural } from '../output.js';
import { readAll } from '../prompt.js';

export const convert: Command = {
  name: 'convert',
  summary: 'Turn a transcript (stdin) or a recording into a summary, email, action items, …',
  arity: [0, 0],
  description:
    'Reads the transcript from stdin, or uses a saved recording with --recording, and prints the artifact. ' +
    'Kinds: summary, email, spreadsheet, action_items, meeting_notes, key_points.',
  options: {
    kind: { type: 'string', value: 'KIND', description: 'What to make (default summary)' },
    format: { type: 'string', choices: ['markdown', 'plain'], description: 'Markdown (default) or plain text' },
    recording: { type: 'string', value: 'ID', description: 'Convert this saved recording instead of stdin' },
    instructions: { type: 'string', value: 'TEXT', description: 'Extra instructions (“in German”, “for the board”)' },
  },
  example: 'murmur convert --kind action_items --format plain < standup.txt',
  async run(ctx, input) {
    const recording = input.string('recording');
    let transcript: string | undefined;
    if (!recording) {
      if (ctx.stdin.isTTY) throw new UsageError('pipe a transcript into stdin (murmur convert < notes.txt), or pass --recording ID', input.command);
      transcript = (await readAll(ctx.stdin)).trim();
      if (!transcript) throw new UsageError('the transcript on stdin is empty', input.command);
    }
    const format = input.choice('format', ['markdown', 'plain'] as const);
    const instructions = input.string('instructions');
    const artifact = await (await ctx.client()).convert({
      kind: input.string('kind') ?? 'summary',
      ...(recording ? { recording_id: recording } : { transcript: transcript! }),
      ...(format ? { outputFormat: format } : {}),
      ...(instructions ? { instructions } : {}),
    });
    if (ctx.out.json) return ctx.out.data(artifact);
    ctx.out.text(artifact.content);
    ctx.out.note(`Charged ${plural(artifact.credits_charged, 'credit')}.`);
  },
};
