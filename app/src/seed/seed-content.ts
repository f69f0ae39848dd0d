/**
 * A deterministic generator of a believable voice-notes library for a demo user: folders,
 * recordings with transcripts and artifacts, knowledge bases and Thought Threads. Pure: it returns
 * a plan of plain values keyed by local keys, and the seeding command turns that plan into the
 * library service's internal write RPCs. The same options always give the same plan, so a demo
 * account can be rebuilt identically and a failing test reproduced.
 */
import { seededRandom } from '@murmur/kit';
import {
  ACTION_TEMPLATES, BANKS, BOOKS, COMPANIES, CONTACT_ROLES, DUES, FOLDER_NAMES, FOLLOW_UPS, HIRING_ROLES, IDEAS,
  KB_THEMES, KIND_SPECS, MONTHS, PEOPLE, PROJECTS, SURNAMES, WEEKDAYS, type FolderName, type KindSpec, type RecordingKind,
} from './seed-phrases';

/** Everything to create for one user, in creation order within each list. */
export interface SeedPlan { folders: SeedFolder[]; knowledgeBases: SeedKnowledgeBase[]; recordings: SeedRecording[]; threads: SeedThread[] }

/** A folder; created before every recording it holds. */
export interface SeedFolder { key: string; name: string; createdAt: Date }

/** A knowledge base; created before every recording it gathers (3–15 of them, by key). */
export interface SeedKnowledgeBase { key: string; name: string; description: string; createdAt: Date; recordingKeys: string[] }

/**
 * A recording with its transcript. Segments are consecutive, contiguous and cover
 * `[0, durationSeconds]`; `text` is their texts joined by single spaces. Artifacts restate facts the
 * transcript states, so a summary reads as a true summary of it.
 */
export interface SeedRecording {
  key: string; title: string; folderKey: string | null; createdAt: Date; durationSeconds: number; language: 'en';
  segments: { startSeconds: number; endSeconds: number; text: string }[]; text: string;
  artifacts: { kind: 'summary' | 'email' | 'spreadsheet' | 'action_items'; format: 'markdown' | 'plain'; content: string }[];
}

/** A Thought Thread; created after the recordings it places. `recordingKey` is set on recording items only. */
export interface SeedThread {
  key: string; title: string; createdAt: Date;
  items: { kind: 'note' | 'recording' | 'question' | 'answer'; text: string; recordingKey: string | null }[];
  contextSources: { kind: 'recording' | 'folder' | 'knowledge_base'; refKey: string }[];
}

/** The most recordings one plan may hold; the seeding command's own limit. */
const MAX_SEED_RECORDINGS = 10_000;

const DEFAULT_SEED = 0x5eed;
const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Speaking rate used to time segments. */
const WORDS_PER_SECOND = 2.5;
const UNFILED_SHARE = 0.12;
const ARTIFACT_SHARE = 0.6;

/**
 * Builds the plan. `recordings` is 0–10,000; every timestamp falls in the ~90 days before `now`
 * (folders and knowledge bases a little earlier) and strictly before it. Knowledge bases need at
 * least 3 recordings and threads at least 3 (then about one per 5 recordings, never fewer than 2).
 * @throws RangeError on a recording count outside 0–10,000 or an invalid `now`.
 */
