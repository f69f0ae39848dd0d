/**
 * Action items: who does what by when. A sentence yields an item when a clause has an owner
 * and a commitment — "Felix will …", "Nina is going to …", "Raj agreed to …", "I need to …",
 * "we should …", "let's …", "Action item: Yuki to …", "Tom, can you …?" — and the task is
 * concrete (not "be out on Thursday", "revisit", "do it"). The owner is the person named
 * ("Grace" → "Grace Liu" when the full name was said), the speaker for "I" (their label in a
 * diarised transcript, else "Speaker"), "Team" for "we"; the due date is the deadline phrase
 * read against the reference time. Items said twice (the usual recap at the end) are merged.
 */
import type { ActionItem } from '../artifacts';
import { tidyClause, tidySentence } from './clean';
import type { Sentence, TranscriptDoc } from './document';
import { findDue } from './dates';
import { GIVEN_NAMES, NOT_NAMES, OWNER_TEAMS, TEAM_WORDS } from './names';
import type { People } from './people';

/** An action item and the sentence it came from. */
export interface FoundAction extends ActionItem {
  /** Every sentence that states it (more than one when it was repeated in a recap). */
  sentences: number[];
}

/** Owner of "I" when the transcript has no speaker labels. */
export const SPEAKER_OWNER = 'Speaker';
/** Owner of "we" / "let's". */
export const TEAM_OWNER = 'Team';
/** Owner of an "Action item:" that names nobody. */
export const UNASSIGNED_OWNER = 'Unassigned';

const NAME = String.raw`[A-Z][a-z'’-]+(?: [A-Z][a-z'’-]+)?|[A-Z]{2,4}`;
const SUBJECT = String.raw`I|[Ww]e|[Hh]e|[Ss]he|[Tt]he team|[Tt]he [a-z]+ team|${NAME}`;
const MODAL = String.raw`will|['’]ll|shall|is going to|are going to|am going to|['’]m going to|['’]re going to|is gonna|['’]m gonna|['’]re gonna|needs to|need to|has to|have to|should|must|agreed to|offered to|volunteered to|promised to|committed to|is on the hook to`;
const ADVERBS = String.raw`(?:(?:also|then|probably|definitely|just|still|really|quickly|first|go ahead and|try to)\s+)*`;
const BOUNDARY = String.raw`(?:^|[,;:—–]\s+|\b(?:and|so|then|but|also|now|because)\s+)`;

