/**
 * `npm run bench -- search-speed`: how fast passage search (LibraryService.SearchPassages,
 * issue 34) answers over a large library, and what the passage index adds to saving a
 * transcription. The library service runs in the bench process over gRPC, on a Postgres schema
 * of its own that is dropped at the end (BENCH_SEARCH_KEEP=1 keeps it for a look).
 *
 * 1. Load, through the real CreateRecording RPC (BENCH_SEARCH_LOAD_CONCURRENCY at a time): one
 *    owner's BENCH_SEARCH_RECORDINGS two-hour transcripts (default 10,000; ~20,000 words and
 *    ~260 passages each, corpus.ts), in 20 folders, interleaved with four other owners' (a tenth
 *    as many in all). Then VACUUM ANALYZE, as autovacuum would (it also empties the full-text
 *    index's pending list).
 * 2. Search latency, one call at a time, the kinds interleaved: a rare word, a common word, a
 *    very common word, two words, a quoted phrase, a common word within a folder, within a
 *    recording, the second page of a common word (cursor), and a common word searched by one of
 *    the small owners (whose matches are a few among the large owner's). Each kind up to
 *    BENCH_SEARCH_SAMPLES times (or BENCH_SEARCH_SECONDS_PER_KIND), rotating over its queries;
 *    how many passages each query matches; EXPLAIN (ANALYZE, BUFFERS) of the very statement the
 *    service ran (observed on its database handle).
 * 3. Saves: CreateRecording of a fresh two-hour transcript, into the empty library first and into
 *    the loaded one after, timing each statement of its transaction (observed the same way): the
 *    recording's INSERT, and the passages' DELETE + INSERT — what indexing adds.
 * 4. Sizes of the tables and each index (pg_total_relation_size, pg_relation_size).
 */
import { performance } from 'node:perf_hooks';
import type { PoolClient } from 'pg';
import { MurmurError } from '@murmur/contract';
import { newId, type Database } from '@murmur/kit';
import type { library } from '@murmur/proto';
import { machineInfo, mapConcurrently, type Benchmark, type BenchmarkReport } from '../benchmark';
import { startBenchLibrary, type BenchLibrary } from '../library-service';
import { cpuPercent, cpuSnapshot } from '../processes';
import { NOISE_PERCENT } from '../rounds';
import { Corpus, PHRASES } from './corpus';
import { latencySummary, planFacts, planSummary, type LatencySummary, type PlanFacts } from './figures';

const envInt = (name: string, fallback: number): number => {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? Math.floor(v) : fallback;
};

/** What a run does; every field has an environment override (see the module comment). */
export interface SearchSpeedSettings {
  recordings: number;
  other_owners: number;
  other_recordings: number;
  folders: number;
  words_per_recording: number;
  seconds_per_word: number;
  load_concurrency: number;
  samples_per_kind: number;
  seconds_per_kind: number;
  page_size: number;
  saves: number;
  keep: boolean;
  /** A schema kept by an earlier run (BENCH_SEARCH_KEEP=1): measure on it instead of loading a new one. */
  reuse_schema: string | null;
}

export function searchSpeedSettings(env: NodeJS.ProcessEnv = process.env): SearchSpeedSettings {
  const recordings = envInt('BENCH_SEARCH_RECORDINGS', 10_000);
  return {
    recordings,
    other_owners: 4,
    other_recordings: Math.max(4, Math.round(recordings / 10)),
    folders: 20,
    words_per_recording: envInt('BENCH_SEARCH_WORDS', 20_000),
    // Two hours for 20,000 words: ~167 words a minute.
    seconds_per_word: 0.36,
    load_concurrency: envInt('BENCH_SEARCH_LOAD_CONCURRENCY', 4),
    samples_per_kind: envInt('BENCH_SEARCH_SAMPLES', 100),
    seconds_per_kind: envInt('BENCH_SEARCH_SECONDS_PER_KIND', 60),
    page_size: 20,
    saves: envInt('BENCH_SEARCH_SAVES', 10),
    keep: env.BENCH_SEARCH_KEEP === '1',
    reuse_schema: env.BENCH_SEARCH_SCHEMA || null,
  };
}

