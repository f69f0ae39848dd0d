/**
 * `npm run bench -- search-quality`: passage search (LibraryService.SearchPassages, issue 34) on
 * public meetings, scored against the turns people marked as answering each question (QMSum's
 * specific queries). Every split is loaded into the real library service (gRPC, Postgres), one
 * owner per split, one recording per meeting through CreateRecording, so the passages are the
 * service's own cut. Each query is searched (limit 10) over the split's whole library — the
 * realistic setting, where other meetings compete — and again within its own meeting
 * (`recording_id`). Reported per split and setting: recall@5, MRR@10, and how many questions
 * found nothing at all (the service reads a question in websearch syntax: every word must be in
 * one passage). As a diagnostic, the same questions with their words OR'ed, and "as asked, else
 * OR'ed" (what a fallback on empty results would give). Test is the measured split; train and
 * val are for tuning.
 *
 * Without the evaluation set the benchmark reports that it was skipped and how to fetch it.
 */
import { performance } from 'node:perf_hooks';
import { MurmurError } from '@murmur/contract';
import { newId } from '@murmur/kit';
import type { library } from '@murmur/proto';
import { machineInfo, mapConcurrently, type Benchmark, type BenchmarkReport } from '../benchmark';
import { startBenchLibrary, type BenchLibrary } from '../library-service';
import { percentile } from '../load';
import { DEFAULT_SEARCH_EVAL_DIR, loadSearchMeetings, MAX_SPEAKERS, recordingRequest, SPLITS, WORDS_PER_MINUTE, type SearchMeeting, type Split } from './meetings';
import { anyWordQuery, K_RANK, scorePage, summarizeOutcomes, type OutcomeSummary, type QueryOutcome, type QueryTarget, type RankedPassage } from './scoring';

/** Concurrent CreateRecording / SearchPassages calls (two cores: the service and Postgres share them). */
const CONCURRENCY = 4;

type Setting = 'library' | 'recording';
const SETTINGS: Setting[] = ['library', 'recording'];
type Variant = 'as_asked' | 'any_word' | 'as_asked_else_any_word';

interface QueryRecord {
  meeting: string;
  query: string;
  spans: number;
  /** Per setting: results of the query as asked (−1: refused) and the rank of its first relevant passage (0: none in the top 10), then the same for the OR'ed words. */
  library: [number, number, number, number];
  recording: [number, number, number, number];
}

interface SplitResult {
  meetings: number;
  words: number;
  queries: number;
  spans: number;
  passages: number;
  passage_seconds_mean: number;
  passage_seconds_median: number;
  passage_words_median: number;
  load_seconds: number;
  search_ms_p50: Record<'as_asked' | 'any_word', number>;
  settings: Record<Setting, Record<Variant, OutcomeSummary>>;
}

const round = (x: number, digits = 3) => Number(x.toFixed(digits));

function toRanked(passages: readonly library.Passage[]): RankedPassage[] {
  return passages.map((p) => ({ recordingId: p.sourceId, ...(p.startSeconds !== undefined ? { start: p.startSeconds, end: p.endSeconds } : {}) }));
}

async function loadSplit(lib: BenchLibrary, meetings: readonly SearchMeeting[], ownerId: string): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  await mapConcurrently(meetings, CONCURRENCY, async (m) => {
    const { recording } = await lib.client.createRecording(recordingRequest(m, ownerId));
    if (!recording) throw new Error(`${m.id}: CreateRecording answered no recording`);
    ids.set(m.id, recording.id);
  });
  return ids;
}