const COMMITMENT = new RegExp(String.raw`${BOUNDARY}(?:also\s+)?(${SUBJECT})(?:\s+${ADVERBS}|(?=['’]))(${MODAL})\s+${ADVERBS}([a-z][^.;!?]*)`, 'g');
/** A named owner needs no clause boundary: "For config validation Ben will add …". */
const NAMED_COMMITMENT = new RegExp(String.raw`\b(${NAME})(?:\s+${ADVERBS}|(?=['’]))(${MODAL})\s+${ADVERBS}([a-z][^.;!?]*)`, 'g');
const NAME_TO = new RegExp(String.raw`(?:^|:\s+)(${NAME})\s+to\s+([a-z][^.;!?]*)`, 'g');
const LETS = new RegExp(String.raw`${BOUNDARY}let['’]s\s+${ADVERBS}([a-z][^.;!?]*)`, 'gi');
const ASK_BEFORE = new RegExp(String.raw`(?:^|[,;:]\s+|\s)(${NAME})\s*,?\s*(?:can|could|would|will) you\s+(?:please\s+)?${ADVERBS}([a-z][^.;!?]*)`, 'g');
const ASK_AFTER = new RegExp(String.raw`(?:^|[,;:]\s+)(?:[Cc]an|[Cc]ould|[Ww]ould|[Ww]ill) you\s+(?:please\s+)?${ADVERBS}([a-z][^?]*?),\s*(${NAME})\s*\?`, 'g');
const ASK_ANON = /(?:^|[,;:]\s+)(?:[Cc]an|[Cc]ould) you\s+(?:please\s+)?([a-z][^?]*)\?/g;
const ACTION_LABEL = /^action items?(?:\s+for\s+(me|us|[A-Z][a-z'’-]+))?\s*:\s*(.+)$/i;
/** Where one owner's part of a listed "Action items:" body ends and the next owner's begins. */
const LIST_PART = new RegExp(String.raw`(?:,\s*(?:and\s+)?|;\s*|\s+and\s+)(?=(?:${SUBJECT})\s+(?:(?:${MODAL})\b|to\s|[a-z][a-z'’-]*s\b))`, 'g');
/** One part: an owner, then a modal ("will send"), "to" ("Yuki to book"), or a verb in the present ("finishes"). */
const LIST_ITEM = new RegExp(String.raw`^(${SUBJECT})\s+(?:(${MODAL}|to)\s+${ADVERBS})?([a-z][^.;!?]*)$`);

/** Hedges between a task and its deadline ("…, let's say by Tuesday", "…, he said by Monday"). */
const HEDGE = /,?\s*\b(?:let['’]s say|let us say|I['’]d say|I would say|say|he said|she said|they said|I think|I guess|hopefully|ideally|at the latest)\b\s*,?\s*(?=(?:by|before|on|until|no later than|next|tomorrow|today|this)\b)/gi;
/** Where a task ends: a new clause, a reason, a consequence. */
const TASK_END = new RegExp(
  [
    String.raw`,?\s+(?:and then|so that|so|because|since|which|but|while|whereas|otherwise|or else|unless|although|though)\b`,
    String.raw`,\s*(?:and\s+)?(?:we|I|you|he|she|they|it|that|this|there|[A-Z][a-z]+)(?:['’](?:ll|re|d|s|m|ve)\b|\s+(?:will|can|could|should|would|is|are|was|were|need|needs|have|has|might|may|must|did|do|does)\b)`,
    String.raw`\s+(?:and|but)\s+(?:we|I|you|he|she|they)(?:\s+|['’])[a-z]`,
    String.raw`,\s+(?:something like|like|e\.g\.|for example|just)\b`,
  ].join('|'),
);
const CONDITIONAL = /\b(?:if|unless|when|whenever|whether|once|in case|as soon as)\b[^,;]*$/i;
const PROCEDURE = /^(?:get started|start|begin|kick (?:it |us )?off|wrap (?:it )?up|move on|recap|go (?:through|over)|revisit|circle back|take (?:it|this|that) offline|pick (?:it|this|that) up|talk (?:later|soon)|see|hear|think about it|keep (?:it|this) short|be quick|do (?:that|this|it)|discuss|catch up|check in|have a look|call it|keep (?:the )?momentum|keep going|keep it up|stay in touch|keep in touch)\b/i;
const NOT_TASK_START = /^(?:be|been|being|not|never|have to|need to|want|wants|like|love|hate|feel|seem|probably|maybe|a|an|the|this|that|it|there|no|so|too|very|also|all|just)\b/i;
const WEAK_OBJECT = new Set(['it', 'that', 'this', 'them', 'those', 'these', 'him', 'her', 'one']);
const PAST_PARTICIPLES: Record<string, string> = {
  merged: 'Merge', done: 'Finish', finished: 'Finish', fixed: 'Fix', reviewed: 'Review', deployed: 'Deploy',
  shipped: 'Ship', sent: 'Send', written: 'Write', signed: 'Sign', booked: 'Book', approved: 'Approve',
  scheduled: 'Schedule', published: 'Publish', updated: 'Update', tested: 'Test', released: 'Release', drafted: 'Draft',
};

function ownerOfSubject(subject: string, s: Sentence, people: People, recentPerson: string | null): string | null {
  if (subject === 'I') return s.speaker ? (people.canonical(s.speaker) ?? s.speaker) : SPEAKER_OWNER;
  if (/^(?:we|the team|every(?:one|body))$/i.test(subject)) return TEAM_OWNER;
  if (/^(?:he|she)$/i.test(subject)) return recentPerson;
  const team = /^the ([a-z]+) team$/i.exec(subject);
  if (team) return `${team[1]!.charAt(0).toUpperCase()}${team[1]!.slice(1)} team`;
  if (/^(?:IT|QA|HR|PR|UX|BD)$/.test(subject)) return subject;
  const first = subject.split(' ')[0]!.toLowerCase();
  if (NOT_NAMES.has(first) && !GIVEN_NAMES.has(first)) return null;
  if (/\bteam$/i.test(subject)) return subject;
  if (TEAM_WORDS.has(first)) return subject.split(' ').length === 1 && OWNER_TEAMS.has(first) ? subject : null;
  return people.canonical(subject);
}

/** "finishes" → "finish", "re-runs" → "re-run", "tries" → "try": the verb a task starts with, from a report of it. */
export function baseVerb(word: string): string {
  if (/ies$/.test(word)) return word.replace(/ies$/, 'y');
  if (/(?:ss|sh|ch|x|z|o)es$/.test(word)) return word.replace(/es$/, '');
  if (/[^s]s$/.test(word)) return word.replace(/s$/, '');
  return word;
}

/**
 * An "Action items:" body that lists several owners' tasks ("Maria finishes legal review by
 * Thursday, Tom re-runs the mobile build today, and I will send the timeline tomorrow"): one
 * item per part, each with its own owner and due date. Null unless every part has an owner.
 */
function listedItems(body: string, s: Sentence, people: People, reference: Date): FoundAction[] | null {
  const parts = body.replace(/[.!]+$/, '').split(LIST_PART).map((p) => p.trim()).filter(Boolean);
  if (parts.length < 2) return null;
  const items: FoundAction[] = [];
  for (const part of parts) {
    const m = LIST_ITEM.exec(part);
    const owner = m ? ownerOfSubject(m[1]!, s, people, null) : null;
    if (!m || !owner) return null;
    const [, , modal, said] = m as unknown as [string, string, string | undefined, string];
    const [verb, ...rest] = said.split(/\s+/);
    const region = modal !== undefined ? said : [baseVerb(verb!), ...rest].join(' ');
    items.push(...itemsOf(owner, region, s, reference));
  }
  return items;
}

/** Turns "have the fix merged" into "Merge the fix"; otherwise capitalises. */
function taskText(raw: string): string {
  const t = tidyClause(raw.replace(/(?:\s+(?:as well|too|please|then|first|again|oh|okay|ok|so|um|uh|yeah|right|and|but))+$/i, ''));
  const have = /^(?:Have|Get) (.+?) (\w+)$/.exec(t);
  const verb = have ? PAST_PARTICIPLES[have[2]!.toLowerCase()] : undefined;
  if (have && verb && !WEAK_OBJECT.has(have[1]!.toLowerCase())) return `${verb} ${have[1]}`;
  return t;
}

/**
 * Talk about the meeting itself — who speaks next, what comes later in it, a break — and states
 * of mind ("guess", "admit I don't know"): said with "I'll" or "let's", never a task.
 */
const MEETING_TALK = /^(?:go (?:next|on|into|ahead|back|first)|continue|come (?:back )?to|get (?:back )?to|wait(?: for)?|read (?:through|out)|tell (?:you|us|them)|show (?:you|us)|present|explain|introduce|cut to the chase|guess|admit|know|wonder|care|imagine|get acquainted|(?:have|take|get|grab) (?:a |the |some |our )?(?:quick )?(?:lunch|coffee|tea|drink|beer|break|snack|lunch break|coffee break))\b/i;
/** A time inside the meeting: "in a second", "later" — what is done then is done in the room. */
const IN_MEETING = /\b(?:in a (?:second|sec|minute|moment|bit)|right now|for now|at the end|(?:the )?next (?:slide|point|item|page|one))\b|\blater(?:,|$)/i;
/** Words that name nothing a task could be about: with only these after its verb, a task is too vague to act on. */
const EMPTY_WORDS = new Set(
  'it its that this them those these him her one all there here together about into onto in on up out over with to of for from a an the what which is are was be some something anything everything me you us my your our their again back around away down off more just really then now'.split(' '),
);

function usableTask(task: string): boolean {
  const words = task.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length < 2) return false;
  if (PROCEDURE.test(task) || NOT_TASK_START.test(task) || MEETING_TALK.test(task) || IN_MEETING.test(task)) return false;
  if (words.slice(1).every((w) => EMPTY_WORDS.has(w.replace(/[^a-z']/g, '')))) return false;
  // Cut off before its object ("Make sure to", "Talk with the"): nothing said to act on.
  if (/^(?:to|and|or|the|a|an|of|with|for|about|that|if)$/.test(words[words.length - 1]!.replace(/[^a-z']/g, ''))) return false;
  if (words.length <= 3 && WEAK_OBJECT.has(words[1]!)) return false;
  if (WEAK_OBJECT.has(words[words.length - 1]!) || ['in', 'on', 'up', 'out', 'over'].includes(words[words.length - 1]!) && words.length <= 3) return false;
  return true;
}

/** The text without every deadline phrase that names `iso` ("in two weeks, on the 23rd"). */
function withoutDate(text: string, iso: string, reference: Date): string {
  let out = text;
  for (let guard = 0; guard < 3; guard += 1) {
    const again = findDue(out, reference);
    if (!again || again.iso !== iso) break;
    out = `${out.slice(0, again.start)} ${out.slice(again.end)}`;
  }
  return out.replace(/\s*,\s*(?=,|$)/g, '').replace(/,\s+(at|in|on|during|with|for|to)\b/g, ' $1');
}

/** A due date and the text of the task without its deadline phrase. */
function splitDue(region: string, reference: Date): { task: string; due: string; rest: string } {
  const due = findDue(region, reference);
  if (!due) return { task: region, due: '', rest: '' };
  const rest = region.slice(due.end);
  const coordinated = /^\s*,?\s*and\s+(?!then\b)([a-z]+)\s+\S/.exec(rest);
  if (coordinated) return { task: withoutDate(region.slice(0, due.start), due.iso, reference), due: due.iso, rest: rest.replace(/^\s*,?\s*and\s+/, '') };
  return { task: withoutDate(`${region.slice(0, due.start)} ${rest}`, due.iso, reference), due: due.iso, rest: '' };
}

function looksLikeVerb(word: string, s: Sentence): boolean {
  const tok = s.tokens.find((t) => t.value.toLowerCase() === word.toLowerCase());
  return tok ? ['VERB', 'AUX'].includes(tok.pos) || tok.pos === 'NOUN' : false;
}

/** Items of one commitment clause (one, or several for "… by Thursday and write … by Friday"). */
function itemsOf(owner: string, region: string, s: Sentence, reference: Date): FoundAction[] {
  const out: FoundAction[] = [];
  let remaining = region;
  for (let guard = 0; guard < 4 && remaining.trim() !== ''; guard += 1) {
    const cut = TASK_END.exec(remaining);
    const clause = cut ? remaining.slice(0, cut.index) : remaining;
    const { task, due, rest } = splitDue(clause, reference);
    const text = taskText(task);
    if (usableTask(text)) out.push({ owner, task: text, due, sentences: [s.index] });
    const next = rest.trim();
    if (next === '' || !looksLikeVerb(next.split(/\s+/)[0]!, s)) break;
    remaining = next;
  }
  return out;
}

/** Every match of `re` in `text`, including ones that start inside an earlier match. */
function overlapping(re: RegExp, text: string): RegExpExecArray[] {
  const out: RegExpExecArray[] = [];
  const scan = new RegExp(re.source, re.flags.includes('g') ? re.flags : `${re.flags}g`);
  for (let m = scan.exec(text); m; m = scan.exec(text)) {
    out.push(m);
    scan.lastIndex = m.index + 1;
  }
  return out;
}

function lastPerson(doc: TranscriptDoc, index: number, people: People): string | null {
  for (let i = index; i >= Math.max(0, index - 2); i -= 1) {
    const s = doc.sentences[i]!;
    const names = s.tokens.filter((t) => t.pos === 'PROPN').map((t) => people.canonical(t.value)).filter((n): n is string => n !== null);
    const distinct = [...new Set(names)].filter((n) => n !== s.speaker);
    if (distinct.length === 1) return distinct[0]!;
    if (distinct.length > 1) return null;
  }
  return null;
}

function nextSpeaker(doc: TranscriptDoc, s: Sentence): string | null {
  const turn = doc.turns[s.turn + 1];
  if (!turn || !turn.speaker || turn.speaker === s.speaker) return null;
  return /^(?:yes|yeah|yep|sure|okay|ok|will do|on it|i can|i'll|no problem|absolutely|of course)\b/i.test(turn.text) ? turn.speaker : null;
}

/**
 * A diarised transcript's speakers as its people call them in passing: "the industrial designer
 * will …" names the speaker labelled "Industrial Designer". Rewrites such mentions to the label,
 * so the owner patterns (which look for capitalised names) see them. Null without labels.
 */
function speakerMentions(doc: TranscriptDoc): ((text: string) => string) | null {
  const labels = doc.speakers.filter((l) => /^[A-Za-z][A-Za-z ]{2,40}$/.test(l) && /[A-Z]/.test(l));
  if (labels.length === 0) return null;
  const escaped = labels.map((l) => l.replace(/ +/g, String.raw`\s+`)).sort((a, b) => b.length - a.length);
  const mention = new RegExp(String.raw`\b(?:the\s+)?(${escaped.join('|')})\b`, 'gi');
  const byLower = new Map(labels.map((l) => [l.toLowerCase().replace(/\s+/g, ' '), l]));
  return (text) => text.replace(mention, (whole, said: string) => byLower.get(said.toLowerCase().replace(/\s+/g, ' ')) ?? whole);
}

/** Every action item of `doc`, in transcript order, duplicates merged. */
export function findActionItems(doc: TranscriptDoc, people: People, reference: Date): FoundAction[] {
  const found: FoundAction[] = [];
  const mentions = speakerMentions(doc);
  for (const s of doc.sentences) {
    let text = tidySentence(s.text, { keepLabel: true }).replace(HEDGE, ' ').replace(/\s+/g, ' ');
    if (mentions) text = mentions(text);
    const question = text.endsWith('?');
    const items: FoundAction[] = [];
    const label = ACTION_LABEL.exec(text);
    if (label) {
      const who = label[1];
      const body = label[2]!;
      if (who && /^me$/i.test(who)) items.push(...itemsOf(ownerOfSubject('I', s, people, null)!, body, s, reference));
      else if (who && /^us$/i.test(who)) items.push(...itemsOf(TEAM_OWNER, body, s, reference));
      else if (who) items.push(...itemsOf(people.canonical(who) ?? who, body, s, reference));
      else {
        const listed = listedItems(body, s, people, reference);
        const named = new RegExp(String.raw`^(${NAME})\s+(?:to|will|should|needs to|is going to)\s+([a-z].*)$`).exec(body);
        const owner = named ? ownerOfSubject(named[1]!, s, people, null) : null;
        if (listed) items.push(...listed);
        else if (named && owner) items.push(...itemsOf(owner, named[2]!, s, reference));
        else if (!/^(?:I|we)\b/i.test(body)) items.push(...itemsOf(UNASSIGNED_OWNER, body, s, reference));
        else text = body;
      }
    }
    if (items.length === 0) {
      for (const m of overlapping(ASK_BEFORE, text)) {
        const owner = people.canonical(m[1]!);
        if (owner) items.push(...itemsOf(owner, m[2]!, s, reference));
      }
      for (const m of text.matchAll(ASK_AFTER)) {
        const owner = people.canonical(m[2]!);
        if (owner) items.push(...itemsOf(owner, m[1]!, s, reference));
      }
      if (items.length === 0 && doc.speakers.length > 0) {
        const addressee = nextSpeaker(doc, s);
        if (addressee) for (const m of text.matchAll(ASK_ANON)) items.push(...itemsOf(people.canonical(addressee) ?? addressee, m[1]!, s, reference));
      }
    }
    if (items.length === 0 && !question) {
      for (const m of overlapping(COMMITMENT, text)) {
        const [, subject, modal, region] = m as unknown as [string, string, string, string];
        if (CONDITIONAL.test(text.slice(0, m.index).split(/[,;:]/).pop() ?? '')) continue;
        // "We agreed to …" / "we decided to …" is a decision, not an assignment.
        if (/^we$/i.test(subject) && /agreed|decided/.test(modal)) continue;
        const owner = ownerOfSubject(subject, s, people, /^(?:he|she)$/i.test(subject) ? lastPerson(doc, s.index, people) : null);
        if (owner) items.push(...itemsOf(owner, region, s, reference));
      }
      if (items.length === 0) {
        for (const m of overlapping(NAMED_COMMITMENT, text)) {
          const [, subject, , region] = m as unknown as [string, string, string, string];
          if (CONDITIONAL.test(text.slice(0, m.index).split(/[,;:]/).pop() ?? '')) continue;
          if (/^(?:I|We|He|She|They|It|The|This|That)$/.test(subject)) continue;
          const owner = ownerOfSubject(subject, s, people, null);
          if (owner && owner !== TEAM_OWNER) items.push(...itemsOf(owner, region, s, reference));
        }
      }
      for (const m of text.matchAll(NAME_TO)) {
        const owner = ownerOfSubject(m[1]!, s, people, null);
        if (owner && owner !== TEAM_OWNER && !items.length) items.push(...itemsOf(owner, m[2]!, s, reference));
      }
      for (const m of overlapping(LETS, text)) items.push(...itemsOf(TEAM_OWNER, m[1]!, s, reference));
    }
    found.push(...items);
  }
  return mergeDuplicates(found);
}

const TASK_STOP = new Set([
  'the', 'a', 'an', 'to', 'of', 'for', 'with', 'and', 'or', 'in', 'on', 'at', 'by', 'from', 'up', 'out', 'our', 'my',
  'their', 'his', 'her', 'your', 'it', 'that', 'this', 'them', 'us', 'me', 'have', 'get', 'make', 'do', 'put', 'together',
  'one', 'all', 'some', 'about', 'into', 'over', 'so', 'we', 'i', 'be',
]);

/** Lower-case word stems of a task, for telling the same task said twice. */
function stems(task: string): Set<string> {
  const out = new Set<string>();
  for (const w of task.toLowerCase().split(/[^a-z0-9]+/)) {
    if (w.length < 2 || TASK_STOP.has(w)) continue;
    out.add(w.replace(/(?:ing|ed|es|s)$/, '').replace(/e$/, ''));
  }
  return out;
}

function sameTask(a: ActionItem, sa: Set<string>, b: ActionItem, sb: Set<string>): boolean {
  if (a.owner !== b.owner) return false;
  if (a.due !== '' && b.due !== '' && a.due !== b.due) return false;
  let overlap = 0;
  for (const w of sa) if (sb.has(w)) overlap += 1;
  return overlap >= 2 && overlap >= 0.5 * Math.min(sa.size, sb.size);
}

/**
 * Merges items said twice: the fuller wording wins, and a due date from either is kept.
 * Candidates come from an index of (owner, stem), so a long transcript is not compared
 * item against item.
 */
export function mergeDuplicates(items: FoundAction[]): FoundAction[] {
  const out: { item: FoundAction; stems: Set<string> }[] = [];
  const index = new Map<string, number[]>();
  for (const item of items) {
    const st = stems(item.task);
    const candidates = new Set<number>();
    for (const w of st) for (const k of index.get(`${item.owner}\u0000${w}`) ?? []) candidates.add(k);
    const twin = [...candidates].sort((x, y) => x - y).find((k) => sameTask(out[k]!.item, out[k]!.stems, item, st));
    if (twin === undefined) {
      const k = out.length;
      out.push({ item: { ...item, sentences: [...item.sentences] }, stems: st });
      for (const w of st) {
        const key = `${item.owner}\u0000${w}`;
        const list = index.get(key) ?? [];
        list.push(k);
        index.set(key, list);
      }
      continue;
    }
    const kept = out[twin]!;
    const fuller = st.size > kept.stems.size;
    kept.item = {
      ...kept.item,
      task: fuller ? item.task : kept.item.task,
      due: kept.item.due || item.due,
      sentences: [...kept.item.sentences, ...item.sentences],
    };
    if (fuller) kept.stems = st;
  }
  return out.map((o) => o.item);
}
