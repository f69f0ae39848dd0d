/**
 * bench/search-speed's pieces: the synthetic corpus (deterministic, Zipfian, transcripts shaped
 * like meetings), the latency and plan figures, the statement classes of a save, and one small
 * whole run against the real library service (DATABASE_URL, else the embedded PGlite).
 */
import { runSearchSpeed, searchSpeedSettings, statementKind } from '../src/search-speed';
import { Corpus, DEFAULT_CORPUS, PHRASES, randomOf, tailWord } from '../src/search-speed/corpus';
import { latencySummary, planFacts, planSummary } from '../src/search-speed/figures';

describe('the corpus', () => {
  const corpus = new Corpus({ ...DEFAULT_CORPUS, vocabulary: 20_000 });

  it('has distinct words: the head and meeting vocabulary first, then the tail of non-words', () => {
    expect(new Set(corpus.words).size).toBe(20_000);
    expect(corpus.words.slice(0, 3)).toEqual(['the', 'I', 'and']);
    expect(corpus.rankOf('budget')).toBeLessThan(corpus.tailStart);
    expect(corpus.words[corpus.tailStart - 1]).toBe(tailWord(0));
    expect(tailWord(1)).not.toBe(tailWord(0));
    expect(tailWord(12345)).toMatch(/^[a-z]+$/);
  });

  it('draws words by Zipf\'s law: rank 1 about twice as often as rank 2, ten times rank 10', () => {
    const random = randomOf(7);
    const counts = new Map<number, number>();
    for (let i = 0; i < 200_000; i++) {
      const r = corpus.sample(random);
      counts.set(r, (counts.get(r) ?? 0) + 1);
    }
    const c = (r: number) => counts.get(r) ?? 0;
    expect(c(1) / c(2)).toBeGreaterThan(1.8);
    expect(c(1) / c(2)).toBeLessThan(2.2);
    expect(c(1) / c(10)).toBeGreaterThan(8.5);
    expect(c(1) / c(10)).toBeLessThan(11.5);
    expect(c(1) / 200_000).toBeCloseTo(corpus.probability(1), 2);
  });

  it('makes the same transcript from the same seed, of the words asked, timed back to back', () => {
    const a = corpus.transcript(42, 3_000, 0.36);
    expect(corpus.transcript(42, 3_000, 0.36)).toEqual(a);
    expect(corpus.transcript(43, 3_000, 0.36).text).not.toBe(a.text);
    expect(a.words).toBe(3_000);
    expect(a.text.split(/\s+/)).toHaveLength(3_000);
    expect(a.segments[0]!.startSeconds).toBe(0);
    expect(a.segments.at(-1)!.endSeconds).toBeCloseTo(3_000 * 0.36, 3);
    for (let i = 1; i < a.segments.length; i++) expect(a.segments[i]!.startSeconds).toBe(a.segments[i - 1]!.endSeconds);
    for (const s of a.segments) expect(s.text).toMatch(/^[A-Z].*[.?]$/);
  });

  it('has every speaker take turns of several sentences', () => {
    const t = corpus.transcript(3, 20_000, 0.36);
    const turns = t.segments.filter((s, i) => i === 0 || s.speaker !== t.segments[i - 1]!.speaker);
    expect(new Set(t.segments.map((s) => s.speaker))).toEqual(new Set(t.speakers));
    expect(t.segments.length / turns.length).toBeGreaterThan(8);
    // Its own topic words and the common phrases are in it.
    expect(PHRASES.some((p) => t.text.includes(p))).toBe(true);
  });
});