/** A kind of query measured, and the requests it rotates over. */
interface QueryKind {
  name: string;
  what: string;
  requests: Array<Omit<library.SearchPassagesRequest, 'ownerId'>>;
  /** Measure the second page: the first page's cursor is fetched (untimed) first. */
  secondPage?: boolean;
  /** Search as this owner instead of the one with the large library. */
  ownerId?: string;
}

const request = (query: string, extra: Partial<library.SearchPassagesRequest> = {}, pageSize = 20): Omit<library.SearchPassagesRequest, 'ownerId'> => ({
  query,
  page: { limit: pageSize, cursor: '' },
  sources: [],
  folderId: '',
  recordingId: '',
  createdAfter: undefined,
  createdBefore: undefined,
  ...extra,
});

function queryKinds(corpus: Corpus, folders: string[], recordings: string[], otherOwner: string, pageSize: number): QueryKind[] {
  const at = (rank: number) => corpus.words[rank - 1]!;
  const meeting = (word: string) => {
    const r = corpus.rankOf(word);
    if (r === 0) throw new Error(`${word} is not in the corpus`);
    return word;
  };
  const rareRank = Math.round(corpus.words.length * 0.75);
  const common = ['team', 'project', 'customer', 'budget', 'meeting'].map(meeting);
  const r = (q: string, extra: Partial<library.SearchPassagesRequest> = {}) => request(q, extra, pageSize);
  return [
    { name: 'rare_word', what: `a word of rank ~${rareRank.toLocaleString('en-US')} (tail of the vocabulary; also some transcripts' topic)`, requests: Array.from({ length: 10 }, (_, i) => r(at(rareRank + i))) },
    { name: 'common_word', what: 'a frequent meeting word (team, project, customer, budget, meeting)', requests: common.map((w) => r(w)) },
    { name: 'very_common_word', what: 'a frequent spoken word that is not a stop word (think, know, yeah)', requests: ['think', 'know', 'yeah'].map((w) => r(w)) },
    { name: 'two_words', what: 'two meeting words, both required', requests: ['budget review', 'customer release', 'design feedback', 'sales forecast', 'server migration'].map((q) => r(q)) },
    { name: 'phrase', what: 'a quoted two-word phrase', requests: PHRASES.slice(0, 6).map((p) => r(`"${p}"`)) },
    { name: 'folder', what: 'a frequent meeting word within one folder (1/20 of the recordings)', requests: common.map((w, i) => r(w, { folderId: folders[i % folders.length]! })) },
    { name: 'recording', what: 'a frequent meeting word within one recording', requests: common.map((w, i) => r(w, { recordingId: recordings[(i * 7919) % recordings.length]! })) },
    { name: 'second_page', what: 'page 2 of a frequent meeting word (cursor from page 1)', requests: common.map((w) => r(w)), secondPage: true },
    {
      name: 'small_library',
      what: 'a frequent meeting word, searched by another owner whose library is 1/40 the size, in the same tables',
      requests: common.map((w) => r(w)),
      ownerId: otherOwner,
    },
  ];
}

/** What the service's database handle saw: the statements of save transactions, the last search statement. */
class Observer {
  saveStatements: Array<{ kind: string; ms: number }> | null = null;
  lastSearch: { sql: string; params: unknown[] } | null = null;
  captureSearch = false;
  passagesInsert: { sql: string; params: unknown[] } | null = null;

  /** Wraps `db.transaction` and `db.query` before the service starts; the service's SQL is unchanged. */
  attach(db: Database): void {
    const transaction = db.transaction.bind(db);
    const query = db.query.bind(db);
    db.transaction = ((fn: Parameters<Database['transaction']>[0]) => transaction((client, commitWith) => fn(this.timed(client), commitWith))) as Database['transaction'];
    db.query = ((sql: string, params?: unknown[]) => {
      if (this.captureSearch && /FROM passages p, q/.test(sql)) this.lastSearch = { sql, params: params ?? [] };
      return query(sql, params);
    }) as Database['query'];
  }

