/**
 * Hybrid passage search (issue 34) on a real Postgres and on PGlite, with the array vector index
 * (pgvector cannot run on these machines: see docs/search.md). The embeddings engine is an
 * external service, so it stands here as a local HTTP server speaking the OpenAI `/embeddings`
 * API, whose vectors come from a small table of synonym groups: "automobile" and "car" share a
 * dimension, so a search for one finds passages that only say the other — what text ranking alone
 * cannot do. The embedder fills vectors in the background; search fuses text and vector ranks
 * (reciprocal rank fusion), falls back to text when the engine fails, and never crosses owners.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '@murmur/kit';
import { testAccess } from '@murmur/kit/testing';
import { EmbeddingsError, normalise, OpenAiEmbeddings, reciprocalRankFusion, startLibraryService, type RunningLibraryService } from '@murmur/library';
import { createPolicyClient } from '@murmur/kit/testing';
import { library } from '@murmur/proto';
import { failure, newOwner, page, startHarness, type Harness } from './harness';

const GROUPS = [
  ['car', 'cars', 'automobile', 'automobiles', 'vehicle', 'vehicles', 'truck'],
  ['price', 'pricing', 'cost', 'costs', 'fee', 'fees', 'expensive'],
  ['hire', 'hiring', 'recruit', 'recruiting', 'candidate', 'candidates'],
  ['budget', 'money', 'spend', 'spending', 'finance'],
  ['holiday', 'vacation', 'leave', 'trip'],
];
const HASHED = 16;

/** The stand-in model: one dimension per synonym group, 16 hashed ones for every other word. */
function conceptVector(text: string): number[] {
  const v = new Array<number>(GROUPS.length + HASHED).fill(0);
  for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    const g = GROUPS.findIndex((group) => group.includes(word));
    if (g >= 0) v[g]! += 3;
    else if (word.length > 3) v[GROUPS.length + ([...word].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7) % HASHED)]! += 1;
  }
  return v;
}

interface EmbeddingsServer {
  url: string;
  requests: Array<{ model: string; input: string[] }>;
  failing: boolean;
  close(): Promise<void>;
}