export function buildSeedPlan(opts: { recordings: number; now: Date; seed?: number }): SeedPlan {
  const n = opts.recordings;
  const now = opts.now.getTime();
  if (!Number.isInteger(n) || n < 0 || n > MAX_SEED_RECORDINGS) {
    throw new RangeError(`recordings must be an integer from 0 to ${MAX_SEED_RECORDINGS}, got ${n}`);
  }
  if (!Number.isFinite(now)) throw new RangeError('now must be a valid date');
  const rng = seededRandom(opts.seed ?? DEFAULT_SEED);

  const folderNames: FolderName[] = [...FOLDER_NAMES.slice(0, 4), ...shuffled(rng, FOLDER_NAMES.slice(4)).slice(0, int(rng, 0, 2))];
  const folderKeyOf = new Map(folderNames.map((name) => [name, `folder:${slug(name)}`] as const));

  const slots = Array.from({ length: n }, () => {
    const spec = weightedSpec(rng);
    return { spec, at: timestamp(rng, spec, now) };
  }).sort((a, b) => a.at - b.at);
  const drafts = slots.map(({ spec, at }, i) => {
    const folder = folderKeyOf.get(spec.folder) ?? folderKeyOf.get(spec.fallbackFolder) ?? null;
    return writeRecording(rng, spec, at, `rec:${pad(i + 1, 5)}`, chance(rng, UNFILED_SHARE) ? null : folder);
  });

  let t = (drafts[0]?.at ?? now - 90 * DAY) - 5 * DAY;
  const folders = folderNames.map((name, i) => {
    if (i > 0) t += int(rng, 1, 20) * HOUR;
    return { key: `folder:${slug(name)}`, name, createdAt: new Date(t) };
  });
  const knowledgeBases = n >= 3 ? buildKnowledgeBases(rng, drafts) : [];
  const threads = n >= 3 ? buildThreads(rng, drafts, knowledgeBases, folders, now) : [];
  return { folders, knowledgeBases, recordings: drafts.map((d) => d.recording), threads };
}

// ---- recordings ----

/** A recording plus what the generator knows about it, for knowledge bases and threads. */
interface Draft { recording: SeedRecording; spec: KindSpec; at: number; fill: (template: string) => string; facts: string[] }
interface Sentence { text: string; key: boolean }
interface Action { owner: string; task: string; due: string; sentence: string }

function writeRecording(rng: Rng, spec: KindSpec, at: number, key: string, folderKey: string | null): Draft {
  const book = pick(rng, BOOKS);
  const fill = filler(rng, recordingVars(rng, at, book), { ...BANKS, bookIdea: book.ideas });
  const target = int(rng, spec.sentences[0], spec.sentences[1]);
  const actionCount = int(rng, spec.actions[0], spec.actions[1]);
  const closing = chance(rng, 0.7) && target >= 5 ? 1 : 0;
  const room = target - 1 - actionCount - closing;
  const asideCount = Math.min(spec.asides.length, int(rng, 0, 2), Math.max(0, room - 2));
  const bodyCount = Math.min(spec.body.length, Math.max(2, room - asideCount));
  const middle: Sentence[] = shuffled(rng, [
    ...shuffled(rng, spec.body).slice(0, bodyCount).map((b) => ({ text: fill(b), key: true })),
    ...shuffled(rng, spec.asides).slice(0, asideCount).map((a) => ({ text: fill(a), key: false })),
  ]);
  const people = [fill('{p1}'), fill('{p2}'), fill('{p3}')];
  const actions = shuffled(rng, spec.tasks).slice(0, actionCount).map((task): Action => {
    const mine = chance(rng, spec.mine);
    const [duePhrase, dueLabel] = pick(rng, DUES);
    const filledTask = fill(task);
    // Nobody is told to "share the criteria with" themselves.
    const owner = mine ? 'Me' : pick(rng, people.filter((p) => !filledTask.split(/\W+/).includes(p)));
    const template = pick(rng, mine ? ACTION_TEMPLATES.mine : ACTION_TEMPLATES.theirs);
    const vars: Record<string, string> = { owner, task: filledTask, due: duePhrase };
    return { owner, task: capitalize(filledTask), due: dueLabel, sentence: template.replace(/\{(\w+)\}/g, (_, k: string) => vars[k] ?? '') };
  });
  const sentences: Sentence[] = [
    { text: fill(pick(rng, spec.openings)), key: false },
    ...middle,
    ...actions.map((a) => ({ text: a.sentence, key: true })),
    ...(closing ? [{ text: fill(pick(rng, spec.closings)), key: false }] : []),
  ];
  const segments = segment(rng, sentences.map((s) => s.text));
  const title = fill(pick(rng, spec.titles));
  const recording: SeedRecording = {
    key, title, folderKey, createdAt: new Date(at), language: 'en',
    durationSeconds: segments[segments.length - 1]?.endSeconds ?? 0,
    segments, text: segments.map((s) => s.text).join(' '),
    artifacts: chance(rng, ARTIFACT_SHARE) ? artifacts(rng, spec, fill, title, sentences, actions) : [],
  };
  return { recording, spec, at, fill, facts: middle.filter((s) => s.key).map((s) => s.text) };
}

