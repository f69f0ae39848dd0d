/**
 * The structured form of every artifact kind. Every engine produces one of these — the local
 * engine by extraction, the LLM engines as JSON constrained by {@link artifactJsonSchema} and
 * checked by {@link parseArtifact} — and one set of renderers turns it into Markdown or plain
 * text, so an artifact reads the same whichever engine wrote it.
 */
import { z } from '@murmur/kit';
import type { KindName } from './kinds';
import { normalizeDue } from './nlp/dates';

/** One thing someone has to do. `due` is an ISO date (`YYYY-MM-DD`) or "" when none was said. */
export interface ActionItem {
  owner: string;
  task: string;
  due: string;
}

export interface SummaryArtifact {
  kind: 'summary';
  title: string;
  sentences: string[];
  /** Bullets instead of paragraphs (asked for in the instructions). */
  bullets: boolean;
  /** What happens next, when the summary's sentences leave the assignments out (the local engine). */
  nextSteps?: ActionItem[];
}

export interface KeyPointsArtifact {
  kind: 'key_points';
  title: string;
  points: string[];
}

export interface ActionItemsArtifact {
  kind: 'action_items';
  items: ActionItem[];
}

export interface EmailArtifact {
  kind: 'email';
  subject: string;
  greeting: string;
  opening: string;
  keyPoints: string[];
  actionItems: ActionItem[];
  closing: string;
  signOff: string;
  signature: string;
}

export interface SpreadsheetArtifact {
  kind: 'spreadsheet';
  title: string;
  columns: string[];
  rows: string[][];
}

export interface MeetingNotesArtifact {
  kind: 'meeting_notes';
  title: string;
  /** ISO date of the meeting, or "". */
  date: string;
  /** Speakers of a diarised transcript. */
  attendees: string[];
  /** Other people the transcript names. */
  peopleMentioned: string[];
  discussion: string[];
  decisions: string[];
  actionItems: ActionItem[];
}

export type Artifact =
  | SummaryArtifact
  | KeyPointsArtifact
  | ActionItemsArtifact
  | EmailArtifact
  | SpreadsheetArtifact
  | MeetingNotesArtifact;

/** Bounds that keep a grammar-constrained model from writing forever, and outputs sane. */
export const LIMITS = {
  title: 200,
  sentence: 600,
  name: 80,
  date: 10,
  items: 50,
  columns: 12,
  cell: 400,
  rows: 200,
} as const;

type JsonSchema = Record<string, unknown>;

const str = (maxLength: number, description?: string): JsonSchema => ({ type: 'string', maxLength, ...(description ? { description } : {}) });
const list = (items: JsonSchema, maxItems: number = LIMITS.items): JsonSchema => ({ type: 'array', items, maxItems });
const object = (properties: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
});

const actionItemSchema = object({
  owner: str(LIMITS.name, 'Who does it: a person named in the transcript, "Speaker" for the person talking, or "Team".'),
  task: str(LIMITS.sentence, 'What to do, starting with a verb.'),
  due: str(LIMITS.date, 'Deadline as YYYY-MM-DD, or "" when none was said.'),
});

const SCHEMAS: Record<KindName, JsonSchema> = {
  summary: object({ title: str(LIMITS.title), sentences: list(str(LIMITS.sentence), 25) }),
  key_points: object({ title: str(LIMITS.title), points: list(str(LIMITS.sentence), 25) }),
  action_items: object({ items: list(actionItemSchema) }),
  email: object({
    subject: str(LIMITS.title),
    greeting: str(LIMITS.name),
    opening: str(LIMITS.sentence),
    keyPoints: list(str(LIMITS.sentence), 15),
    actionItems: list(actionItemSchema, 25),
    closing: str(LIMITS.sentence),
    signOff: str(LIMITS.name),
    signature: str(LIMITS.name),
  }),
  spreadsheet: object({
    title: str(LIMITS.title),
    columns: list(str(LIMITS.name), LIMITS.columns),
    rows: list(list(str(LIMITS.cell), LIMITS.columns), LIMITS.rows),
  }),
  meeting_notes: object({
    title: str(LIMITS.title),
    date: str(LIMITS.date, 'YYYY-MM-DD or ""'),
    attendees: list(str(LIMITS.name), 30),
    peopleMentioned: list(str(LIMITS.name), 30),
    discussion: list(str(LIMITS.sentence), 25),
    decisions: list(str(LIMITS.sentence), 25),
    actionItems: list(actionItemSchema, 25),
  }),
};

/** The JSON schema of one kind's structured output (no `kind` field; the caller knows it). */
export function artifactJsonSchema(kind: KindName): JsonSchema {
  return SCHEMAS[kind];
}

