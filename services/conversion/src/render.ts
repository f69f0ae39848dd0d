/**
 * The one rendering path: a structured {@link Artifact} → Markdown (the default) or plain
 * text, where a spreadsheet becomes RFC 4180 CSV. Every engine's output goes through here.
 * Markdown escapes the characters transcript text could use to break formatting; plain text
 * uses no markup beyond "-" list dashes.
 */
import type { ActionItem, Artifact, EmailArtifact, MeetingNotesArtifact, SpreadsheetArtifact } from './artifacts';
import { toCsv } from './csv';
import { withWeekday } from './nlp/dates';

export type OutputFormatName = 'markdown' | 'plain';

/** Escapes Markdown syntax in text that came from a transcript or a model. */
export function escapeMarkdown(text: string): string {
  return text
    .replace(/([\\`*_[\]<>|])/g, '\\$1')
    .replace(/^(\s*)([#+>-])/, '$1\\$2')
    .replace(/^(\s*\d+)\.(\s)/, '$1\\.$2');
}

/** A Markdown table cell: escaped, on one line. */
export function markdownCell(text: string): string {
  return escapeMarkdown(text.replace(/\s*[\r\n]+\s*/g, ' ')).trim();
}

/** A Markdown table: header, separator, rows; every row has the header's column count. */
export function markdownTable(columns: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${columns.map((_, i) => markdownCell(cells[i] ?? '')).join(' | ')} |`;
  return [line(columns), `| ${columns.map(() => '---').join(' | ')} |`, ...rows.map(line)].join('\n');
}

/** Sentences grouped into paragraphs of at most `size`. */
function paragraphs(sentences: readonly string[], size = 4): string[] {
  if (sentences.length <= size + 1) return [sentences.join(' ')];
  const count = Math.ceil(sentences.length / size);
  const per = Math.ceil(sentences.length / count);
  const out: string[] = [];
  for (let i = 0; i < sentences.length; i += per) out.push(sentences.slice(i, i + per).join(' '));
  return out;
}

const dueSuffix = (item: ActionItem) => (item.due ? ` (due ${withWeekday(item.due)})` : '');

function actionLineMarkdown(item: ActionItem, checkbox: boolean): string {
  return `- ${checkbox ? '[ ] ' : ''}**${escapeMarkdown(item.owner)}**: ${escapeMarkdown(item.task)}${dueSuffix(item)}`;
}

function actionLinePlain(item: ActionItem): string {
  return `- ${item.owner}: ${item.task}${dueSuffix(item)}`;
}

const NO_ACTIONS = 'No action items were found in this transcript.';

function bullets(lines: readonly string[], markdown: boolean): string {
  return lines.map((l) => `- ${markdown ? escapeMarkdown(l) : l}`).join('\n');
}

function emailMarkdown(a: EmailArtifact): string {
  const parts = [`**Subject:** ${escapeMarkdown(a.subject)}`, escapeMarkdown(a.greeting)];
  if (a.opening) parts.push(escapeMarkdown(a.opening));
  if (a.keyPoints.length > 0) parts.push('**Key points**', bullets(a.keyPoints, true));
  if (a.actionItems.length > 0) parts.push('**Next steps**', a.actionItems.map((i) => actionLineMarkdown(i, false)).join('\n'));
  if (a.closing) parts.push(escapeMarkdown(a.closing));
  parts.push(`${escapeMarkdown(a.signOff)}  \n${a.signature}`);
  return `${parts.join('\n\n')}\n`;
}

function emailPlain(a: EmailArtifact): string {
  const parts = [`Subject: ${a.subject}`, a.greeting];
  if (a.opening) parts.push(a.opening);
  if (a.keyPoints.length > 0) parts.push(`Key points:\n${bullets(a.keyPoints, false)}`);
  if (a.actionItems.length > 0) parts.push(`Next steps:\n${a.actionItems.map(actionLinePlain).join('\n')}`);
  if (a.closing) parts.push(a.closing);
  parts.push(`${a.signOff}\n${a.signature}`);
  return `${parts.join('\n\n')}\n`;
}

function notesMarkdown(a: MeetingNotesArtifact): string {
  const facts: string[] = [];
  if (a.date) facts.push(`- **Date:** ${withWeekday(a.date)}`);
  if (a.attendees.length > 0) facts.push(`- **Attendees:** ${a.attendees.map(escapeMarkdown).join(', ')}`);
  if (a.peopleMentioned.length > 0) facts.push(`- **${a.attendees.length > 0 ? 'Also mentioned' : 'People mentioned'}:** ${a.peopleMentioned.map(escapeMarkdown).join(', ')}`);
  const parts = [`## ${escapeMarkdown(a.title)}`];
  if (facts.length > 0) parts.push(facts.join('\n'));
  parts.push('### Discussion', a.discussion.length > 0 ? bullets(a.discussion, true) : 'No discussion points were found.');
  parts.push('### Decisions', a.decisions.length > 0 ? bullets(a.decisions, true) : 'No decisions were recorded.');
  parts.push('### Action items', a.actionItems.length > 0 ? a.actionItems.map((i) => actionLineMarkdown(i, true)).join('\n') : NO_ACTIONS);
  return `${parts.join('\n\n')}\n`;
}

function notesPlain(a: MeetingNotesArtifact): string {
  const facts: string[] = [];
  if (a.date) facts.push(`Date: ${withWeekday(a.date)}`);
  if (a.attendees.length > 0) facts.push(`Attendees: ${a.attendees.join(', ')}`);
  if (a.peopleMentioned.length > 0) facts.push(`${a.attendees.length > 0 ? 'Also mentioned' : 'People mentioned'}: ${a.peopleMentioned.join(', ')}`);
  const parts = [a.title];
  if (facts.length > 0) parts.push(facts.join('\n'));
  parts.push(`Discussion\n${a.discussion.length > 0 ? bullets(a.discussion, false) : 'No discussion points were found.'}`);
  parts.push(`Decisions\n${a.decisions.length > 0 ? bullets(a.decisions, false) : 'No decisions were recorded.'}`);
  parts.push(`Action items\n${a.actionItems.length > 0 ? a.actionItems.map(actionLinePlain).join('\n') : NO_ACTIONS}`);
  return `${parts.join('\n\n')}\n`;
}

function spreadsheetMarkdown(a: SpreadsheetArtifact): string {
  const title = a.title ? `## ${escapeMarkdown(a.title)}\n\n` : '';
  return `${title}${markdownTable(a.columns, a.rows)}\n`;
}

/** Renders `artifact` in `format`. */
export function renderArtifact(artifact: Artifact, format: OutputFormatName): string {
  const md = format === 'markdown';
  switch (artifact.kind) {
    case 'summary': {
      const body = artifact.bullets ? bullets(artifact.sentences, md) : paragraphs(artifact.sentences.map((s) => (md ? escapeMarkdown(s) : s))).join('\n\n');
      const next = artifact.nextSteps ?? [];
      const steps = next.length === 0 ? '' : md ? `\n\n**Next steps**\n\n${next.map((i) => actionLineMarkdown(i, false)).join('\n')}` : `\n\nNext steps:\n${next.map(actionLinePlain).join('\n')}`;
      return md ? `## ${escapeMarkdown(artifact.title)}\n\n${body}${steps}\n` : `${artifact.title}\n\n${body}${steps}\n`;
    }
    case 'key_points':
      return md ? `## ${escapeMarkdown(artifact.title)}\n\n${bullets(artifact.points, true)}\n` : `${artifact.title}\n\n${bullets(artifact.points, false)}\n`;
    case 'action_items': {
      const items = artifact.items;
      if (md) return `## Action items\n\n${items.length > 0 ? items.map((i) => actionLineMarkdown(i, true)).join('\n') : NO_ACTIONS}\n`;
      return `Action items\n\n${items.length > 0 ? items.map(actionLinePlain).join('\n') : NO_ACTIONS}\n`;
    }
    case 'email':
      return md ? emailMarkdown(artifact) : emailPlain(artifact);
    case 'spreadsheet':
      return md ? spreadsheetMarkdown(artifact) : toCsv([artifact.columns, ...artifact.rows]);
    case 'meeting_notes':
      return md ? notesMarkdown(artifact) : notesPlain(artifact);
  }
}