  private timed(client: PoolClient): PoolClient {
    return new Proxy(client, {
      get: (target, prop) => {
        const value = Reflect.get(target, prop, target) as unknown;
        if (prop !== 'query' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
        return (sql: unknown, params?: unknown[]) => {
          const text = typeof sql === 'string' ? sql : String((sql as { text?: string }).text ?? '');
          const started = performance.now();
          const out = (value as (...a: unknown[]) => Promise<unknown>).call(target, sql, params);
          const statements = this.saveStatements;
          if (statements) {
            const kind = statementKind(text);
            if (kind === 'passages_insert') this.passagesInsert = { sql: text, params: params ?? [] };
            void out.then(
              () => statements.push({ kind, ms: performance.now() - started }),
              () => undefined,
            );
          }
          return out;
        };
      },
    });
  }
}

/** Which statement of a save `sql` is. */
export function statementKind(sql: string): 'recording_insert' | 'passages_delete' | 'passages_insert' | 'other' {
  if (/^\s*INSERT INTO recordings\b/i.test(sql)) return 'recording_insert';
  if (/^\s*DELETE FROM passages\b/i.test(sql)) return 'passages_delete';
  if (/^\s*INSERT INTO passages\b/i.test(sql)) return 'passages_insert';
  return 'other';
}

interface SaveSample {
  e2e_ms: number;
  recording_insert_ms: number;
  passages_ms: number;
  passages: number;
}

function summarizeSaves(samples: SaveSample[]) {
  const share = samples.map((s) => s.passages_ms / s.e2e_ms);
  return {
    saves: samples.length,
    passages_per_save: samples[0]?.passages ?? 0,
    e2e_ms: latencySummary(samples.map((s) => s.e2e_ms), 1),
    recording_insert_ms: latencySummary(samples.map((s) => s.recording_insert_ms), 1),
    passages_delete_insert_ms: latencySummary(samples.map((s) => s.passages_ms), 1),
    without_passages_ms: latencySummary(samples.map((s) => s.e2e_ms - s.passages_ms), 1),
    passages_share_of_save: latencySummary(share, 3),
  };
}

/**
 * The owners, folders and recordings of a schema an earlier run kept: the owner with the most
 * recordings is the large library, the others the small ones.
 */
async function loadedLibrary(db: Database): Promise<{ owner: string; others: string[]; folders: string[]; recordings: string[] }> {
  const owners = await db.query<{ owner_id: string }>('SELECT owner_id FROM recordings GROUP BY owner_id ORDER BY count(*) DESC');
  if (owners.length < 2) throw new Error(`schema ${db.schema} holds no loaded library (run once with BENCH_SEARCH_KEEP=1 to keep one)`);
  const owner = owners[0]!.owner_id;
  const folders = await db.query<{ id: string }>('SELECT id FROM folders WHERE owner_id = $1 ORDER BY created_at, id', [owner]);
  const recordings = await db.query<{ id: string }>('SELECT id FROM recordings WHERE owner_id = $1 AND folder_id IS NOT NULL ORDER BY created_at, id', [owner]);
  return { owner, others: owners.slice(1).map((o) => o.owner_id), folders: folders.map((f) => f.id), recordings: recordings.map((r) => r.id) };
}

/**
 * CPU used while `work` ran, percent of one core: this process (the service and its client), the
 * service's Postgres backends, the whole machine, and what is left — others' work on a shared
 * machine (above {@link NOISE_PERCENT}, latencies are suspect).
 */
async function withCpu<T>(db: Database, work: () => Promise<T>): Promise<{ value: T; cpu: { bench_process: number; postgres_backends: number; machine_busy: number; other: number } }> {
  const pids = async () => (await db.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [db.schema])).map((r) => r.pid);
  const before = cpuSnapshot({}, db.embedded ? [] : await pids());
  const value = await work();
  const after = cpuSnapshot({}, db.embedded ? [] : await pids());
  const p = cpuPercent(before, after);
  const own = (p.load_generator ?? 0) + (p.postgres ?? 0);
  return {
    value,
    cpu: { bench_process: p.load_generator ?? 0, postgres_backends: p.postgres ?? 0, machine_busy: p.machine_busy ?? 0, other: Math.max(0, Math.round(((p.machine_busy ?? 0) - own) * 10) / 10) },
  };
}

