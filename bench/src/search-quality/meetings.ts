/**
 * The evaluation set of `npm run bench -- search-quality`: QMSum's meetings (every domain:
 * product design, academic, parliamentary committees) with the questions people asked of them,
 * read from a local folder that scripts/fetch-search-eval.js fills (never committed).
 *
 * `qmsum/{train,val,test}/<meeting>.json` holds `meeting_transcripts` (speaker turns) and
 * `specific_query_list`: a question and `relevant_text_span`, the inclusive turn ranges that
 * answer it (as strings). QMSum has no times: a turn lasts its words at {@link WORDS_PER_MINUTE},
 * one after another, so a span's turns become a stretch of time a passage can overlap.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { library } from '@murmur/proto';
import { cleanTurn } from '../convert-quality/meetings';

/** Where the set lives unless BENCH_SEARCH_EVAL_DIR says otherwise (git-ignored). */
export const DEFAULT_SEARCH_EVAL_DIR = path.resolve(__dirname, '..', '..', 'data', 'search-quality');

/** Speaking rate the turns' times are made from (QMSum has none): an ordinary conversational pace. */
export const WORDS_PER_MINUTE = 150;

/** A transcript names at most this many speakers (the library's limit); more are numbered round again. */
export const MAX_SPEAKERS = 50;

/** QMSum's own split: train and val are tuned on, test only measured. */
export const SPLITS = ['train', 'val', 'test'] as const;
export type Split = (typeof SPLITS)[number];

export interface TimeRange {
  start: number;
  end: number;
}

/** One QMSum turn with synthesized times; `text` is '' for a turn of markup only ({vocalsound}). */
export interface TimedTurn extends TimeRange {
  text: string;
  /** S1…S50, by order of first appearance. */
  speaker: string;
}

export interface EvalQuery {
  query: string;
  /** The relevant turn ranges as QMSum gives them (inclusive). */
  turnSpans: Array<[number, number]>;
  /** The same ranges as times of the meeting's transcript. */
  spans: TimeRange[];
}

export interface SearchMeeting {
  id: string;
  split: Split;
  turns: TimedTurn[];
  /** Distinct speakers in QMSum (may exceed {@link MAX_SPEAKERS}). */
  speakers: number;
  words: number;
  queries: EvalQuery[];
}

interface QmsumFile {
  meeting_transcripts: { speaker: string; content: string }[];
  specific_query_list: { query: string; relevant_text_span: string[][] }[];
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
const wordsIn = (text: string) => (text === '' ? 0 : text.split(/\s+/).length);

/**
 * Speaker ids for a meeting's speaker labels, by first appearance: S1, S2, … and, past
 * {@link MAX_SPEAKERS}, round again (S51st → S1). Two different speakers then share an id only
 * 50 apart in order of appearance, so a change of speaker still almost always closes a passage.
 */
export function speakerIds(labels: readonly string[]): string[] {
  const order = new Map<string, number>();
  return labels.map((label) => {
    const key = label.trim();
    if (!order.has(key)) order.set(key, order.size);
    return `S${(order.get(key)! % MAX_SPEAKERS) + 1}`;
  });
}

/**
 * The turns, cleaned of the corpus's non-speech markup, one after another at `wordsPerMinute`:
 * a turn lasts its words (a turn of markup only, one word's time), starting when the last ended.
 */
export function timeTurns(turns: readonly { speaker: string; content: string }[], wordsPerMinute = WORDS_PER_MINUTE): TimedTurn[] {
  const ids = speakerIds(turns.map((t) => t.speaker));
  const secondsPerWord = 60 / wordsPerMinute;
  let at = 0;
  return turns.map((t, i) => {
    const text = cleanTurn(t.content);
    const start = at;
    at = round3(at + Math.max(1, wordsIn(text)) * secondsPerWord);
    return { start, end: at, text: /[\p{L}\p{N}]/u.test(text) ? text : '', speaker: ids[i]! };
  });
}

/** The time an inclusive turn range takes: from its first turn's start to its last turn's end. */
export function spanRange(turns: readonly TimeRange[], [first, last]: readonly [number, number]): TimeRange {
  return { start: turns[first]!.start, end: turns[last]!.end };
}

/** QMSum's span (["12", "40"]) as turn indexes, or null when it is not a range of this meeting's turns. */
export function turnSpanOf(span: readonly string[], turnCount: number): [number, number] | null {
  const [a, b] = span.map((x) => Number(x));
  if (span.length !== 2 || !Number.isInteger(a) || !Number.isInteger(b) || a! < 0 || b! < a! || b! >= turnCount) return null;
  return [a!, b!];
}

/** Every meeting of the set under `dir`, splits in order; throws with what to run when the folder is empty. */
export function loadSearchMeetings(dir: string): { meetings: SearchMeeting[]; malformedSpans: number } {
  const qmsum = path.join(dir, 'qmsum');
  if (!fs.existsSync(qmsum)) {
    throw new Error(`no evaluation set at ${dir}: run \`node scripts/fetch-search-eval.js\` first (or set BENCH_SEARCH_EVAL_DIR)`);
  }
  const meetings: SearchMeeting[] = [];
  let malformedSpans = 0;
  for (const split of SPLITS) {
    const splitDir = path.join(qmsum, split);
    if (!fs.existsSync(splitDir)) continue;
    for (const file of fs.readdirSync(splitDir).filter((f) => f.endsWith('.json')).sort()) {
      const data = JSON.parse(fs.readFileSync(path.join(splitDir, file), 'utf8')) as QmsumFile;
      const turns = timeTurns(data.meeting_transcripts);
      const queries: EvalQuery[] = [];
      for (const q of data.specific_query_list) {
        const turnSpans = q.relevant_text_span.map((s) => turnSpanOf(s, turns.length));
        malformedSpans += turnSpans.filter((s) => s === null).length;
        const valid = turnSpans.filter((s): s is [number, number] => s !== null);
        if (valid.length > 0) queries.push({ query: q.query, turnSpans: valid, spans: valid.map((s) => spanRange(turns, s)) });
      }
      meetings.push({
        id: file.replace(/\.json$/, ''),
        split,
        turns,
        speakers: new Set(data.meeting_transcripts.map((t) => t.speaker.trim())).size,
        words: turns.reduce((n, t) => n + wordsIn(t.text), 0),
        queries,
      });
    }
  }
  if (meetings.length === 0) throw new Error(`no meetings under ${qmsum}: run \`node scripts/fetch-search-eval.js\` again`);
  return { meetings, malformedSpans };
}

/**
 * The CreateRecording request of a meeting: one segment per turn with words, its speaker id among
 * the transcript's speakers (unnamed), the title the meeting's id.
 */
export function recordingRequest(meeting: SearchMeeting, ownerId: string): library.CreateRecordingRequest {
  const spoken = meeting.turns.filter((t) => t.text !== '');
  const speakers = [...new Set(spoken.map((t) => t.speaker))].sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
  return {
    ownerId,
    title: meeting.id,
    folderId: '',
    durationSeconds: meeting.turns.at(-1)?.end ?? 0,
    transcript: {
      text: spoken.map((t) => t.text).join('\n'),
      language: 'en',
      segments: spoken.map((t) => ({ startSeconds: t.start, endSeconds: t.end, text: t.text, speaker: t.speaker })),
      timeline: { words: undefined, speakers: speakers.map((id) => ({ id, name: '' })), wordCount: 0 },
    },
    createdAt: undefined,
    recordingId: '',
  };
}
