/**
 * An artifact as data (`data` of a conversion: ConvertResponse.data, POST /convert, the MCP
 * tool's structuredContent): the structure every engine produced, per kind, in the API's
 * snake_case, with a missing due date as null. Its shape is the gateway's
 * `artifactDataShape` (gateway/src/operations/shapes.ts), which the OpenAPI document publishes.
 */
import type { ActionItem, Artifact } from './artifacts';
import { renderArtifact } from './render';

export interface ActionItemData {
  task: string;
  owner: string;
  /** YYYY-MM-DD, or null when none was said. */
  due: string | null;
}

const item = (a: ActionItem): ActionItemData => ({ task: a.task, owner: a.owner, due: a.due === '' ? null : a.due });

/** "Due date" → "due_date": a spreadsheet column as a row's key; repeated names get _2, _3…. */
export function columnKeys(columns: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return columns.map((c, i) => {
    const base = c.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '') || `column_${i + 1}`;
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    return n === 1 ? base : `${base}_${n}`;
  });
}

export function artifactData(a: Artifact): Record<string, unknown> {
  switch (a.kind) {
    case 'summary':
      return { title: a.title, sentences: a.sentences, next_steps: (a.nextSteps ?? []).map(item) };
    case 'key_points':
      return { title: a.title, points: a.points };
    case 'action_items':
      return { items: a.items.map(item) };
    case 'spreadsheet': {
      const keys = columnKeys(a.columns);
      return { title: a.title, columns: a.columns, rows: a.rows.map((row) => Object.fromEntries(keys.map((k, i) => [k, row[i] ?? '']))) };
    }
    case 'email': {
      // The message as it would be sent: everything after the subject line, in plain text.
      const body = renderArtifact(a, 'plain').replace(/^Subject: [^\n]*\n\n/, '');
      return { subject: a.subject, body };
    }
    case 'meeting_notes':
      return {
        title: a.title,
        date: a.date === '' ? null : a.date,
        attendees: a.attendees,
        people_mentioned: a.peopleMentioned,
        discussion: a.discussion,
        decisions: a.decisions,
        action_items: a.actionItems.map(item),
      };
  }
}