/** Runs `fn` on one connection of the service's pool, in the service's schema. */
async function withClient<T>(db: Database, fn: (c: PoolClient) => Promise<T>): Promise<T> {
  const c = await db.pool.connect();
  try {
    return await fn(c);
  } finally {
    c.release();
  }
}

async function sizes(db: Database) {
  return withClient(db, async (c) => {
    const tables = await c.query<{ name: string; rows: string; total: string; heap: string; toast: string; indexes: string }>(
      `SELECT c.relname AS name, c.reltuples::bigint::text AS rows, pg_total_relation_size(c.oid)::text AS total, pg_relation_size(c.oid)::text AS heap,
              coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0)::text AS toast, pg_indexes_size(c.oid)::text AS indexes
       FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' AND c.relname IN ('passages', 'recordings') ORDER BY c.relname`,
    );
    const indexes = await c.query<{ name: string; table: string; bytes: string }>(
      `SELECT i.relname AS name, t.relname AS table, pg_relation_size(i.oid)::text AS bytes
       FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
       WHERE t.relnamespace = current_schema()::regnamespace AND t.relname IN ('passages', 'recordings') ORDER BY t.relname, i.relname`,
    );
    const [columns] = (
      await c.query<{ text_bytes: number; search_bytes: number }>(
        'SELECT avg(pg_column_size(text))::float8 AS text_bytes, avg(pg_column_size(search))::float8 AS search_bytes FROM (SELECT text, search FROM passages LIMIT 20000) s',
      )
    ).rows;
    const mb = (b: string) => Math.round(Number(b) / 1e5) / 10;
    return {
      unit: 'MB (10^6 bytes)',
      tables: Object.fromEntries(tables.rows.map((t) => [t.name, { rows: Number(t.rows), total_mb: mb(t.total), heap_mb: mb(t.heap), toast_mb: mb(t.toast), indexes_mb: mb(t.indexes) }])),
      indexes: Object.fromEntries(indexes.rows.map((i) => [i.name, mb(i.bytes)])),
      passage_column_bytes_mean: { text: Math.round(columns?.text_bytes ?? 0), search: Math.round(columns?.search_bytes ?? 0) },
    };
  });
}