/** The values a recording's templates share, so its sentences agree with one another. */
function recordingVars(rng: Rng, at: number, book: { title: string; author: string }): Record<string, string> {
  const [p1, p2, p3, contact, candidate] = shuffled(rng, PEOPLE) as [string, string, string, string, string];
  const date = new Date(at);
  return {
    p1, p2, p3, contact, candidate: `${candidate} ${pick(rng, SURNAMES)}`, contactRole: pick(rng, CONTACT_ROLES),
    company: pick(rng, COMPANIES), project: pick(rng, PROJECTS), role: pick(rng, HIRING_ROLES), idea: pick(rng, IDEAS),
    book: book.title, author: book.author, request: pick(rng, need(BANKS.request)),
    pain: pick(rng, need(BANKS.pain)), metric: pick(rng, need(BANKS.metric)),
    today: need(WEEKDAYS[date.getUTCDay()]),
    quarter: `Q${((Math.floor(date.getUTCMonth() / 3) + int(rng, 0, 1)) % 4) + 1}`,
  };
}

/**
 * Returns a template filler bound to one recording's values. Bank slots deal from a shuffled deck
 * per recording, so one note names a grocery, blocker or book idea twice only after using them all.
 */
function filler(rng: Rng, vars: Record<string, string>, banks: Readonly<Record<string, readonly string[]>>): (template: string) => string {
  const decks = new Map<string, { cards: string[]; next: number }>();
  const deal = (bank: string): string => {
    let deck = decks.get(bank);
    const source = banks[bank];
    if (!source) throw new Error(`seed template names an unknown slot {${bank}}`);
    if (!deck || deck.next >= deck.cards.length) decks.set(bank, (deck = { cards: shuffled(rng, source), next: 0 }));
    return need(deck.cards[deck.next++]);
  };
  return (template) => template.replace(/\{(\w+)(?::(\d+)-(\d+))?\}/g, (_, name: string, lo?: string, hi?: string) => {
    if (lo !== undefined && hi !== undefined) {
      const value = int(rng, Number(lo), Number(hi));
      return name === 'nth' ? ordinal(value) : String(value);
    }
    const lower = name.charAt(0).toLowerCase() + name.slice(1);
    const value = vars[lower] ?? deal(lower);
    return lower === name ? value : capitalize(value);
  });
}

/** Groups sentences 1–3 at a time into contiguous segments timed at ~2.5 words a second. */
function segment(rng: Rng, sentences: string[]): SeedRecording['segments'] {
  const segments: SeedRecording['segments'] = [];
  let centis = 0; // integer centiseconds, so one segment's end is exactly the next one's start
  for (let i = 0; i < sentences.length;) {
    const take = int(rng, 1, 3);
    const text = sentences.slice(i, i + take).join(' ');
    i += take;
    const words = text.split(/\s+/).length;
    const length = Math.max(100, Math.round((words / WORDS_PER_SECOND) * (0.85 + rng() * 0.35) * 100) + int(rng, 20, 80));
    segments.push({ startSeconds: centis / 100, endSeconds: (centis + length) / 100, text });
    centis += length;
  }
  return segments;
}

// ---- artifacts ----