const text = (max: number) => z.string().transform((s) => s.replace(/\s+/g, ' ').trim().slice(0, max));
const texts = (max: number, count: number) => z.array(text(max)).transform((xs) => xs.filter((x) => x !== '').slice(0, count));
const actionItem = z.object({ owner: text(LIMITS.name), task: text(LIMITS.sentence), due: z.string() });

const PARSERS = {
  summary: z.object({ title: text(LIMITS.title), sentences: texts(LIMITS.sentence, 25) }),
  key_points: z.object({ title: text(LIMITS.title), points: texts(LIMITS.sentence, 25) }),
  action_items: z.object({ items: z.array(actionItem).max(LIMITS.items) }),
  email: z.object({
    subject: text(LIMITS.title),
    greeting: text(LIMITS.name),
    opening: text(LIMITS.sentence),
    keyPoints: texts(LIMITS.sentence, 15),
    actionItems: z.array(actionItem).max(25),
    closing: text(LIMITS.sentence),
    signOff: text(LIMITS.name),
    signature: text(LIMITS.name),
  }),
  spreadsheet: z.object({
    title: text(LIMITS.title),
    columns: texts(LIMITS.name, LIMITS.columns),
    rows: z.array(z.array(z.string())).max(LIMITS.rows),
  }),
  meeting_notes: z.object({
    title: text(LIMITS.title),
    date: z.string(),
    attendees: texts(LIMITS.name, 30),
    peopleMentioned: texts(LIMITS.name, 30),
    discussion: texts(LIMITS.sentence, 25),
    decisions: texts(LIMITS.sentence, 25),
    actionItems: z.array(actionItem).max(25),
  }),
} as const;

/** Why a model's output could not be used; the engine turns it into conversion_failed. */
export class UnusableOutputError extends Error {
  override readonly name = 'UnusableOutputError';
}

function items(raw: { owner: string; task: string; due: string }[], reference: Date): ActionItem[] {
  return raw
    .map((i) => ({ owner: i.owner || 'Unassigned', task: i.task, due: normalizeDue(i.due, reference) }))
    .filter((i) => i.task !== '');
}

/**
 * Checks a model's structured output against the kind's shape and normalises it (whitespace,
 * lengths, due dates read against `reference`). Throws {@link UnusableOutputError} when it
 * does not fit or says nothing.
 */
export function parseArtifact(kind: KindName, value: unknown, options: { reference: Date; bullets: boolean }): Artifact {
  const parsed = PARSERS[kind].safeParse(value);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new UnusableOutputError(`output does not match the ${kind} schema${first ? ` at ${first.path.join('.') || '(root)'}: ${first.message}` : ''}`);
  }
  const v = parsed.data;
  const ref = options.reference;
  let out: Artifact;
  switch (kind) {
    case 'summary': {
      const s = v as z.infer<typeof PARSERS.summary>;
      if (s.sentences.length === 0) throw new UnusableOutputError('the summary is empty');
      out = { kind, title: s.title, sentences: s.sentences, bullets: options.bullets };
      break;
    }
    case 'key_points': {
      const s = v as z.infer<typeof PARSERS.key_points>;
      if (s.points.length === 0) throw new UnusableOutputError('there are no key points');
      out = { kind, title: s.title, points: s.points };
      break;
    }
    case 'action_items': {
      const s = v as z.infer<typeof PARSERS.action_items>;
      out = { kind, items: items(s.items, ref) };
      break;
    }
    case 'email': {
      const s = v as z.infer<typeof PARSERS.email>;
      if (s.subject === '' || (s.keyPoints.length === 0 && s.opening === '')) throw new UnusableOutputError('the email has no subject or body');
      out = { kind, ...s, actionItems: items(s.actionItems, ref) };
      break;
    }
    case 'spreadsheet': {
      const s = v as z.infer<typeof PARSERS.spreadsheet>;
      if (s.columns.length === 0) throw new UnusableOutputError('the spreadsheet has no columns');
      const width = s.columns.length;
      const rows = s.rows
        .map((r) => Array.from({ length: width }, (_, i) => (r[i] ?? '').replace(/\s+/g, ' ').trim().slice(0, LIMITS.cell)))
        .filter((r) => r.some((c) => c !== ''));
      out = { kind, title: s.title, columns: s.columns, rows };
      break;
    }
    case 'meeting_notes': {
      const s = v as z.infer<typeof PARSERS.meeting_notes>;
      if (s.discussion.length + s.decisions.length + s.actionItems.length === 0) throw new UnusableOutputError('the meeting notes are empty');
      out = { kind, ...s, date: normalizeDue(s.date, ref), actionItems: items(s.actionItems, ref) };
      break;
    }
  }
  return out;
}