async function explain(db: Database, statement: { sql: string; params: unknown[] }, options = 'ANALYZE, BUFFERS, FORMAT JSON'): Promise<{ facts: PlanFacts; text: string[] }> {
  return withClient(db, async (c) => {
    const json = await c.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (${options}) ${statement.sql}`, statement.params);
    const text = await c.query<{ 'QUERY PLAN': string }>(`EXPLAIN (${options.replace('FORMAT JSON', 'FORMAT TEXT')}) ${statement.sql}`, statement.params);
    return { facts: planFacts(json.rows[0]!['QUERY PLAN']), text: text.rows.map((r) => r['QUERY PLAN']) };
  });
}

export async function runSearchSpeed(log: (line: string) => void, settings: SearchSpeedSettings = searchSpeedSettings(), opts: { url?: string } = {}): Promise<BenchmarkReport> {
  const timestamp = new Date().toISOString();
  const machine = machineInfo();
  const corpus = new Corpus();
  const observer = new Observer();
  const lib: BenchLibrary = await startBenchLibrary({
    schemaPrefix: 'search_speed',
    ...(opts.url !== undefined ? { url: opts.url } : {}),
    poolSize: Math.max(10, settings.load_concurrency * 2),
    deadlineMs: 300_000,
    keep: settings.keep,
    ...(settings.reuse_schema ? { reuse: settings.reuse_schema } : {}),
    beforeStart: (db) => observer.attach(db),
  });
  const failures: string[] = [];
  try {
    const reused = settings.reuse_schema ? await loadedLibrary(lib.db) : null;
    const owner = reused?.owner ?? newId('usr');
    const others = reused?.others ?? Array.from({ length: settings.other_owners }, () => newId('usr'));
    const folders: string[] = reused?.folders ?? [];
    for (let i = 0; !reused && i < settings.folders; i++) {
      const { folder } = await lib.client.createFolder({ ownerId: owner, name: `Folder ${i + 1}`, createdAt: undefined });
      folders.push(folder!.id);
    }
    const start = Date.now() - 400 * 24 * 3600 * 1000;
    const total = settings.recordings + settings.other_recordings;
    const spacing = (365 * 24 * 3600 * 1000) / total;
    let seed = 1;
    const createRequest = (ownerId: string, folderId: string, createdAt: Date | undefined): library.CreateRecordingRequest => {
      const t = corpus.transcript(seed++, settings.words_per_recording, settings.seconds_per_word);
      return {
        ownerId,
        title: `Planning meeting ${seed}`,
        folderId,
        durationSeconds: t.segments.at(-1)?.endSeconds ?? 0,
        transcript: { text: t.text, language: 'en', segments: t.segments, timeline: { words: undefined, speakers: t.speakers.map((id) => ({ id, name: '' })), wordCount: 0 } },
        createdAt,
        recordingId: newId('rec'),
      };
    };
    /**
     * CreateRecording, again (the same id: the call is idempotent) when the service answers
     * service_unavailable, as a client is told to; each retry is counted and reported.
     */
    let retries = 0;
    const create = async (req: library.CreateRecordingRequest): Promise<library.Recording> => {
      for (let attempt = 0; ; attempt++) {
        try {
          const { recording } = await lib.client.createRecording(req);
          if (!recording) throw new Error('CreateRecording answered no recording');
          return recording;
        } catch (err) {
          if (!(err instanceof MurmurError && err.code === 'service_unavailable') || attempt >= 3) throw err;
          retries += 1;
          log(`  CreateRecording answered service_unavailable; retrying in 2 s (${retries} so far)`);
          await new Promise((resolve) => setTimeout(resolve, 2_000));
        }
      }
    };
    const walLsn = async () => (await lib.db.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn'))[0]!.lsn;
    const walBytes = async (from: string) => Number((await lib.db.query<{ n: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::text AS n', [from]))[0]!.n);

    /** One timed save of a fresh two-hour transcript, its statements observed. */
    const save = async (): Promise<SaveSample> => {
      const req = createRequest(owner, '', undefined);
      const statements: Array<{ kind: string; ms: number }> = [];
      observer.saveStatements = statements;
      const started = performance.now();
      await create(req);
      const e2e = performance.now() - started;
      observer.saveStatements = null;
      await new Promise((resolve) => setImmediate(resolve));
      const ms = (kind: string) => statements.filter((s) => s.kind === kind).reduce((n, s) => n + s.ms, 0);
      const passages = ((observer.passagesInsert?.params[6] as unknown[] | undefined) ?? []).length;
      return { e2e_ms: e2e, recording_insert_ms: ms('recording_insert'), passages_ms: ms('passages_delete') + ms('passages_insert'), passages };
    };
    const saves = async (label: string) => {
      const { value: out, cpu } = await withCpu(lib.db, async () => {
        const samples: SaveSample[] = [];
        for (let i = 0; i < settings.saves; i++) samples.push(await save());
        return samples;
      });
      const s = { ...summarizeSaves(out), cpu_percent: cpu, noisy: cpu.other > NOISE_PERCENT };
      log(`  saves into the ${label} library: p50 ${s.e2e_ms.p50} ms, of which passages ${s.passages_delete_insert_ms.p50} ms (max ${s.passages_delete_insert_ms.max})`);
      return { ...s, samples: out.map((x) => ({ e2e_ms: Math.round(x.e2e_ms), recording_insert_ms: Math.round(x.recording_insert_ms), passages_ms: Math.round(x.passages_ms) })) };
    };

    log(`  schema ${lib.schema} on ${lib.database}${reused ? ' (kept by an earlier run: no load)' : ''}`);
    const savesEmpty = reused ? null : await saves('empty');

    // The load: every tenth call is another owner's, so their rows interleave as in a shared database.
    const jobs = reused ? [] : Array.from({ length: total }, (_, i) => i);
    const mine: string[] = reused?.recordings ?? [];
    let otherCount = 0;
    let mineCount = 0;
    const walAtStart = await walLsn();
    const loadStarted = performance.now();
    let lastLog = loadStarted;
    await mapConcurrently(jobs, settings.load_concurrency, async (i) => {
      const isOther = otherCount < settings.other_recordings && (i % 10 === 9 || mineCount >= settings.recordings);
      let req: library.CreateRecordingRequest;
      if (isOther) req = createRequest(others[otherCount++ % others.length]!, '', new Date(start + i * spacing));
      else req = createRequest(owner, folders[mineCount++ % folders.length]!, new Date(start + i * spacing));
      const recording = await create(req);
      if (!isOther) mine.push(recording.id);
      const now = performance.now();
      if (now - lastLog > 30_000) {
        lastLog = now;
        const done = mine.length + otherCount;
        log(`  loaded ${done}/${total} recordings, ${((now - loadStarted) / 1000).toFixed(0)} s (${(done / ((now - loadStarted) / 1000)).toFixed(1)}/s)`);
      }
    });
    const loadSeconds = (performance.now() - loadStarted) / 1000;
    const loadWal = await walBytes(walAtStart);
    const vacuumStarted = performance.now();
    if (!reused) {
      await withClient(lib.db, async (c) => {
        await c.query('VACUUM (ANALYZE) passages');
        await c.query('VACUUM (ANALYZE) recordings');
      });
    }
    const vacuumSeconds = (performance.now() - vacuumStarted) / 1000;
    const [counts] = await lib.db.query<{ passages: number; mine: number }>(
      'SELECT count(*)::int AS passages, count(*) FILTER (WHERE owner_id = $1)::int AS mine FROM passages',
      [owner],
    );
    const [recordingCount] = await lib.db.query<{ n: number }>('SELECT count(*)::int AS n FROM recordings');
    const load = {
      reused_schema: reused !== null,
      recordings: recordingCount?.n ?? 0,
      owner_recordings: mine.length,
      passages: counts?.passages ?? 0,
      owner_passages: counts?.mine ?? 0,
      ...(reused
        ? {}
        : {
            seconds: Math.round(loadSeconds),
            recordings_per_second: Math.round((total / loadSeconds) * 10) / 10,
            passages_per_second: Math.round((counts?.passages ?? 0) / loadSeconds),
            vacuum_analyze_seconds: Math.round(vacuumSeconds),
            wal_mb: Math.round(loadWal / 1e6),
            wal_kb_per_recording: Math.round(loadWal / 1e3 / total),
            service_unavailable_retries: retries,
            path: `CreateRecording RPC, ${settings.load_concurrency} at a time`,
          }),
    };
    if (!reused) log(`  loaded ${total} recordings, ${load.passages} passages in ${load.seconds} s; VACUUM ANALYZE ${load.vacuum_analyze_seconds} s`);
    const sizesLoaded = await sizes(lib.db);

    // Search latency, the kinds interleaved.
    const kinds = queryKinds(corpus, folders, mine, others[0]!, settings.page_size);
    const search = (kind: QueryKind, r: Omit<library.SearchPassagesRequest, 'ownerId'>) => lib.client.searchPassages({ ownerId: kind.ownerId ?? owner, ...r });
    const cursors = new Map<string, string>();
    for (const kind of kinds.filter((k) => k.secondPage)) {
      for (const r of kind.requests) {
        const first = await search(kind, r);
        if (!first.page?.nextCursor) throw new Error(`${kind.name}: "${r.query}" has no second page`);
        cursors.set(r.query, first.page.nextCursor);
      }
    }
    const call = (kind: QueryKind, r: Omit<library.SearchPassagesRequest, 'ownerId'>) =>
      search(kind, kind.secondPage ? { ...r, page: { limit: r.page!.limit, cursor: cursors.get(r.query)! } } : r);
    // Warm-up: every request once (untimed), so the measurement is of a warm cache, as a live database's is.
    for (const kind of kinds) for (const r of kind.requests) await call(kind, r);
    const samples = new Map<string, number[]>(kinds.map((k) => [k.name, []]));
    const spent = new Map<string, number>(kinds.map((k) => [k.name, 0]));
    const results = new Map<string, number[]>(kinds.map((k) => [k.name, []]));
    const { cpu: searchCpu } = await withCpu(lib.db, async () => {
      for (let round = 0; ; round++) {
        const open = kinds.filter((k) => samples.get(k.name)!.length < settings.samples_per_kind && (spent.get(k.name)! < settings.seconds_per_kind * 1000 || samples.get(k.name)!.length < 5));
        if (open.length === 0) break;
        for (const kind of open) {
          const r = kind.requests[round % kind.requests.length]!;
          const started = performance.now();
          const res = await call(kind, r);
          const ms = performance.now() - started;
          samples.get(kind.name)!.push(ms);
          spent.set(kind.name, spent.get(kind.name)! + ms);
          results.get(kind.name)!.push(res.passages.length);
        }
      }
    });
    log(`  searches: others used ${searchCpu.other}% of a core meanwhile`);

    // How many passages each query matches (the owner's), and the plan of the statement the service ran.
    const searchResults: Record<string, unknown> = {};
    for (const kind of kinds) {
      const matches: number[] = [];
      for (const r of kind.requests) {
        const [row] = await lib.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM passages WHERE owner_id = $1 AND search @@ websearch_to_tsquery('english', $2)
             AND ($3 = '' OR folder_id = $3) AND ($4 = '' OR source_id = $4)`,
          [kind.ownerId ?? owner, r.query, r.folderId, r.recordingId],
        );
        matches.push(row?.n ?? 0);
      }
      observer.captureSearch = true;
      await call(kind, kind.requests[0]!);
      observer.captureSearch = false;
      const plan = observer.lastSearch ? await explain(lib.db, observer.lastSearch) : null;
      const latency = latencySummary(samples.get(kind.name)!);
      searchResults[kind.name] = {
        what: kind.what,
        queries: kind.requests.map((r) => ({ query: r.query, folder: r.folderId !== '', recording: r.recordingId !== '' })).map((q, i) => ({ ...q, matches: matches[i] })),
        matches_mean: Math.round(matches.reduce((a, b) => a + b, 0) / matches.length),
        passages_returned_mean: Math.round((results.get(kind.name)!.reduce((a, b) => a + b, 0) / Math.max(1, results.get(kind.name)!.length)) * 10) / 10,
        latency_ms: latency,
        plan: plan ? { query: kind.requests[0]!.query, summary: planSummary(plan.facts), facts: plan.facts, text: plan.text } : null,
      };
      log(`  ${kind.name.padEnd(16)} p50 ${latency.p50} ms, p99 ${latency.p99} ms (n ${latency.n}); ~${(searchResults[kind.name] as { matches_mean: number }).matches_mean} matches`);
    }

    // Saves into the loaded library, then the plan of the last one's passages INSERT (rolled back).
    const savesLoaded = await saves('loaded');
    let insertPlan: { summary: string; facts: PlanFacts; text: string[] } | null = null;
    if (observer.passagesInsert) {
      const statement = observer.passagesInsert;
      insertPlan = await withClient(lib.db, async (c) => {
        await c.query('BEGIN');
        try {
          await c.query('DELETE FROM passages WHERE owner_id = $1 AND source_id = $2', [statement.params[0], statement.params[2]]);
          const json = await c.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, BUFFERS, WAL, FORMAT JSON) ${statement.sql}`, statement.params);
          const facts = planFacts(json.rows[0]!['QUERY PLAN']);
          await c.query('ROLLBACK');
          await c.query('BEGIN');
          await c.query('DELETE FROM passages WHERE owner_id = $1 AND source_id = $2', [statement.params[0], statement.params[2]]);
          const text = await c.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS, WAL) ${statement.sql}`, statement.params);
          return { summary: `${facts.execution_ms} ms for ${(statement.params[6] as unknown[]).length} passages`, facts, text: text.rows.map((r) => r['QUERY PLAN']) };
        } finally {
          await c.query('ROLLBACK');
        }
      });
    }

    // The text search vectors alone, of the last saved transcript: the whole transcript's (the
    // recording's own `search` column) and its passages'.
    let tsvectors: { recording_ms: number; passages_ms: number } | null = null;
    if (observer.passagesInsert) {
      const [ownerId, , recordingId] = observer.passagesInsert.params as [string, string, string];
      const time = async (sql: string) => (await explain(lib.db, { sql, params: [ownerId, recordingId] }, 'ANALYZE, FORMAT JSON')).facts.execution_ms;
      tsvectors = {
        recording_ms: await time('SELECT length(recording_search_vector(title, transcript)) FROM recordings WHERE owner_id = $1 AND id = $2'),
        passages_ms: await time(`SELECT sum(length(to_tsvector('english', text))) FROM passages WHERE owner_id = $1 AND source_id = $2`),
      };
    }

    const saveFigures = {
      empty_library: savesEmpty,
      loaded_library: savesLoaded,
      passages_insert_plan: insertPlan,
      tsvector_alone_ms: tsvectors,
      how: 'CreateRecording RPC of a fresh 2-hour transcript, one at a time; each statement of its transaction timed from send to answer on the service\'s own connection (db.transaction observed, SQL unchanged). "without passages" = the whole RPC minus the passages\' DELETE + INSERT.',
    };
    const summary = (name: string) => (searchResults[name] as { latency_ms: LatencySummary }).latency_ms;
    const result = {
      benchmark: 'search-speed',
      ok: failures.length === 0,
      failures,
      timestamp,
      machine,
      database: { url: lib.database, schema: lib.schema, kept: settings.keep },
      settings,
      corpus: {
        ...corpus.opts,
        text: 'synthetic English-like speech: spoken function words, meeting vocabulary, then pronounceable non-words; Zipf word frequencies; each transcript has its own topic words; 12 common two-word phrases; sentences of 6–22 words as segments; 4 speakers in turns of ~16 sentences',
      },
      load,
      sizes: sizesLoaded,
      search: searchResults,
      search_cpu_percent: searchCpu,
      search_noisy: searchCpu.other > NOISE_PERCENT,
      save: saveFigures,
      targets_met: null,
    };
    const rows = kinds.map((k) => {
      const s = searchResults[k.name] as { matches_mean: number; latency_ms: LatencySummary };
      return [k.name, String(s.matches_mean), String(s.latency_ms.n), s.latency_ms.p50.toFixed(1), s.latency_ms.p99.toFixed(1)];
    });
    const p = sizesLoaded.tables.passages;
    return {
      result,
      failures,
      table: { headers: ['query', 'matches', 'n', 'p50 ms', 'p99 ms'], rows },
      notes: [
        `${load.owner_passages.toLocaleString('en-US')} passages of one owner (${load.passages.toLocaleString('en-US')} in all) ${reused ? `in the kept schema ${lib.schema}` : `loaded in ${load.seconds} s through CreateRecording`}`,
        `others' CPU during the searches: ${searchCpu.other}% of a core${searchCpu.other > NOISE_PERCENT ? ' (noisy: repeat before trusting p99)' : ''}`,
        `save of a 2-hour transcript into the loaded library: p50 ${savesLoaded.e2e_ms.p50} ms, of which the passages ${savesLoaded.passages_delete_insert_ms.p50} ms (max ${savesLoaded.passages_delete_insert_ms.max} ms)`,
        p ? `passages: ${p.total_mb} MB in all (heap ${p.heap_mb}, TOAST ${p.toast_mb}, indexes ${p.indexes_mb})` : 'no passages table',
        `common word p50 ${summary('common_word').p50} ms, rare word p50 ${summary('rare_word').p50} ms`,
      ],
    };
  } finally {
    await lib.stop();
  }
}

export const searchSpeedBench: Benchmark = {
  name: 'search-speed',
  description: 'passage search p50/p99 per query kind over ~2.6 million passages of one owner, what indexing adds to a save, sizes (issue 34); BENCH_SEARCH_RECORDINGS=300 for a quick run',
  run: (log) => runSearchSpeed(log),
};