function artifacts(
  rng: Rng, spec: KindSpec, fill: (t: string) => string, title: string, sentences: Sentence[], actions: Action[],
): SeedRecording['artifacts'] {
  const keyLines = sentences.filter((s) => s.key).map((s) => s.text);
  const bullets = shuffled(rng, keyLines.map((_, i) => i)).slice(0, int(rng, 2, 4)).sort((a, b) => a - b)
    .map((i) => need(keyLines[i]));
  const out: SeedRecording['artifacts'] = [
    { kind: 'summary', format: 'markdown', content: `## ${title}\n\n${bullets.map((b) => `- ${b}`).join('\n')}\n` },
  ];
  if (spec.email !== null && chance(rng, 0.35)) {
    const to = fill(spec.email.to);
    const intro = fill(spec.email.intro);
    const facts = bullets.filter((b) => !actions.some((a) => a.sentence === b));
    const next = actions.length > 0 ? `\n\nNext steps:\n${actions.map((a) => `- ${a.sentence}`).join('\n')}` : '';
    const content = `Subject: Recap: ${title}\n\nHi ${to},\n\n${intro}\n${(facts.length > 0 ? facts : bullets).map((b) => `- ${b}`).join('\n')}${next}\n\nBest,\n[Your name]\n`;
    out.push({ kind: 'email', format: 'plain', content });
  }
  if (actions.length > 0 && chance(rng, 0.4)) {
    const lines = actions.map((a) => `- [ ] **${a.owner}**: ${a.task} (due ${a.due})`);
    out.push({ kind: 'action_items', format: 'markdown', content: `## Action items\n\n${lines.join('\n')}\n` });
  }
  if (actions.length >= 2 && chance(rng, 0.25)) {
    const rows = actions.map((a) => `| ${cell(a.owner)} | ${cell(a.task)} | ${cell(a.due)} |`);
    out.push({ kind: 'spreadsheet', format: 'markdown', content: ['| Owner | Task | Due |', '| --- | --- | --- |', ...rows].join('\n') + '\n' });
  }
  return out;
}

const cell = (s: string) => s.replace(/\|/g, '\\|');

// ---- knowledge bases and threads ----

function buildKnowledgeBases(rng: Rng, drafts: Draft[]): SeedKnowledgeBase[] {
  const byKind = (kinds: readonly RecordingKind[]) => drafts.map((_, i) => i).filter((i) => kinds.includes(need(drafts[i]).spec.kind));
  const themes = shuffled(rng, KB_THEMES).map((theme) => ({ theme, pool: byKind(theme.kinds) }))
    .sort((a, b) => Number(b.pool.length >= 3) - Number(a.pool.length >= 3))
    .slice(0, int(rng, 2, 3));
  const built = themes.map(({ theme, pool }) => {
    const size = Math.min(int(rng, 3, 15), drafts.length);
    const chosen = new Set(shuffled(rng, pool).slice(0, size));
    for (const i of shuffled(rng, drafts.map((_, j) => j))) if (chosen.size < size) chosen.add(i);
    const members = [...chosen].sort((a, b) => a - b);
    const first = need(drafts[need(members[0])]).at;
    return { theme, at: first - int(rng, 1, 72) * HOUR, members };
  }).sort((a, b) => a.at - b.at);
  return built.map(({ theme, at, members }, k) => ({
    key: `kb:${k + 1}`, name: theme.name, description: theme.description,
    createdAt: new Date(at), recordingKeys: members.map((i) => need(drafts[i]).recording.key),
  }));
}

