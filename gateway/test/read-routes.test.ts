/**
 * Every read route end to end (HTTP → gateway → auth/billing/library over gRPC → Postgres):
 * shapes, tenancy (two users; the other's ids answer 404 like missing ones), paging while
 * inserts happen, full-text search, filters, and bad parameters.
 */
import { MAX_CURSOR_CHARS } from '@murmur/contract';
import { library } from '@murmur/proto';
import { seedLibrary } from '@murmur/app';
import { get, startSystem, type TestSystem } from './support/system';

describe('read routes', () => {
  let sys: TestSystem;
  let alice: { id: string; key: string };
  let bob: { id: string; key: string };

  beforeAll(async () => {
    sys = await startSystem();
    const a = await sys.newUser('alice@example.com');
    const b = await sys.newUser('bob@example.com');
    alice = { id: a.user.id, key: a.key };
    bob = { id: b.user.id, key: b.key };
    await seedLibrary(sys.admin.library, alice.id, { recordings: 30, seed: 1 });
    await seedLibrary(sys.admin.library, bob.id, { recordings: 12, seed: 2 });
  });
  afterAll(async () => {
    await sys.stop();
  });

  const api = (path: string, key: string) => get(sys.baseUrl, `/api/v1${path}`, key);

  async function walk(path: string, key: string, limit: number, between?: (page: number) => Promise<void>) {
    const ids: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 1000; page++) {
      const sep = path.includes('?') ? '&' : '?';
      const res = await api(`${path}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, key);
      expect(res.status).toBe(200);
      expect(res.body.object).toBe('list');
      expect(res.body.data.length).toBeLessThanOrEqual(limit);
      ids.push(...res.body.data.map((d: { id: string }) => d.id));
      if (!res.body.has_more) {
        expect(res.body.next_cursor).toBeNull();
        return ids;
      }
      cursor = res.body.next_cursor;
      if (between) await between(page);
    }
    throw new Error('paging did not end');
  }

  it('GET /me returns the profile with plan, usage and library counts', async () => {
    const res = await api('/me', alice.key);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: alice.id, object: 'user', email: 'alice@example.com', plan: { id: 'free' } });
    expect(res.body.library.recordings).toBe(30);
    expect(res.body.usage.object).toBe('usage');
    expect(new Date(res.body.created_at).toISOString()).toBe(res.body.created_at);
  });

  it('GET /usage returns plan limits, balances, reset time, cap, spend and the rate-limit window', async () => {
    const res = await api('/usage', alice.key);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      object: 'usage',
      plan: { id: 'free', rate_limit_per_minute: 10 },
      credits: { monthly_allowance: 100, monthly_remaining: 100, prepaid_remaining: 0 },
      spending: { spent_cents: 0 },
      rate_limit: { limit: 10, remaining: 10, window_seconds: 60 },
    });
    expect(Date.parse(res.body.credits.resets_at)).toBeGreaterThan(Date.now());
  });

  it('reflects a prepaid grant and a cap change on the next call', async () => {
    await sys.admin.billing.grantPrepaidCredits({ userId: bob.id, credits: 500, note: 'test' });
    await sys.admin.billing.setSpendingCap({ userId: bob.id, capCents: 1234 });
    const res = await api('/usage', bob.key);
    expect(res.body.credits.prepaid_remaining).toBe(500);
    expect(res.body.spending.cap_cents).toBe(1234);
  });

  it('lists recordings newest first with the documented shape', async () => {
    const res = await api('/recordings?limit=5', alice.key);
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(5);
    expect(res.body.has_more).toBe(true);
    const first = res.body.data[0];
    expect(Object.keys(first).sort()).toEqual(['created_at', 'duration_seconds', 'folder_id', 'id', 'object', 'preview', 'title', 'updated_at']);
    expect(first.id).toMatch(/^rec_/);
    const times = res.body.data.map((r: { created_at: string }) => Date.parse(r.created_at));
    expect([...times].sort((x, y) => y - x)).toEqual(times);
  });

  it('returns one recording with transcript segments and artifacts', async () => {
    const list = await api('/recordings?limit=30', alice.key);
    const ids: string[] = list.body.data.map((r: { id: string }) => r.id);
    let sawArtifact = false;
    for (const id of ids.slice(0, 10)) {
      const res = await api(`/recordings/${id}`, alice.key);
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(id);
      expect(res.body.transcript.text.length).toBeGreaterThan(20);
      expect(res.body.transcript.segments[0]).toEqual(expect.objectContaining({ start: expect.any(Number), end: expect.any(Number), text: expect.any(String) }));
      for (const a of res.body.artifacts) {
        sawArtifact = true;
        expect(a).toMatchObject({ object: 'artifact', recording_id: id, format: expect.stringMatching(/^(markdown|plain)$/) });
        expect(a.id).toMatch(/^art_/);
      }
    }
    expect(sawArtifact).toBe(true);
  });

  it('walks every recording exactly once while new recordings are inserted between pages', async () => {
    const before = await walk('/recordings', alice.key, 100);
    expect(before).toHaveLength(30);
    const inserted: string[] = [];
    const seen = await walk('/recordings', alice.key, 7, async (page) => {
      for (const createdAt of [new Date(), new Date(Date.now() - 45 * 86_400_000)]) {
        const { recording } = await sys.admin.library.createRecording({
          ownerId: alice.id,
          title: `inserted while paging ${page}`,
          folderId: '',
          durationSeconds: 3,
          createdAt,
          transcript: undefined,
          recordingId: '',
        });
        inserted.push(recording!.id);
      }
    });
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of before) expect(seen).toContain(id);
    for (const id of seen) expect([...before, ...inserted]).toContain(id);
  });

  it('finds recordings by words of their transcript and title, and not by absent words', async () => {
    const { recording } = await sys.admin.library.createRecording({
      ownerId: alice.id,
      title: 'Zeppelin hangar walkthrough',
      folderId: '',
      durationSeconds: 12,
      createdAt: undefined,
      transcript: { text: 'We inspected the quasar calibration rig and agreed on budgets.', language: 'en', segments: [] },
      recordingId: '',
    });
    const byTranscript = await api('/recordings?q=quasar', alice.key);
    expect(byTranscript.body.data.map((r: { id: string }) => r.id)).toEqual([recording!.id]);
    const byTitle = await api('/recordings?q=zeppelin', alice.key);
    expect(byTitle.body.data.map((r: { id: string }) => r.id)).toEqual([recording!.id]);
    const absent = await api('/recordings?q=xylophonic', alice.key);
    expect(absent.body.data).toEqual([]);
    const otherTenant = await api('/recordings?q=quasar', bob.key);
    expect(otherTenant.body.data).toEqual([]);
  });

  it('filters recordings by folder and by creation dates', async () => {
    const folders = await api('/folders?limit=100', alice.key);
    const folder = folders.body.data.find((f: { recording_count: number }) => f.recording_count > 0);
    const inFolder = await walk(`/recordings?folder_id=${folder.id}`, alice.key, 100);
    expect(inFolder).toHaveLength(folder.recording_count);
    const all = (await api('/recordings?limit=100', alice.key)).body.data as { id: string; created_at: string }[];
    const pivot = all[Math.floor(all.length / 2)]!.created_at;
    const after = (await api(`/recordings?limit=100&created_after=${pivot}`, alice.key)).body.data as { created_at: string }[];
    const beforePivot = (await api(`/recordings?limit=100&created_before=${pivot}`, alice.key)).body.data as { created_at: string }[];
    expect(after.length).toBeGreaterThan(0);
    expect(beforePivot.length).toBeGreaterThan(0);
    for (const r of after) expect(Date.parse(r.created_at)).toBeGreaterThan(Date.parse(pivot));
    for (const r of beforePivot) expect(Date.parse(r.created_at)).toBeLessThan(Date.parse(pivot));
  });

  it('lists and reads Thought Threads with items and context sources', async () => {
    const list = await api('/thought-threads', alice.key);
    expect(list.status).toBe(200);
    expect(list.body.data.length).toBeGreaterThan(0);
    const thread = await api(`/thought-threads/${list.body.data[0].id}`, alice.key);
    expect(thread.status).toBe(200);
    expect(thread.body.object).toBe('thought_thread');
    expect(thread.body.items.length).toBeGreaterThan(0);
    expect(thread.body.context_sources.length).toBeGreaterThan(0);
    expect(thread.body.context_sources[0]).toEqual(expect.objectContaining({ kind: expect.any(String), ref_id: expect.any(String), title: expect.any(String) }));
  });

  it('lists folders and knowledge bases', async () => {
    const folders = await api('/folders', alice.key);
    expect(folders.body.data[0]).toEqual(expect.objectContaining({ object: 'folder', id: expect.stringMatching(/^fld_/) }));
    const kbs = await api('/knowledge-bases', alice.key);
    expect(kbs.body.data[0]).toEqual(expect.objectContaining({ object: 'knowledge_base', id: expect.stringMatching(/^kb_/) }));
  });

  describe('tenancy', () => {
    const routes = ['/recordings', '/thought-threads', '/folders', '/knowledge-bases'];

    it.each(routes)('never shows one user the other user’s items in %s', async (route) => {
      const mine = await walk(route, alice.key, 100);
      const theirs = await walk(route, bob.key, 100);
      expect(mine.length).toBeGreaterThan(0);
      expect(theirs.length).toBeGreaterThan(0);
      expect(mine.filter((id) => theirs.includes(id))).toEqual([]);
    });

    it.each([
      ['/recordings', '/recordings/'],
      ['/thought-threads', '/thought-threads/'],
    ])('answers another user’s id in %s exactly like a missing one', async (list, one) => {
      const theirs = (await api(`${list}?limit=1`, bob.key)).body.data[0].id as string;
      expect((await api(`${one}${theirs}`, bob.key)).status).toBe(200);
      const foreign = await api(`${one}${theirs}`, alice.key);
      const missing = await api(`${one}${theirs.slice(0, 4)}${'2'.repeat(theirs.length - 4)}`, alice.key);
      const garbage = await api(`${one}not-an-id`, alice.key);
      for (const res of [foreign, missing, garbage]) {
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('not_found');
      }
      expect(foreign.body.error.message).toBe(missing.body.error.message);
    });

    it('answers a folder filter naming another user’s folder with the 404 of a missing folder, as transcribe does', async () => {
      const theirFolder = (await api('/folders?limit=100', bob.key)).body.data.find((f: { recording_count: number }) => f.recording_count > 0);
      const foreign = await api(`/recordings?folder_id=${theirFolder.id}`, alice.key);
      const missing = await api(`/recordings?folder_id=fld_${'2'.repeat(theirFolder.id.length - 4)}`, alice.key);
      for (const res of [foreign, missing]) {
        expect(res.status).toBe(404);
        expect(res.body.error).toMatchObject({ code: 'not_found', param: 'folder_id' });
      }
      expect(foreign.body.error.message).toBe(missing.body.error.message);
      expect((await api(`/recordings?folder_id=${theirFolder.id}`, bob.key)).status).toBe(200);
    });

    it('refuses one user’s cursor in the other’s list with 400 on `cursor`', async () => {
      for (const list of ['/recordings', '/thought-threads', '/folders', '/knowledge-bases']) {
        const page = await api(`${list}?limit=1`, bob.key);
        expect(page.body.next_cursor).toEqual(expect.any(String));
        const res = await api(`${list}?limit=1&cursor=${encodeURIComponent(page.body.next_cursor)}`, alice.key);
        expect(res.status).toBe(400);
        expect(res.body.error).toMatchObject({ code: 'invalid_request', param: 'cursor' });
        expect((await api(`${list}?limit=1&cursor=${encodeURIComponent(page.body.next_cursor)}`, bob.key)).status).toBe(200);
      }
    });
  });

  describe('bad parameters', () => {
    it.each([
      ['/recordings?limit=0', 'limit'],
      ['/recordings?limit=101', 'limit'],
      ['/recordings?limit=-1', 'limit'],
      ['/recordings?limit=abc', 'limit'],
      ['/recordings?limit=1.5', 'limit'],
      ['/recordings?cursor=forged', 'cursor'],
      ['/recordings?cursor=eyJjIjoiMjAyNi0wMS0wMVQwMDowMDowMFoiLCJpIjoicmVjXzEifQ.AAAAAAAAAAAAAAAAAAAAAA', 'cursor'],
      ['/recordings?created_after=yesterday', 'created_after'],
      ['/recordings?created_before=2026-13-45T00:00:00Z', 'created_before'],
      ['/recordings?created_after=2026-02-01T00:00:00Z&created_before=2026-01-01T00:00:00Z', 'created_after'],
      ['/thought-threads?limit=0', 'limit'],
      ['/folders?limit=101', 'limit'],
      ['/knowledge-bases?cursor=%00%01', 'cursor'],
      ['/me?verbose=1', 'verbose'],
      ['/recordings?q=%C3%28', 'q'],
      ['/recordings?q=%FF%FE', 'q'],
      ['/recordings?q=%ED%A0%80', 'q'],
      ['/recordings?q=%ZZ', 'q'],
      ['/recordings?q=caf%C3', 'q'],
      ['/recordings?q=a%00b', 'q'],
      ['/recordings?q=a&q=b', 'q'],
      ['/recordings?folder_id=%FF', 'folder_id'],
      ['/recordings?cursor=%C0%AF', 'cursor'],
      ['/recordings?created_after=2026-02-30', 'created_after'],
      ['/recordings?created_after=2026-02-29T00:00:00Z', 'created_after'],
      ['/recordings?created_before=2026-04-31T00:00:00Z', 'created_before'],
      ['/recordings?created_before=2026-01-01T24:00:00Z', 'created_before'],
      ['/recordings?created_before=2026-01-01T10:60:00Z', 'created_before'],
      ['/thought-threads?cursor=%ED%B0%80', 'cursor'],
      ['/folders?limit=%FF', 'limit'],
      ['/knowledge-bases?%FF=1', '%FF'],
    ])('%s → 400 invalid_request with param %s', async (path, param) => {
      const res = await api(path, alice.key);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request', param });
      expect(res.body.error.message.length).toBeGreaterThan(10);
    });

    it('refuses a cursor over the contract’s length at the query, as the OpenAPI document and the MCP schema state it', async () => {
      const res = await api(`/recordings?cursor=${'A'.repeat(MAX_CURSOR_CHARS + 1)}`, alice.key);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_request', param: 'cursor', message: `\`cursor\` is too long (${MAX_CURSOR_CHARS} characters at most).` });
    });

    it('rejects a cursor with one flipped character', async () => {
      const page = await api('/recordings?limit=2', alice.key);
      const c: string = page.body.next_cursor;
      const flipped = c.slice(0, 5) + (c[5] === 'A' ? 'B' : 'A') + c.slice(6);
      const res = await api(`/recordings?limit=2&cursor=${encodeURIComponent(flipped)}`, alice.key);
      expect(res.status).toBe(400);
      expect(res.body.error.param).toBe('cursor');
    });
  });

  it('presents each stored artifact format by its public name (plain, markdown)', async () => {
    const carol = await sys.newUser('carol@example.com');
    const { recording } = await sys.admin.library.createRecording({
      ownerId: carol.user.id,
      title: 'Formats',
      folderId: '',
      durationSeconds: 3,
      createdAt: undefined,
      transcript: { text: 'A short note about artifact formats.', language: 'en', segments: [] },
      recordingId: '',
    });
    const add = (format: library.ArtifactFormat, content: string) =>
      sys.admin.library.addArtifact({ ownerId: carol.user.id, recordingId: recording!.id, kind: 'summary', format, content, creditsCharged: 0, data: undefined });
    const plain = (await add(library.ArtifactFormat.ARTIFACT_FORMAT_PLAIN, 'plain text')).artifact!;
    const markdown = (await add(library.ArtifactFormat.ARTIFACT_FORMAT_MARKDOWN, '# markdown')).artifact!;
    const res = await api(`/recordings/${recording!.id}`, carol.key);
    expect(res.status).toBe(200);
    const formats = Object.fromEntries(res.body.artifacts.map((a: { id: string; format: string }) => [a.id, a.format]));
    expect(formats).toEqual({ [plain.id]: 'plain', [markdown.id]: 'markdown' });
  });
});
