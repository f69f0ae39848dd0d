/**
 * The artifact kinds conversion produces, with the descriptions ListKinds returns. The order
 * is the order of the public docs: the app's original three first.
 */
import { invalidParam, type MurmurError } from '@murmur/contract';

export const KINDS = [
  { name: 'summary', description: 'A short summary of the transcript in its own words, most important points first in the order they were said.' },
  { name: 'email', description: 'A follow-up email draft: subject, greeting, key points, action items with owners and due dates, and a sign-off.' },
  { name: 'spreadsheet', description: 'A table of the action items (owner, task, due date), or of the key points when there are none; CSV in plain format.' },
  { name: 'action_items', description: 'A checklist of who does what by when; due dates are read relative to when the recording was made.' },
  { name: 'meeting_notes', description: 'Meeting notes: date, attendees, discussion points, decisions and action items.' },
  { name: 'key_points', description: 'The key points of the transcript as a bullet list.' },
] as const;

export type KindName = (typeof KINDS)[number]['name'];

export const KIND_NAMES: readonly KindName[] = KINDS.map((k) => k.name);

export function isKindName(value: string): value is KindName {
  return (KIND_NAMES as readonly string[]).includes(value);
}

/** The error for a kind this service does not produce; it lists the valid ones. */
export function unknownKind(kind: string): MurmurError {
  const shown = kind.length > 40 ? `${kind.slice(0, 40)}…` : kind;
  return invalidParam(
    'kind',
    `${kind.trim() === '' ? 'kind is required' : `Unknown kind "${shown}"`}. Use one of: ${KIND_NAMES.join(', ')}.`,
  );
}