async function evaluateSplit(lib: BenchLibrary, split: Split, meetings: readonly SearchMeeting[], log: (line: string) => void): Promise<{ result: SplitResult; records: QueryRecord[] }> {
  const ownerId = newId('usr');
  const loadStarted = performance.now();
  const ids = await loadSplit(lib, meetings, ownerId);
  const loadSeconds = (performance.now() - loadStarted) / 1000;
  const [stats] = await lib.db.query<{ n: number; seconds: number; median_seconds: number; median_words: number }>(
    `SELECT count(*)::int AS n, coalesce(avg(end_seconds - start_seconds), 0)::float8 AS seconds,
            coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY end_seconds - start_seconds), 0)::float8 AS median_seconds,
            coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY array_length(regexp_split_to_array(text, '\\s+'), 1)), 0)::float8 AS median_words
     FROM passages WHERE owner_id = $1`,
    [ownerId],
  );

  const latency: Record<'as_asked' | 'any_word', number[]> = { as_asked: [], any_word: [] };
  const search = async (query: string, recordingId: string, kind: 'as_asked' | 'any_word'): Promise<RankedPassage[] | 'refused'> => {
    if (query === '') return 'refused';
    const started = performance.now();
    try {
      const res = await lib.client.searchPassages({ ownerId, query, page: { limit: K_RANK, cursor: '' }, sources: [], folderId: '', recordingId, createdAfter: undefined, createdBefore: undefined });
      latency[kind].push(performance.now() - started);
      return toRanked(res.passages);
    } catch (err) {
      if (err instanceof MurmurError && err.code === 'invalid_request') return 'refused';
      throw err;
    }
  };

  const tasks = meetings.flatMap((m) => m.queries.map((q) => ({ m, q })));
  const outcomes: Record<Setting, Record<Variant, QueryOutcome[]>> = {
    library: { as_asked: [], any_word: [], as_asked_else_any_word: [] },
    recording: { as_asked: [], any_word: [], as_asked_else_any_word: [] },
  };
  const records = await mapConcurrently(tasks, CONCURRENCY, async ({ m, q }) => {
    const target: QueryTarget = { recordingId: ids.get(m.id)!, spans: q.spans };
    const record: QueryRecord = { meeting: m.id, query: q.query, spans: q.spans.length, library: [0, 0, 0, 0], recording: [0, 0, 0, 0] };
    for (const setting of SETTINGS) {
      const within = setting === 'recording' ? target.recordingId : '';
      const asked = scorePage(await search(q.query, within, 'as_asked'), target);
      const any = scorePage(await search(anyWordQuery(q.query), within, 'any_word'), target);
      record[setting] = [asked.refused ? -1 : asked.results, asked.firstRelevant ?? 0, any.refused ? -1 : any.results, any.firstRelevant ?? 0];
      outcomes[setting].as_asked.push(asked);
      outcomes[setting].any_word.push(any);
      outcomes[setting].as_asked_else_any_word.push(asked.results > 0 ? asked : any);
    }
    return record;
  });
  const summarize = (setting: Setting) =>
    Object.fromEntries((Object.keys(outcomes[setting]) as Variant[]).map((v) => [v, summarizeOutcomes(outcomes[setting][v])])) as Record<Variant, OutcomeSummary>;
  const p50 = (xs: number[]) => round(percentile([...xs].sort((a, b) => a - b), 0.5), 1);
  const result: SplitResult = {
    meetings: meetings.length,
    words: meetings.reduce((n, m) => n + m.words, 0),
    queries: tasks.length,
    spans: tasks.reduce((n, t) => n + t.q.spans.length, 0),
    passages: stats?.n ?? 0,
    passage_seconds_mean: round(stats?.seconds ?? 0, 1),
    passage_seconds_median: round(stats?.median_seconds ?? 0, 1),
    passage_words_median: stats?.median_words ?? 0,
    load_seconds: round(loadSeconds, 1),
    search_ms_p50: { as_asked: p50(latency.as_asked), any_word: p50(latency.any_word) },
    settings: { library: summarize('library'), recording: summarize('recording') },
  };
  const lib5 = result.settings.library.as_asked;
  log(`  ${split}: ${meetings.length} meetings, ${result.passages} passages, ${tasks.length} queries — library: recall@5 ${lib5.recall_at_5}, MRR@10 ${lib5.mrr_at_10}, ${lib5.zero_results} with no result`);
  return { result, records };
}

export interface SearchQualityOptions {
  /** Postgres URL; "" for the embedded PGlite (tests); default the bench's database. */
  url?: string;
}

