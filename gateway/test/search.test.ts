/**
 * Passage search and questions end to end (issue 34): GET /api/v1/search, POST /api/v1/ask and
 * the MCP `search` and `ask` tools on both protocol revisions, through the checked test gateway (every response held to the OpenAPI
 * document) against real auth, billing and library services. Two users with identical text each
 * see only their own passages, field by field; bad input is the contract's 400 or 404.
 */
import { auth, library } from '@murmur/proto';
import { callTool, connectMcpAt, expectValidOutput, MCP_REVISIONS, outputValidators } from './support/mcp-client';
import { get, startSystem, type TestSystem } from './support/system';

const TEXT = 'We decided that the pricing page ships on Friday after the legal review.';

describe('passage search and ask over REST and MCP', () => {
  let sys: TestSystem;
  type Seeded = { id: string; key: string; recording: string; folder: string; thread: string; kb: string; title: string };
  let alice: Seeded;
  let bob: Seeded;

  async function seed(email: string, label: string): Promise<Seeded> {
    const { user, key } = await sys.newUser(email);
    const lib = sys.admin.library;
    const folder = (await lib.createFolder({ ownerId: user.id, name: `${label} folder`, createdAt: undefined })).folder!.id;
    const recording = (
      await lib.createRecording({
        ownerId: user.id,
        recordingId: '',
        title: `${label} planning`,
        folderId: folder,
        durationSeconds: 20,
        createdAt: undefined,
        transcript: {
          text: `Good morning. ${TEXT}`,
          language: 'en',
          segments: [
            { startSeconds: 0, endSeconds: 3, text: 'Good morning.', speaker: 'S1' },
            { startSeconds: 3, endSeconds: 11.5, text: TEXT, speaker: 'S2' },
          ],
          timeline: { words: undefined, speakers: [{ id: 'S1', name: '' }, { id: 'S2', name: `${label} Lee` }], wordCount: 0 },
        },
      })
    ).recording!.id;
    const thread = (await lib.createThoughtThread({ ownerId: user.id, title: `${label} thread`, createdAt: undefined })).thread!.id;
    await lib.addThreadItem({ ownerId: user.id, threadId: thread, kind: library.ThreadItemKind.THREAD_ITEM_KIND_NOTE, text: 'Check the pricing page copy with legal.', recordingId: '' });
    const kb = (await lib.createKnowledgeBase({ ownerId: user.id, name: `${label} handbook`, description: 'How pricing decisions are made.', createdAt: undefined })).knowledgeBase!.id;
    return { id: user.id, key, recording, folder, thread, kb, title: `${label} planning` };
  }

  beforeAll(async () => {
    sys = await startSystem({ ai: true });
    alice = await seed('alice-search@example.com', 'Alice');
    bob = await seed('bob-search@example.com', 'Bob');
  });
  afterAll(async () => {
    await sys.stop();
  });

  const search = (query: string, key: string) => get(sys.baseUrl, `/api/v1/search?${query}`, key);

  it('finds the moment: the speaker turn with its times, speaker, highlights and a link', async () => {
    const res = await search('q=pricing+page&type=recording', alice.key);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'list', has_more: false, next_cursor: null, ranking: 'text' });
    expect(res.body.data).toEqual([
      {
        object: 'search_result',
        type: 'recording',
        id: alice.recording,
        passage_id: expect.stringMatching(/^psg_/),
        title: alice.title,
        passage: TEXT,
        highlights: [{ offset: 20, length: 12 }],
        start: 3,
        end: 11.5,
        speaker: 'S2',
        speaker_name: 'Alice Lee',
        thread_item_id: null,
        score: expect.any(Number),
        created_at: expect.any(String),
        url: `/api/v1/recordings/${alice.recording}`,
      },
    ]);
    const [hit] = res.body.data;
    expect([...hit.passage].slice(20, 32).join('')).toBe('pricing page');
  });

  it('searches threads and knowledge bases too, and narrows by type', async () => {
    const all = await search('q=pricing', alice.key);
    expect(all.status).toBe(200);
    expect(all.body.data.map((r: { type: string; id: string }) => `${r.type}:${r.id}`).sort()).toEqual(
      [`recording:${alice.recording}`, `thought_thread:${alice.thread}`, `knowledge_base:${alice.kb}`].sort(),
    );
    const threads = await search('q=pricing&type=thought_thread,knowledge_base', alice.key);
    expect(threads.body.data.map((r: { type: string }) => r.type).sort()).toEqual(['knowledge_base', 'thought_thread']);
    const thread = threads.body.data.find((r: { type: string }) => r.type === 'thought_thread');
    expect(thread).toMatchObject({ start: null, end: null, speaker: null, thread_item_id: expect.stringMatching(/^thi_/), url: `/api/v1/thought-threads/${alice.thread}` });
    expect(threads.body.data.find((r: { type: string }) => r.type === 'knowledge_base').url).toBeNull();
  });

  it('shows each of two users with identical text only their own passages, in every field', async () => {
    const forAlice = await search('q=legal+review', alice.key);
    const forBob = await search('q=legal+review', bob.key);
    expect(forAlice.body.data).toHaveLength(1);
    expect(forBob.body.data).toHaveLength(1);
    const a = JSON.stringify(forAlice.body);
    const b = JSON.stringify(forBob.body);
    for (const id of [bob.id, bob.recording, bob.folder, bob.thread, bob.kb, 'Bob']) expect(a).not.toContain(id);
    for (const id of [alice.id, alice.recording, alice.folder, alice.thread, alice.kb, 'Alice']) expect(b).not.toContain(id);
    expect(forAlice.body.data[0].passage_id).not.toBe(forBob.body.data[0].passage_id);
    // Another user's folder or recording is not found, exactly like a missing one.
    for (const q of [`folder_id=${bob.folder}`, `recording_id=${bob.recording}`, 'recording_id=rec_00000000000000000000000000']) {
      const res = await search(`q=pricing&${q}`, alice.key);
      expect([q, res.status, res.body.error.code]).toEqual([q, 404, 'not_found']);
    }
    expect((await search(`q=pricing&folder_id=${alice.folder}`, alice.key)).body.data.map((r: { id: string }) => r.id)).toEqual([alice.recording]);
    expect((await search(`q=pricing&recording_id=${alice.recording}`, alice.key)).body.data).toHaveLength(1);
  });

  it('pages with a cursor bound to its user, query and filters', async () => {
    const first = await search('q=pricing&limit=1', alice.key);
    expect(first.body.has_more).toBe(true);
    const ids = [first.body.data[0].passage_id];
    let cursor = first.body.next_cursor as string;
    for (let i = 0; i < 5 && cursor; i++) {
      const next = await search(`q=pricing&limit=1&cursor=${encodeURIComponent(cursor)}`, alice.key);
      expect(next.status).toBe(200);
      ids.push(...next.body.data.map((r: { passage_id: string }) => r.passage_id));
      cursor = next.body.next_cursor;
    }
    const whole = await search('q=pricing', alice.key);
    expect(ids).toEqual(whole.body.data.map((r: { passage_id: string }) => r.passage_id));
    const other = await search(`q=legal&limit=1&cursor=${encodeURIComponent(first.body.next_cursor)}`, alice.key);
    expect([other.status, other.body.error.param]).toEqual([400, 'cursor']);
    const stolen = await search(`q=pricing&limit=1&cursor=${encodeURIComponent(first.body.next_cursor)}`, bob.key);
    expect([stolen.status, stolen.body.error.param]).toEqual([400, 'cursor']);
  });

  it.each([
    ['', 'q'],
    ['q=', 'q'],
    ['q=%20%20', 'q'],
    [`q=${'a'.repeat(501)}`, 'q'],
    ['q=%22pricing', 'q'],
    ['q=-pricing', 'q'],
    ['q=the+and', 'q'],
    ['q=pricing&type=meetings', 'type'],
    ['q=pricing&type=', 'type'],
    ['q=pricing&sort=date', 'sort'],
    ['q=pricing&q=page', 'q'],
    ['q=pricing&limit=0', 'limit'],
    ['q=pricing&created_after=2026-02-30', 'created_after'],
  ])('answers 400 invalid_request to ?%s', async (query, param) => {
    const res = await search(query, alice.key);
    expect([res.status, res.body.error.code, res.body.error.param]).toEqual([400, 'invalid_request', param]);
  });

  it('is a read: a read-only key may search', async () => {
    const readOnly = (await sys.admin.auth.createApiKey({ userId: alice.id, name: 'search', expiry: auth.KeyExpiry.KEY_EXPIRY_90_DAYS, scopes: ['read'] })).key;
    expect((await search('q=pricing', readOnly)).status).toBe(200);
    expect((await search('q=pricing', '')).status).toBe(401);
  });

  describe.each(MCP_REVISIONS)('the search tool (MCP %s)', (revision) => {
    it('answers passages as structured content with resource links, and errors as isError results', async () => {
      const client = await connectMcpAt(revision, sys.baseUrl, alice.key);
      try {
        const validators = await outputValidators(client);
        const { tools } = await client.listTools();
        expect(tools.find((t) => t.name === 'search')?.annotations).toMatchObject({ readOnlyHint: true });
        const raw = await client.callTool({ name: 'search', arguments: { q: 'pricing', type: ['recording', 'thought_thread'] } });
        expect(raw.isError).toBeFalsy();
        expectValidOutput(validators, 'search', raw.structuredContent);
        const data = (raw.structuredContent as { data: Array<{ type: string; id: string }> }).data;
        expect(data.map((r) => r.type).sort()).toEqual(['recording', 'thought_thread']);
        const links = (raw.content as Array<{ type: string; uri?: string }>).filter((c) => c.type === 'resource_link');
        expect(links.map((l) => l.uri)).toEqual([`${sys.baseUrl}/api/v1/recordings/${alice.recording}`]);
        const mine = await callTool(client, 'search', { q: 'legal review', recording_id: alice.recording });
        expect(mine.data.data.map((r: { id: string }) => r.id)).toEqual([alice.recording]);
        const foreign = await callTool(client, 'search', { q: 'legal', recording_id: bob.recording });
        expect([foreign.isError, foreign.data.error.code]).toEqual([true, 'not_found']);
        const broken = await callTool(client, 'search', { q: '"pricing' });
        expect([broken.isError, broken.data.error.code, broken.data.error.param]).toEqual([true, 'invalid_request', 'q']);
      } finally {
        await client.close();
      }
    });
  });

  const askApi = (key: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${sys.baseUrl}/api/v1/ask`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }).then(
      async (res) => ({ status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> }),
    );
  const credits = async (key: string) => {
    const u = (await get(sys.baseUrl, '/api/v1/usage', key)).body;
    return { remaining: u.credits.monthly_remaining as number, reserved: u.credits.reserved as number };
  };

  describe('POST /ask', () => {
    it('answers from the caller’s passages extractively, citing them, and charges once', async () => {
      const before = await credits(alice.key);
      const res = await askApi(alice.key, { question: 'When does the pricing page ship?' }, { 'idempotency-key': 'ask-alice-1' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ object: 'answer', question: 'When does the pricing page ship?', mode: 'extractive', engine: 'local' });
      expect(res.body.answer).toContain('We decided that the pricing page ships on Friday after the legal review. [');
      const cited = res.body.citations.find((c: { id: string }) => c.id === alice.recording);
      expect(cited).toMatchObject({ type: 'recording', title: alice.title, start: 3, end: 11.5, speaker: 'S2', speaker_name: 'Alice Lee', url: `/api/v1/recordings/${alice.recording}` });
      expect(res.body.passages.map((p: { passage_id: string }) => p.passage_id)).toContain(cited.passage_id);
      expect(JSON.stringify(res.body)).not.toContain('Bob');
      expect(res.body.credits_charged).toBeGreaterThan(0);
      expect(res.headers.get('ratelimit-limit')).toBe('10');
      const after = await credits(alice.key);
      expect(after).toEqual({ remaining: before.remaining - res.body.credits_charged, reserved: 0 });
      // The same key and question replay the answer free; another question under it is a 409.
      const replay = await askApi(alice.key, { question: 'When does the pricing page ship?' }, { 'idempotency-key': 'ask-alice-1' });
      expect([replay.status, replay.headers.get('idempotent-replayed'), replay.body.id]).toEqual([200, 'true', res.body.id]);
      const reused = await askApi(alice.key, { question: 'Who reviews the page?' }, { 'idempotency-key': 'ask-alice-1' });
      expect([reused.status, reused.body.error.code]).toEqual([409, 'idempotency_conflict']);
      expect(await credits(alice.key)).toEqual(after);
    });

    it('answers a question that matches nothing so, free', async () => {
      const before = await credits(bob.key);
      const res = await askApi(bob.key, { question: 'What is the zeppelin maintenance schedule?' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ citations: [], passages: [], credits_charged: 0 });
      expect(await credits(bob.key)).toEqual(before);
    });

    it.each([
      [{}, 'question'],
      [{ question: '' }, 'question'],
      [{ question: 'what is the' }, 'question'],
      [{ question: 'x'.repeat(1001) }, 'question'],
      [{ question: 'pricing?', type: ['meetings'] }, 'type.0'],
      [{ question: 'pricing?', mode: 'generative' }, 'mode'],
      [{ question: 'pricing?', created_after: '2026-02-30' }, 'created_after'],
    ])('answers 400 to %j, charging nothing', async (body, param) => {
      const before = await credits(alice.key);
      const res = await askApi(alice.key, body);
      expect([res.status, res.body.error.code, res.body.error.param]).toEqual([400, 'invalid_request', param]);
      expect(await credits(alice.key)).toEqual(before);
    });

    it('answers 404 for another user’s recording, charging nothing, and 403 to a read-only key', async () => {
      const before = await credits(alice.key);
      const res = await askApi(alice.key, { question: 'What was decided?', recording_id: bob.recording });
      expect([res.status, res.body.error.code]).toEqual([404, 'not_found']);
      expect(await credits(alice.key)).toEqual(before);
      const readOnly = (await sys.admin.auth.createApiKey({ userId: alice.id, name: 'ro-ask', expiry: auth.KeyExpiry.KEY_EXPIRY_90_DAYS, scopes: ['read'] })).key;
      expect((await askApi(readOnly, { question: 'What was decided?' })).status).toBe(403);
    });
  });

  describe.each(MCP_REVISIONS)('the ask tool (MCP %s)', (revision) => {
    it('answers with citations as structured content and links the cited recordings', async () => {
      const client = await connectMcpAt(revision, sys.baseUrl, bob.key);
      try {
        const validators = await outputValidators(client);
        const { tools } = await client.listTools();
        expect(tools.find((t) => t.name === 'ask')?.annotations).toMatchObject({ readOnlyHint: false });
        const raw = await client.callTool({ name: 'ask', arguments: { question: 'What did the legal review decide about the pricing page?', type: ['recording'] } });
        expect(raw.isError).toBeFalsy();
        expectValidOutput(validators, 'ask', raw.structuredContent);
        const answer = raw.structuredContent as { citations: Array<{ id: string }>; credits_charged: number };
        expect(answer.citations.map((c) => c.id)).toEqual([bob.recording]);
        expect(answer.credits_charged).toBeGreaterThan(0);
        const links = (raw.content as Array<{ type: string; uri?: string }>).filter((c) => c.type === 'resource_link');
        expect(links.map((l) => l.uri)).toEqual([`${sys.baseUrl}/api/v1/recordings/${bob.recording}`]);
        const bad = await callTool(client, 'ask', { question: '   ' });
        expect([bad.isError, bad.data.error.code, bad.data.error.param]).toEqual([true, 'invalid_request', 'question']);
      } finally {
        await client.close();
      }
    });
  });
});