function buildThreads(rng: Rng, drafts: Draft[], kbs: SeedKnowledgeBase[], folders: SeedFolder[], now: number): SeedThread[] {
  const groups = new Map<RecordingKind, number[]>();
  const place: number[] = [];
  drafts.forEach((d, i) => {
    const group = groups.get(d.spec.kind) ?? [];
    groups.set(d.spec.kind, group);
    place.push(group.length);
    group.push(i);
  });
  const kbOf = new Map<string, string>();
  for (const kb of kbs) for (const r of kb.recordingKeys) if (!kbOf.has(r)) kbOf.set(r, kb.key);
  const folderKeys = new Set(folders.map((f) => f.key));

  const count = Math.max(2, Math.round(drafts.length / 5));
  const threads = Array.from({ length: count }, () => {
    const a = int(rng, 0, drafts.length - 1);
    const anchor = need(drafts[a]);
    const group = need(groups.get(anchor.spec.kind));
    const pos = need(place[a]);
    const refs = group.slice(Math.max(0, pos - int(rng, 0, 2)), pos + 1).map((i) => need(drafts[i]));
    const spec = anchor.spec;
    const fill = anchor.fill;
    const recordingItems = refs.map((r) => ({ kind: 'recording' as const, text: r.recording.title, recordingKey: r.recording.key }));
    const note = { kind: 'note' as const, text: fill(pick(rng, spec.notes)), recordingKey: null };
    const items: SeedThread['items'] = chance(rng, 0.7) ? [note, ...recordingItems] : [...recordingItems.slice(0, 1), note, ...recordingItems.slice(1)];
    const answer = ['Here is what your recordings say.', ...refs.map((r) => `From "${r.recording.title}" (${shortDate(r.at)}): ${pick(rng, r.facts)}`)].join(' ');
    items.push({ kind: 'question', text: fill(pick(rng, spec.questions)), recordingKey: null }, { kind: 'answer', text: answer, recordingKey: null });
    if (items.length < 8 && chance(rng, 0.4)) items.push({ kind: 'note', text: fill(pick(rng, FOLLOW_UPS)), recordingKey: null });

    const sources: SeedThread['contextSources'] = refs.filter(() => chance(rng, 0.6)).map((r) => ({ kind: 'recording', refKey: r.recording.key }));
    const folderKey = anchor.recording.folderKey;
    if (folderKey !== null && folderKeys.has(folderKey) && chance(rng, 0.6)) sources.push({ kind: 'folder', refKey: folderKey });
    const kbKey = refs.map((r) => kbOf.get(r.recording.key)).find((k) => k !== undefined);
    if (kbKey !== undefined && chance(rng, 0.7)) sources.push({ kind: 'knowledge_base', refKey: kbKey });
    if (sources.length === 0) sources.push({ kind: 'recording', refKey: anchor.recording.key });

    const at = Math.min(anchor.at + int(rng, 10 * 60, 3 * 24 * 60 * 60) * SECOND, anchor.at + Math.floor((now - anchor.at) / 2));
    return { title: fill(pick(rng, spec.threadTitles)), at, items, contextSources: sources.slice(0, 4) };
  }).sort((x, y) => x.at - y.at);
  return threads.map((th, i) => ({ key: `thread:${pad(i + 1, 4)}`, title: th.title, createdAt: new Date(th.at), items: th.items, contextSources: th.contextSources }));
}

// ---- time ----

/** Work notes on weekdays 8:00–17:59 UTC, personal ones any day 7:00–21:59; always a minute before `now` or earlier. */
function timestamp(rng: Rng, spec: KindSpec, now: number): number {
  let day = Math.floor(now / DAY) * DAY - int(rng, 0, 89) * DAY;
  const weekday = new Date(day).getUTCDay();
  if (spec.work && weekday === 6) day -= DAY;
  if (spec.work && weekday === 0) day -= 2 * DAY;
  let at = day + (spec.work ? int(rng, 8, 17) : int(rng, 7, 21)) * HOUR + int(rng, 0, 59) * MINUTE + int(rng, 0, 59) * SECOND;
  while (at >= now - MINUTE) at -= 7 * DAY;
  return at;
}

function shortDate(at: number): string {
  const d = new Date(at);
  return `${need(MONTHS[d.getUTCMonth()]).slice(0, 3)} ${d.getUTCDate()}`;
}

// ---- randomness and small helpers ----

type Rng = () => number;


const int = (rng: Rng, lo: number, hi: number) => lo + Math.floor(rng() * (hi - lo + 1));
const chance = (rng: Rng, p: number) => rng() < p;

function pick<T>(rng: Rng, xs: readonly T[]): T {
  return need(xs[Math.floor(rng() * xs.length)]);
}

function shuffled<T>(rng: Rng, xs: readonly T[]): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [out[i], out[j]] = [need(out[j]), need(out[i])];
  }
  return out;
}

const TOTAL_WEIGHT = KIND_SPECS.reduce((sum, s) => sum + s.weight, 0);

function weightedSpec(rng: Rng): KindSpec {
  let r = rng() * TOTAL_WEIGHT;
  for (const spec of KIND_SPECS) if ((r -= spec.weight) < 0) return spec;
  return need(KIND_SPECS[KIND_SPECS.length - 1]);
}

/** Narrows an indexed read the code has already bounded; a miss is a generator bug. */
function need<T>(x: T | undefined): T {
  if (x === undefined) throw new Error('seed generator read past the end of a list');
  return x;
}

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const pad = (n: number, width: number) => String(n).padStart(width, '0');
const slug = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, '-');

function ordinal(n: number): string {
  const suffix = n % 100 >= 11 && n % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}