async function startEmbeddingsServer(): Promise<EmbeddingsServer> {
  const state: EmbeddingsServer = { url: '', requests: [], failing: false, close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model: string; input: string[] };
      state.requests.push(body);
      if (state.failing || req.url !== '/v1/embeddings') {
        res.writeHead(state.failing ? 503 : 404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', model: body.model, data: body.input.map((text, index) => ({ object: 'embedding', index, embedding: conceptVector(text) })) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  state.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return state;
}

describe('reciprocal rank fusion', () => {
  it('sums 1 / (k + rank) over the lists, best first, ties by id', () => {
    expect(reciprocalRankFusion([['a', 'b', 'c'], ['c', 'a']], 60)).toEqual([
      { id: 'a', score: 1 / 61 + 1 / 62 },
      { id: 'c', score: 1 / 63 + 1 / 61 },
      { id: 'b', score: 1 / 62 },
    ]);
    expect(reciprocalRankFusion([['b'], ['a']]).map((r) => r.id)).toEqual(['a', 'b']);
  });
});

describe('the OpenAI-compatible embeddings client', () => {
  let api: EmbeddingsServer;
  beforeAll(async () => {
    api = await startEmbeddingsServer();
  });
  afterAll(async () => {
    await api.close();
  });

  it('asks for the model with the texts and answers unit vectors in order', async () => {
    const engine = new OpenAiEmbeddings({ baseUrl: api.url, model: 'concepts-1', apiKey: 'sk-test', timeoutMs: 2_000 });
    const [a, b] = await engine.embed(['car price', 'vacation']);
    expect(api.requests.at(-1)).toEqual({ model: 'concepts-1', input: ['car price', 'vacation'], encoding_format: 'float' });
    const length = (v: Float32Array) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
    expect(length(a!)).toBeCloseTo(1, 5);
    expect(a![0]).toBeCloseTo(a![1]!, 5);
    expect(b![4]).toBeCloseTo(1, 5);
    expect(Array.from(normalise(new Float32Array([0, 0])))).toEqual([0, 0]);
  });

  it('turns every failure into an EmbeddingsError', async () => {
    api.failing = true;
    try {
      await expect(new OpenAiEmbeddings({ baseUrl: api.url, model: 'm', timeoutMs: 2_000 }).embed(['x'])).rejects.toBeInstanceOf(EmbeddingsError);
    } finally {
      api.failing = false;
    }
    await expect(new OpenAiEmbeddings({ baseUrl: `${api.url}/nowhere`, model: 'm', timeoutMs: 2_000 }).embed(['x'])).rejects.toBeInstanceOf(EmbeddingsError);
    await expect(new OpenAiEmbeddings({ baseUrl: 'http://127.0.0.1:9/v1', model: 'm', timeoutMs: 2_000 }).embed(['x'])).rejects.toBeInstanceOf(EmbeddingsError);
  });
});

const BACKENDS: Array<[string, string]> = process.env.DATABASE_URL ? [['postgres', process.env.DATABASE_URL], ['pglite', '']] : [['pglite', '']];

describe.each(BACKENDS)('hybrid search on %s (array index)', (_name, url) => {
  let h: Harness;
  let api: EmbeddingsServer;
  let lib: RunningLibraryService;
  let client: ReturnType<typeof createPolicyClient<library.LibraryServiceClient>>;

  beforeAll(async () => {
    [h, api] = await Promise.all([startHarness(url), startEmbeddingsServer()]);
    // A second library process on the same database, with embeddings on (the harness's has none).
    lib = await startLibraryService({
      access: testAccess('library'),
      db: h.db,
      log: createLogger('library-test', 'silent'),
      address: '127.0.0.1:0',
      embeddings: new OpenAiEmbeddings({ baseUrl: api.url, model: 'concepts-1', timeoutMs: 2_000 }),
      vectorIndex: 'auto',
    });
    client = createPolicyClient(library.LibraryServiceClient, `127.0.0.1:${lib.port}`, { deadlineMs: 30_000 });
  }, 60_000);
  afterAll(async () => {
    client?.close();
    await lib?.stop();
    await api?.close();
    await h?.stop();
  });

  const transcript = (texts: string[]): library.Transcript => ({
    text: texts.join(' '),
    language: 'en',
    segments: texts.map((text, i) => ({ startSeconds: i * 40, endSeconds: i * 40 + 35, text })),
  });
  const record = async (ownerId: string, texts: string[], title = 'Notes') =>
    (await client.createRecording({ ownerId, recordingId: '', title, folderId: '', durationSeconds: texts.length * 40, createdAt: undefined, transcript: transcript(texts) })).recording!;
  const search = (ownerId: string, query: string, extra: Partial<library.SearchPassagesRequest> = {}) =>
    client.searchPassages({ ownerId, query, page: page(20), sources: [], folderId: '', recordingId: '', createdAfter: undefined, createdBefore: undefined, ...extra });

  it('uses the array index where the server has no pgvector', () => {
    expect(lib.vectorIndex).toBe('array');
  });

  it('finds passages by meaning as well as by words, words first', async () => {
    const owner = newOwner();
    await record(owner, ['We bought a new automobile for the delivery team.', 'The lunch menu changes on Monday.', 'Our car needs new tyres before winter.']);
    await lib.embedder!.idle();
    const res = await search(owner, 'car');
    expect(res.ranking).toBe(library.SearchRanking.SEARCH_RANKING_HYBRID);
    const texts = res.passages.map((p) => p.text);
    // "car" by text and by meaning first; "automobile" only by meaning, still found; lunch only as a far neighbour, last.
    expect(texts[0]).toBe('Our car needs new tyres before winter.');
    expect(texts[1]).toBe('We bought a new automobile for the delivery team.');
    expect(res.passages[1]!.highlights).toEqual([]);
    expect(res.passages[0]!.score).toBeGreaterThan(res.passages[1]!.score);
    // Text search alone (the harness's process, no engine) finds only the literal one.
    const textOnly = await h.client.searchPassages({ ownerId: owner, query: 'car', page: page(20), sources: [], folderId: '', recordingId: '', createdAfter: undefined, createdBefore: undefined });
    expect(textOnly.ranking).toBe(library.SearchRanking.SEARCH_RANKING_TEXT);
    expect(textOnly.passages.map((p) => p.text)).toEqual(['Our car needs new tyres before winter.']);
  });

  it('pages a hybrid ranking with its cursor, and keeps filters and owners apart', async () => {
    const owner = newOwner();
    const other = newOwner();
    await record(other, ['The vehicle fleet grows next year.', 'Truck repairs cost too much.'], 'Theirs');
    const rec = await record(owner, Array.from({ length: 12 }, (_, i) => `Report ${i}: the vehicle count is ${i * 3}.`), 'Fleet');
    await record(owner, ['A truck and a car were sold.'], 'Sales');
    await lib.embedder!.idle();
    const whole = await search(owner, 'vehicle', { page: page(100) });
    expect(whole.ranking).toBe(library.SearchRanking.SEARCH_RANKING_HYBRID);
    expect(whole.passages.every((p) => p.title === 'Fleet' || p.title === 'Sales' || p.title === 'Notes')).toBe(true);
    expect(whole.passages.some((p) => p.title === 'Theirs')).toBe(false);
    const walked: string[] = [];
    let cursor = '';
    for (let i = 0; i < 20; i++) {
      const res = await search(owner, 'vehicle', { page: page(5, cursor) });
      walked.push(...res.passages.map((p) => p.id));
      if (!res.page!.hasMore) break;
      cursor = res.page!.nextCursor;
    }
    expect(walked).toEqual(whole.passages.map((p) => p.id));
    const one = await search(owner, 'vehicle', { recordingId: rec.id, page: page(100) });
    expect(new Set(one.passages.map((p) => p.sourceId))).toEqual(new Set([rec.id]));
  });

  it('ranks by text when the engine fails, says so, and refuses to go on a hybrid walk by text', async () => {
    const owner = newOwner();
    await record(owner, Array.from({ length: 6 }, (_, i) => `Budget line ${i} for the budget review.`));
    await lib.embedder!.idle();
    const first = await search(owner, 'budget', { page: page(2) });
    expect(first.ranking).toBe(library.SearchRanking.SEARCH_RANKING_HYBRID);
    api.failing = true;
    try {
      const fallback = await search(owner, 'budget', { page: page(2) });
      expect(fallback.ranking).toBe(library.SearchRanking.SEARCH_RANKING_TEXT);
      expect(fallback.passages).toHaveLength(2);
      expect((await failure(search(owner, 'budget', { page: page(2, first.page!.nextCursor) }))).code).toBe('service_unavailable');
      // A text walk begun during the outage goes on by text, whatever the engine does next.
      api.failing = false;
      const next = await search(owner, 'budget', { page: page(2, fallback.page!.nextCursor) });
      expect(next.ranking).toBe(library.SearchRanking.SEARCH_RANKING_TEXT);
    } finally {
      api.failing = false;
    }
  });

  it('embeds new writes without being asked, and refuses nothing it did before', async () => {
    const owner = newOwner();
    const before = api.requests.length;
    await record(owner, ['Recruiting two candidates this quarter.']);
    await lib.embedder!.idle();
    expect(api.requests.length).toBeGreaterThan(before);
    const res = await search(owner, 'hiring');
    expect(res.passages.map((p) => p.text)).toEqual(['Recruiting two candidates this quarter.']);
    expect((await failure(search(owner, 'the and'))).param).toBe('q');
    const [row] = await h.db.query<{ n: number }>("SELECT count(*)::int AS n FROM passages WHERE owner_id = $1 AND embedding_model = 'concepts-1'", [owner]);
    expect(row!.n).toBe(1);
  });
});
