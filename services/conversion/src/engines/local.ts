/**
 * The local engine: extractive, offline, instant — the default. It reads the transcript once
 * with wink-nlp, ranks sentences by centrality, finds people, decisions and action items
 * (chrono-node for due dates) and assembles the structured artifact of the asked kind, which
 * the shared renderers write out. It never invents text: every point is a tidied sentence of
 * the transcript, every action item a clause of one. Cost grows linearly with the transcript.
 */
import type { ActionItem, Artifact } from '../artifacts';
import type { KindName } from '../kinds';
import { findActionItems, type FoundAction } from '../nlp/actions';
import { isMeta, tidySentence } from '../nlp/clean';
import { isoDate } from '../nlp/dates';
import { findDecisions } from '../nlp/decisions';
import { readTranscript, type TranscriptDoc } from '../nlp/document';
import { parseInstructions, type LocalInstructions } from '../nlp/instructions';
import { findPeople, type People } from '../nlp/people';
import { rankSentences, selectDiverse, type Ranked } from '../nlp/rank';
import { findTopics } from '../nlp/topics';
import { extractiveAnswer } from '../answers';
import type { AnswerInput, ConversionEngine, EngineAnswer, EngineInput } from './engine';

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
/** Most action items an email lists before pointing at the full list. */
const EMAIL_MAX_ACTIONS = 12;

/** Words that make a recording a meeting or a call rather than a note ("call the plumber" is not). */
const MEETING_WORDS = /\b(?:meeting|sync|stand-?up|retro|review|1:1|one-on-one|session|interview|planning|phone)\b|\bcall\b(?!\s+(?:the|a|an|my|him|her|them|me|us|back)\b)/i;

const FIRST_PERSON = /\b(?:I|I'm|I'd|I'll|I've|my|me|mine|myself)\b/;

const clamp = (x: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, x));

/** How many sentences a summary-like list gets: grows with √n, bent by the instructions. */
export function pointCount(sentences: number, base: { factor: number; min: number; max: number }, instr: LocalInstructions): number {
  if (instr.count !== null) return Math.min(instr.count, sentences);
  const normal = clamp(Math.round(base.factor * Math.sqrt(sentences)), base.min, base.max);
  const n = instr.length === 'short' ? clamp(Math.round(normal / 2), 1, 3) : instr.length === 'detailed' ? Math.min(normal * 2, 25) : normal;
  return Math.min(n, sentences);
}

/** The parts of one reading of a transcript, computed on first use. */
class Reading {
  readonly doc: TranscriptDoc;
  private rankedCache?: Ranked[];
  private peopleCache?: People;
  private actionsCache?: FoundAction[];

  constructor(transcript: string, readonly reference: Date) {
    this.doc = readTranscript(transcript);
  }

  get ranked(): Ranked[] {
    this.rankedCache ??= rankSentences(this.doc.sentences);
    return this.rankedCache;
  }

  get people(): People {
    this.peopleCache ??= findPeople(this.doc);
    return this.peopleCache;
  }

  get actions(): FoundAction[] {
    this.actionsCache ??= findActionItems(this.doc, this.people, this.reference);
    return this.actionsCache;
  }

  /** Sentences that state an action item. */
  actionSentences(): Set<number> {
    return new Set(this.actions.flatMap((a) => a.sentences));
  }

  /**
   * Sentences a summary leaves to the action items — unless the note is mostly a to-do list,
   * when the to-dos are the content.
   */
  assignmentSentences(): Set<number> {
    const acted = this.actionSentences();
    if (acted.size > 0.4 * this.doc.sentences.length) return new Set();
    for (const d of findDecisions(this.doc.sentences)) acted.delete(d.sentence);
    return acted;
  }

  topics(limit: number): string[] {
    const nameWords = new Set([...this.people.attendees, ...this.people.mentioned].flatMap((p) => p.split(' ')));
    return findTopics(this.doc.sentences, limit, (w) => nameWords.has(w) || this.people.canonical(w) !== null);
  }