export async function runSearchQuality(dir: string, log: (line: string) => void, opts: SearchQualityOptions = {}): Promise<BenchmarkReport> {
  const { meetings, malformedSpans } = loadSearchMeetings(dir);
  const lib = await startBenchLibrary({ schemaPrefix: 'search_quality', ...(opts.url !== undefined ? { url: opts.url } : {}) });
  const splits: Partial<Record<Split, SplitResult>> = {};
  const queries: Partial<Record<Split, QueryRecord[]>> = {};
  try {
    for (const split of SPLITS) {
      const part = meetings.filter((m) => m.split === split);
      if (part.length === 0) continue;
      const { result, records } = await evaluateSplit(lib, split, part, log);
      splits[split] = result;
      queries[split] = records;
    }
  } finally {
    await lib.stop();
  }
  const headlineSplit: Split = splits.test ? 'test' : (SPLITS.find((s) => splits[s]) ?? 'test');
  const headline = splits[headlineSplit]!;
  const result = {
    benchmark: 'search-quality',
    timestamp: new Date().toISOString(),
    machine: machineInfo(),
    database: lib.database,
    data: {
      dir,
      source: 'QMSum data/ALL (product, academic, committee meetings), specific queries with relevant turn spans',
      meetings: meetings.length,
      malformed_spans_skipped: malformedSpans,
      meetings_over_speaker_limit: meetings.filter((m) => m.speakers > MAX_SPEAKERS).length,
      times: `synthesized: QMSum has no times, so each turn lasts its words at ${WORDS_PER_MINUTE} words a minute (a turn of markup only, one word), turns back to back`,
      speakers: `S1…S${MAX_SPEAKERS} by first appearance, unnamed; a meeting with more speakers numbers them round again`,
      markup: 'QMSum\'s non-speech marks ({vocalsound}, {disfmarker}, …) removed from the text, as in convert-quality',
    },
    definitions: {
      relevant: 'a passage of the query\'s meeting whose time range overlaps one of the query\'s relevant spans (the spans\' turns as times)',
      recall_at_5: 'share of a query\'s relevant spans that at least one of the first 5 passages overlaps, averaged over queries',
      mrr_at_10: '1 / rank of the first relevant passage within the first 10 (0 when none), averaged over queries',
      hit_at_10: 'share of queries with a relevant passage in the first 10',
      zero_results: 'queries answered with no passage at all (refused ones not included)',
      refused: 'queries the service refused as invalid_request (no searchable words; an unclosed quote)',
      settings: { library: 'SearchPassages over the split\'s whole library (one owner, every meeting of the split)', recording: 'SearchPassages with recording_id = the query\'s meeting' },
      variants: {
        as_asked: 'the question as written (websearch syntax: all its words, stop words dropped) — what the service does',
        any_word: 'diagnostic: the question\'s words joined by OR',
        as_asked_else_any_word: 'diagnostic: as asked, and the OR\'ed words only when that found nothing',
      },
    },
    headline: { split: headlineSplit, library: headline.settings.library.as_asked, recording: headline.settings.recording.as_asked },
    splits,
    queries,
    targets_met: null,
  };
  const row = (split: Split, setting: Setting) => {
    const s = splits[split]!.settings[setting];
    return [
      split === headlineSplit ? `${split} (measured)` : `${split} (tuning)`,
      setting,
      String(s.as_asked.queries),
      String(s.as_asked.zero_results + s.as_asked.refused),
      String(s.as_asked.recall_at_5),
      String(s.as_asked.mrr_at_10),
      String(s.as_asked_else_any_word.recall_at_5),
      String(s.as_asked_else_any_word.mrr_at_10),
    ];
  };
  const rows = SPLITS.filter((s) => splits[s]).flatMap((split) => SETTINGS.map((setting) => row(split, setting)));
  const h = headline.settings.library.as_asked;
  return {
    result,
    table: { headers: ['split', 'setting', 'queries', 'no result', 'recall@5', 'MRR@10', 'else-OR recall@5', 'else-OR MRR@10'], rows },
    notes: [
      `${headlineSplit}, whole library: ${h.zero_results + h.refused} of ${h.queries} questions found nothing as asked (every word must be in one passage); "else-OR" = OR'ed words when that happens (diagnostic, not the service's behaviour)`,
      `times synthesized at ${WORDS_PER_MINUTE} words a minute (QMSum has none); relevant = overlaps a labelled span of the query's meeting`,
    ],
    failures: [],
  };
}

export const searchQualityBench: Benchmark = {
  name: 'search-quality',
  description: 'passage search on public meetings against the turns people marked as answers: recall@5, MRR@10, questions with no result (issue 34)',
  async run(log) {
    const dir = process.env.BENCH_SEARCH_EVAL_DIR ?? DEFAULT_SEARCH_EVAL_DIR;
    try {
      return await runSearchQuality(dir, log);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      if (!/no evaluation set|no meetings/.test(reason)) throw err;
      return {
        result: { benchmark: 'search-quality', timestamp: new Date().toISOString(), skipped: true, reason, targets_met: null },
        table: { headers: ['search-quality'], rows: [['skipped']] },
        notes: [reason],
        failures: [],
      };
    }
  },
};