describe('figures', () => {
  it('takes nearest-rank percentiles', () => {
    const xs = Array.from({ length: 200 }, (_, i) => i + 1);
    expect(latencySummary(xs)).toEqual({ n: 200, p50: 100, p90: 180, p99: 198, max: 200, mean: 100.5 });
    expect(latencySummary([])).toEqual({ n: 0, p50: 0, p90: 0, p99: 0, max: 0, mean: 0 });
  });

  const PLAN = [
    {
      Plan: {
        'Node Type': 'Limit', 'Actual Rows': 21, 'Actual Loops': 1, 'Actual Total Time': 18.0, 'Shared Hit Blocks': 5000, 'Shared Read Blocks': 12,
        Plans: [
          {
            'Node Type': 'Sort', 'Sort Key': ['(ts_rank_cd(p.search, q_1.q, 32)) DESC', 'p.id COLLATE "C"'], 'Sort Method': 'top-N heapsort', 'Sort Space Used': 61, 'Sort Space Type': 'Memory',
            'Actual Rows': 21, 'Actual Loops': 1, 'Actual Total Time': 17.5,
            Plans: [
              {
                'Node Type': 'Nested Loop', 'Actual Rows': 5577, 'Actual Loops': 1, 'Actual Total Time': 15.2,
                Plans: [
                  {
                    'Node Type': 'Bitmap Heap Scan', 'Relation Name': 'passages', 'Actual Rows': 5577, 'Actual Loops': 1, 'Actual Total Time': 7.5,
                    'Rows Removed by Filter': 575, 'Exact Heap Blocks': 5020, 'Lossy Heap Blocks': 0,
                    Plans: [{ 'Node Type': 'Bitmap Index Scan', 'Index Name': 'passages_search_idx', 'Actual Rows': 6152, 'Actual Loops': 1, 'Actual Total Time': 0.8 }],
                  },
                ],
              },
            ],
          },
        ],
      },
      'Planning Time': 0.6,
      'Execution Time': 18.2,
    },
  ];

  it('reads the facts of a plan: times, rows, what the heap threw away, the sort, buffers', () => {
    const facts = planFacts(PLAN);
    expect(facts).toMatchObject({ planning_ms: 0.6, execution_ms: 18.2, shared_hit: 5000, shared_read: 12, temp_blocks: 0 });
    expect(facts.nodes.map((n) => [n.depth, n.node, n.rows])).toEqual([
      [0, 'Limit', 21],
      [1, 'Sort', 21],
      [2, 'Nested Loop', 5577],
      [3, 'Bitmap Heap Scan', 5577],
      [4, 'Bitmap Index Scan', 6152],
    ]);
    expect(facts.nodes[3]).toMatchObject({ on: 'passages', removed_by_filter: 575, heap_blocks_exact: 5020, heap_blocks_lossy: 0 });
    expect(facts.nodes[1]!.sort).toBe('top-N heapsort, 61 kB Memory');
    expect(planSummary(facts)).toBe(
      '18.2 ms; passages_search_idx → 6152 row ids; heap kept 5577 rows (575 by filter), 5020 exact + 0 lossy blocks, 7.5 ms; ' +
        'ranked 5577 rows (ts_rank_cd + top-N heapsort, 61 kB Memory) 10 ms; buffers hit 5000, read 12',
    );
  });

  it('tells the statements of a save apart', () => {
    expect(statementKind('INSERT INTO recordings AS r (id) VALUES ($1)')).toBe('recording_insert');
    expect(statementKind('DELETE FROM passages WHERE owner_id = $1')).toBe('passages_delete');
    expect(statementKind('\n  INSERT INTO passages (id) SELECT 1')).toBe('passages_insert');
    expect(statementKind('SELECT 1 FROM recordings')).toBe('other');
  });
});

describe('a whole run', () => {
  it('loads, searches every kind, times saves and their passages, and measures the tables', async () => {
    const settings = { ...searchSpeedSettings({}), recordings: 6, other_recordings: 2, folders: 2, words_per_recording: 3_000, samples_per_kind: 2, seconds_per_kind: 1, page_size: 1, saves: 1, load_concurrency: 2 };
    const report = await runSearchSpeed(() => undefined, settings, { url: process.env.DATABASE_URL || '' });
    const r = report.result as {
      load: { recordings: number; owner_recordings: number; passages: number; owner_passages: number };
      search: Record<string, { latency_ms: { n: number }; matches_mean: number; plan: { summary: string } | null }>;
      save: { loaded_library: { passages_per_save: number; passages_delete_insert_ms: { p50: number }; e2e_ms: { p50: number } } };
      sizes: { tables: Record<string, { rows: number; total_mb: number }> };
    };
    // Loaded: 6 of the owner's and 2 of others'; the save into the empty library is the ninth.
    expect(r.load).toMatchObject({ recordings: 9, owner_recordings: 6 });
    expect(r.load.owner_passages).toBeGreaterThan(6 * 15);
    expect(r.load.passages).toBeGreaterThan(r.load.owner_passages);
    expect(Object.keys(r.search)).toEqual(['rare_word', 'common_word', 'very_common_word', 'two_words', 'phrase', 'folder', 'recording', 'second_page', 'small_library']);
    for (const kind of Object.values(r.search)) {
      expect(kind.latency_ms.n).toBeGreaterThanOrEqual(2);
      expect(kind.plan?.summary).toMatch(/ms/);
    }
    expect(r.search.common_word!.matches_mean).toBeGreaterThan(1);
    expect(r.save.loaded_library.passages_per_save).toBeGreaterThan(15);
    expect(r.save.loaded_library.passages_delete_insert_ms.p50).toBeGreaterThan(0);
    expect(r.save.loaded_library.passages_delete_insert_ms.p50).toBeLessThan(r.save.loaded_library.e2e_ms.p50);
    expect(r.sizes.tables.passages!.total_mb).toBeGreaterThan(0);
    expect(report.failures).toEqual([]);
  }, 120_000);
});