  /**
   * The `k` best quotable sentences by `scoreOf`, tidied, in transcript order. With
   * `attribute`, a first-person sentence of a diarised transcript names its speaker
   * ("Dana: Four of the six people I talked to …"), so a list never puts one person's "I" in
   * another's mouth.
   */
  points(k: number, scoreOf: (r: Ranked) => number, exclude: ReadonlySet<number> = new Set(), attribute = false): string[] {
    const quotable = this.ranked.filter((r) => !exclude.has(r.sentence.index) && !isMeta(r.sentence.text) && r.sentence.tokens.length >= 5 && !r.sentence.text.trim().endsWith('?'));
    const seen = new Set<string>();
    return selectDiverse(quotable, k, scoreOf)
      .map((r) => {
        const text = tidySentence(r.sentence.text);
        const speaker = r.sentence.speaker;
        return attribute && speaker && FIRST_PERSON.test(text) ? `${this.people.canonical(speaker) ?? speaker}: ${text}` : text;
      })
      .filter((t) => t.split(/\s+/).length >= 4 && !seen.has(t) && seen.add(t));
  }
}

function joinPhrases(xs: string[]): string {
  if (xs.length <= 1) return xs[0] ?? '';
  return `${xs.slice(0, -1).join(', ')} and ${xs[xs.length - 1]}`;
}

function spokenDate(at: Date): string {
  return `${DAYS[at.getUTCDay()]}, ${at.getUTCDate()} ${MONTHS[at.getUTCMonth()]}`;
}

/**
 * The one person a recap naturally goes to: "1:1 with Hannah", "call with Felix" in the
 * opening sentences. Interviews are excluded — notes about a candidate never go to them.
 */
function counterpart(r: Reading): string | null {
  if (r.doc.sentences.length > 80) return null;
  const opening = r.doc.sentences.slice(0, 2).map((s) => s.text).join(' ');
  const m = /\b(?:1:1|one-on-one|call|phone|chat|catch-up|sync|meeting)\s+with\s+([A-Z][a-z'’-]+(?:\s+[A-Z][a-z'’-]+)?)/.exec(opening);
  if (!m || /\binterview/i.test(opening)) return null;
  const person = r.people.canonical(m[1]!);
  return person ? person.split(' ')[0]! : null;
}

const plainItem = (a: FoundAction): ActionItem => ({ owner: a.owner, task: a.task, due: a.due });

/** At most this many next steps close a summary (the action_items kind lists them all). */
const SUMMARY_NEXT_STEPS = 5;

function summary(r: Reading, instr: LocalInstructions): Artifact {
  const k = pointCount(r.doc.sentences.length, { factor: 0.9, min: 2, max: 8 }, instr);
  const decided = new Set(findDecisions(r.doc.sentences).map((d) => d.sentence));
  const assignments = r.assignmentSentences();
  const sentences = r.points(k, (x) => x.score + (decided.has(x.sentence.index) ? 0.25 : 0), assignments);
  // The assignments the sentences leave out are still what happens next: named, briefly.
  const nextSteps = r.actions.filter((a) => a.sentences.some((i) => assignments.has(i))).slice(0, SUMMARY_NEXT_STEPS).map(plainItem);
  return {
    kind: 'summary',
    title: 'Summary',
    sentences: sentences.length > 0 ? sentences : [tidySentence(r.doc.sentences[0]?.text ?? '')],
    bullets: instr.bullets,
    ...(nextSteps.length > 0 ? { nextSteps } : {}),
  };
}

function keyPointsOf(r: Reading, instr: LocalInstructions, exclude?: ReadonlySet<number>): string[] {
  const decided = new Set(findDecisions(r.doc.sentences).map((d) => d.sentence));
  const k = pointCount(r.doc.sentences.length, { factor: 1.3, min: 3, max: 15 }, instr);
  const points = r.points(k, (x) => x.score + (x.informative ? 0.1 : 0) + (decided.has(x.sentence.index) ? 0.2 : 0), exclude ?? r.assignmentSentences(), true);
  return points.length > 0 ? points : [tidySentence(r.doc.sentences[0]?.text ?? '')];
}

