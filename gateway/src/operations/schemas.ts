/**
 * Input schemas shared by REST and MCP (zod): one definition of each AI operation's parameters,
 * so both front ends accept and refuse exactly the same input. Issues become invalid_request with
 * `param` set to the offending field.
 */
import { z } from 'zod';
import { MurmurError } from '@murmur/kit';

export const CONVERT_FORMATS = ['markdown', 'plain'] as const;

export const convertInputSchema = z
  .object({
    transcript: z.string().optional().describe('The transcript text to convert. Give this or recording_id, not both.'),
    recording_id: z.string().optional().describe('A recording of yours whose transcript to convert; the artifact is stored on it.'),
    kind: z.string().describe('What to produce: summary, email, spreadsheet, action_items, meeting_notes or key_points.'),
    outputFormat: z.enum(CONVERT_FORMATS).optional().describe('"plain" for plain text (a spreadsheet becomes CSV); omitted or "markdown" for Markdown.'),
    instructions: z.string().max(4000).optional().describe('Free-text guidance such as length, tone or audience.'),
  })
  .strict();

export type ConvertInput = z.infer<typeof convertInputSchema>;

/** Validates with `schema`, turning the first issue into invalid_request naming the field. */
export function parseInput<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const keys = issue.code === 'unrecognized_keys' ? (issue as { keys?: string[] }).keys ?? [] : [];
  const param = keys[0] ?? (issue.path.length > 0 ? issue.path.map(String).join('.') : null);
  const what = param ? `\`${param}\`` : 'The body';
  const detail = issue.code === 'unrecognized_keys' ? 'is not a parameter of this operation' : issue.message.replace(/^Invalid input: /, '');
  throw new MurmurError('invalid_request', `${what} ${detail}.`, { param });
}