function email(r: Reading, instr: LocalInstructions): Artifact {
  const k = pointCount(r.doc.sentences.length, { factor: 0.9, min: 2, max: 7 }, instr);
  const keyPoints = r.points(k, (x) => x.score + (x.informative ? 0.1 : 0), r.actionSentences(), true);
  const topics = r.topics(3);
  const to = instr.recipient ?? counterpart(r);
  const meeting = r.people.attendees.length > 1 || MEETING_WORDS.test(r.doc.sentences.slice(0, 5).map((s) => s.text).join(' '));
  const what = meeting ? 'our meeting' : 'our conversation';
  const actions = r.actions.slice(0, EMAIL_MAX_ACTIONS).map(plainItem);
  const more = r.actions.length - actions.length;
  const closing = [
    more > 0 ? `There are ${more} more action items in the full notes.` : '',
    instr.formal
      ? 'Please let me know if anything is missing or inaccurate.'
      : actions.length > 0
        ? 'Let me know if I missed anything or got an owner or a date wrong.'
        : 'Let me know if I missed anything.',
  ].filter(Boolean).join(' ');
  return {
    kind: 'email',
    subject: topics.length > 0 ? `Recap: ${joinPhrases(topics)}` : `Recap of ${what}`,
    greeting: instr.formal ? `Dear ${to ?? 'all'},` : `Hi ${to ?? 'all'},`,
    opening: instr.formal
      ? `Please find below a summary of ${what} on ${spokenDate(r.reference)}.`
      : `Here is a short recap of ${what} on ${spokenDate(r.reference)}.`,
    keyPoints,
    actionItems: actions,
    closing,
    signOff: instr.formal ? 'Kind regards,' : 'Best,',
    signature: instr.sender ?? '[Your name]',
  };
}

function spreadsheet(r: Reading, instr: LocalInstructions): Artifact {
  if (r.actions.length > 0) {
    return { kind: 'spreadsheet', title: 'Action items', columns: ['Owner', 'Task', 'Due'], rows: r.actions.map((a) => [a.owner, a.task, a.due]) };
  }
  const points = keyPointsOf(r, instr);
  return { kind: 'spreadsheet', title: 'Key points', columns: ['#', 'Key point'], rows: points.map((p, i) => [String(i + 1), p]) };
}

function meetingNotes(r: Reading, instr: LocalInstructions): Artifact {
  const decisions = findDecisions(r.doc.sentences);
  const used = new Set([...decisions.map((d) => d.sentence), ...r.actionSentences()]);
  const k = pointCount(r.doc.sentences.length, { factor: 1.1, min: 3, max: 12 }, instr);
  const topics = r.topics(2);
  return {
    kind: 'meeting_notes',
    title: topics.length > 0 ? `Meeting notes: ${joinPhrases(topics)}` : 'Meeting notes',
    date: isoDate(r.reference),
    attendees: r.people.attendees,
    peopleMentioned: r.people.mentioned,
    discussion: r.points(k, (x) => x.score + (x.informative ? 0.1 : 0), used, true),
    decisions: decisions.slice(0, 15).map((d) => d.text),
    actionItems: r.actions.map(plainItem),
  };
}

/** The structured artifact the local engine extracts (exported for tests and the bench). */
export function extractArtifact(transcript: string, kind: KindName, instructions: string, reference: Date): Artifact {
  const r = new Reading(transcript, reference);
  const instr = parseInstructions(instructions);
  switch (kind) {
    case 'summary':
      return summary(r, instr);
    case 'key_points':
      return { kind: 'key_points', title: 'Key points', points: keyPointsOf(r, instr) };
    case 'action_items':
      return { kind: 'action_items', items: r.actions.map(plainItem) };
    case 'email':
      return email(r, instr);
    case 'spreadsheet':
      return spreadsheet(r, instr);
    case 'meeting_notes':
      return meetingNotes(r, instr);
  }
}

/** The default engine: wink-nlp + chrono-node, no model, no network. */
export class LocalEngine implements ConversionEngine {
  readonly name = 'local';

  async convert(input: EngineInput): Promise<Artifact> {
    input.signal.throwIfAborted();
    return extractArtifact(input.transcript, input.kind, input.instructions, input.referenceTime);
  }

  /** The best sentences of the passages, quoted with their citations: no model, never a new word. */
  async answer(input: AnswerInput): Promise<EngineAnswer> {
    input.signal.throwIfAborted();
    return extractiveAnswer(input);
  }
}
