import { CursorCodec, newId } from '@murmur/kit';
import { library } from '@murmur/proto';
import { CURSOR_SECRET, failure, newOwner, page, startHarness, type Harness } from './harness';

const { ThreadItemKind, ContextSourceKind } = library;
const DAY = 24 * 3600 * 1000;
const T0 = new Date('2026-01-01T09:00:00.000Z').getTime();

describe('library reads over gRPC', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.stop();
  });

  const transcript = (text: string) => ({ text, language: 'en', segments: [{ startSeconds: 0, endSeconds: 2, text }] });

  async function recording(ownerId: string, fields: Partial<library.CreateRecordingRequest> = {}): Promise<library.Recording> {
    const res = await h.client.createRecording({ ownerId, title: 'Untitled', folderId: '', durationSeconds: 10, transcript: undefined, createdAt: undefined, ...fields, recordingId: '' });
    return res.recording!;
  }

  /** Everything a list RPC returns for one owner, following cursors to the end. */
  async function walkRecordings(req: Omit<library.ListRecordingsRequest, 'page'>, limit = 100): Promise<string[]> {
    const ids: string[] = [];
    let cursor = '';
    for (;;) {
      const res = await h.client.listRecordings({ ...req, page: page(limit, cursor) });
      ids.push(...res.recordings.map((r) => r.id));
      if (!res.page?.hasMore) return ids;
      cursor = res.page.nextCursor;
    }
  }

  const recordingsOf = (ownerId: string, extra: Partial<library.ListRecordingsRequest> = {}) =>
    walkRecordings({ ownerId, query: '', folderId: '', createdAfter: undefined, createdBefore: undefined, ...extra });

  describe('tenancy', () => {
    interface Seeded {
      owner: string;
      folder: string;
      recording: string;
      thread: string;
      kb: string;
    }

    async function seed(label: string): Promise<Seeded> {
      const owner = newOwner();
      const folder = (await h.client.createFolder({ ownerId: owner, name: `${label} folder`, createdAt: undefined })).folder!.id;
      const rec = await recording(owner, { title: `${label} recording`, folderId: folder, transcript: transcript(`${label} private words`) });
      await h.client.addArtifact({ ownerId: owner, recordingId: rec.id, kind: 'summary', format: 0, content: `${label} summary`, creditsCharged: 1, data: undefined });
      const thread = (await h.client.createThoughtThread({ ownerId: owner, title: `${label} thread`, createdAt: undefined })).thread!.id;
      await h.client.addThreadItem({ ownerId: owner, threadId: thread, kind: ThreadItemKind.THREAD_ITEM_KIND_NOTE, text: 'a note', recordingId: '' });
      await h.client.addThreadContextSource({ ownerId: owner, threadId: thread, kind: ContextSourceKind.CONTEXT_SOURCE_KIND_RECORDING, refId: rec.id });
      const kb = (await h.client.createKnowledgeBase({ ownerId: owner, name: `${label} kb`, description: '', createdAt: undefined })).knowledgeBase!.id;
      await h.client.addKnowledgeBaseRecording({ ownerId: owner, knowledgeBaseId: kb, recordingId: rec.id });
      return { owner, folder, recording: rec.id, thread, kb };
    }

    let alice: Seeded;
    let bob: Seeded;
    beforeAll(async () => {
      alice = await seed('alice');
      bob = await seed('bob');
    });

    it('lists only the caller’s own recordings, threads, folders and knowledge bases', async () => {
      expect(await recordingsOf(alice.owner)).toEqual([alice.recording]);
      const threads = await h.client.listThoughtThreads({ ownerId: alice.owner, page: page() });
      expect(threads.threads.map((t) => t.id)).toEqual([alice.thread]);
      const folders = await h.client.listFolders({ ownerId: alice.owner, page: page() });
      expect(folders.folders.map((f) => f.id)).toEqual([alice.folder]);
      const kbs = await h.client.listKnowledgeBases({ ownerId: alice.owner, page: page() });
      expect(kbs.knowledgeBases.map((k) => k.id)).toEqual([alice.kb]);
      expect(await recordingsOf(bob.owner)).toEqual([bob.recording]);
    });

    it('finds nothing of another owner by full-text search', async () => {
      expect(await recordingsOf(alice.owner, { query: 'bob private' })).toEqual([]);
      expect(await recordingsOf(bob.owner, { query: 'bob private' })).toEqual([bob.recording]);
    });

    it('answers a filter by another owner’s folder with the not_found of a missing folder', async () => {
      const foreign = await failure(recordingsOf(alice.owner, { folderId: bob.folder }));
      const missing = await failure(recordingsOf(alice.owner, { folderId: newId('fld') }));
      for (const err of [foreign, missing]) expect(err).toMatchObject({ code: 'not_found', param: 'folder_id' });
      expect(foreign.message).toBe(missing.message);
      expect(await recordingsOf(alice.owner, { folderId: alice.folder })).toEqual([alice.recording]);
    });

    it('refuses a page cursor of another owner', async () => {
      const owner = newOwner();
      for (let i = 0; i < 2; i++) await recording(owner, { createdAt: new Date(T0 + i) });
      const list = (ownerId: string, cursor = '') =>
        h.client.listRecordings({ ownerId, page: page(1, cursor), query: '', folderId: '', createdAfter: undefined, createdBefore: undefined });
      const cursor = (await list(owner)).page!.nextCursor;
      expect(cursor).not.toBe('');
      expect(await failure(list(alice.owner, cursor))).toMatchObject({ code: 'invalid_request', param: 'cursor' });
      await expect(list(owner, cursor)).resolves.toBeDefined();
    });

    it('counts only the caller’s content in the stats', async () => {
      const stats = await h.client.getLibraryStats({ ownerId: alice.owner });
      expect(stats).toEqual({ recordings: 1, thoughtThreads: 1, folders: 1, knowledgeBases: 1, recordedSeconds: 10 });
    });

    it('answers another owner’s recording exactly like a missing or malformed id', async () => {
      const ids = [bob.recording, newId('rec'), 'rec_nope', '', alice.folder.replace('fld_', 'rec'), alice.folder];
      const errors = await Promise.all(ids.map((recordingId) => failure(h.client.getRecording({ ownerId: alice.owner, recordingId }))));
      for (const err of errors) expect({ code: err.code, message: err.message, param: err.param }).toEqual({ code: 'not_found', message: errors[0]!.message, param: 'recording_id' });
      // the owner still reads it
      expect((await h.client.getRecording({ ownerId: bob.owner, recordingId: bob.recording })).recording?.id).toBe(bob.recording);
    });

    it('answers another owner’s folder exactly like a missing or malformed id, and the owner’s with its count', async () => {
      const ids = [bob.folder, newId('fld'), 'fld_', alice.recording];
      const errors = await Promise.all(ids.map((folderId) => failure(h.client.getFolder({ ownerId: alice.owner, folderId }))));
      for (const err of errors) expect({ code: err.code, message: err.message, param: err.param }).toEqual({ code: 'not_found', message: errors[0]!.message, param: 'folder_id' });
      const own = (await h.client.getFolder({ ownerId: alice.owner, folderId: alice.folder })).folder;
      expect(own).toMatchObject({ id: alice.folder, name: 'alice folder', recordingCount: 1 });
    });

    it('answers another owner’s thread exactly like a missing or malformed id', async () => {
      const ids = [bob.thread, newId('thr'), 'thr_', alice.recording];
      const errors = await Promise.all(ids.map((threadId) => failure(h.client.getThoughtThread({ ownerId: alice.owner, threadId }))));
      for (const err of errors) expect({ code: err.code, message: err.message, param: err.param }).toEqual({ code: 'not_found', message: errors[0]!.message, param: 'thread_id' });
    });

    it('refuses every write that names another owner’s row, with the message of a missing one', async () => {
      const a = alice.owner;
      const cases: Array<[string, (foreign: boolean) => Promise<unknown>]> = [
        ['CreateRecording folder_id', (f) => h.client.createRecording({ ownerId: a, title: 'x', folderId: f ? bob.folder : newId('fld'), durationSeconds: 1, transcript: undefined, createdAt: undefined, recordingId: '' })],
        ['UpdateRecording recording_id', (f) => h.client.updateRecording({ ownerId: a, recordingId: f ? bob.recording : newId('rec'), title: 'stolen' })],
        ['UpdateRecording folder_id', (f) => h.client.updateRecording({ ownerId: a, recordingId: alice.recording, folderId: f ? bob.folder : newId('fld') })],
        ['AttachTranscript', (f) => h.client.attachTranscript({ ownerId: a, recordingId: f ? bob.recording : newId('rec'), transcript: transcript('overwrite') })],
        ['AddArtifact', (f) => h.client.addArtifact({ ownerId: a, recordingId: f ? bob.recording : newId('rec'), kind: 'summary', format: 0, content: 'x', creditsCharged: 0, data: undefined })],
        ['AddThreadItem thread_id', (f) => h.client.addThreadItem({ ownerId: a, threadId: f ? bob.thread : newId('thr'), kind: ThreadItemKind.THREAD_ITEM_KIND_NOTE, text: 'x', recordingId: '' })],
        ['AddThreadItem recording_id', (f) => h.client.addThreadItem({ ownerId: a, threadId: alice.thread, kind: ThreadItemKind.THREAD_ITEM_KIND_RECORDING, text: '', recordingId: f ? bob.recording : newId('rec') })],
        ['AddThreadContextSource thread_id', (f) => h.client.addThreadContextSource({ ownerId: a, threadId: f ? bob.thread : newId('thr'), kind: ContextSourceKind.CONTEXT_SOURCE_KIND_RECORDING, refId: alice.recording })],
        ['AddThreadContextSource recording', (f) => h.client.addThreadContextSource({ ownerId: a, threadId: alice.thread, kind: ContextSourceKind.CONTEXT_SOURCE_KIND_RECORDING, refId: f ? bob.recording : newId('rec') })],
        ['AddThreadContextSource folder', (f) => h.client.addThreadContextSource({ ownerId: a, threadId: alice.thread, kind: ContextSourceKind.CONTEXT_SOURCE_KIND_FOLDER, refId: f ? bob.folder : newId('fld') })],
        ['AddThreadContextSource knowledge base', (f) => h.client.addThreadContextSource({ ownerId: a, threadId: alice.thread, kind: ContextSourceKind.CONTEXT_SOURCE_KIND_KNOWLEDGE_BASE, refId: f ? bob.kb : newId('kb') })],
        ['AddKnowledgeBaseRecording knowledge_base_id', (f) => h.client.addKnowledgeBaseRecording({ ownerId: a, knowledgeBaseId: f ? bob.kb : newId('kb'), recordingId: alice.recording })],
        ['AddKnowledgeBaseRecording recording_id', (f) => h.client.addKnowledgeBaseRecording({ ownerId: a, knowledgeBaseId: alice.kb, recordingId: f ? bob.recording : newId('rec') })],
      ];
      for (const [name, call] of cases) {
        const foreign = await failure(call(true));
        const missing = await failure(call(false));
        expect({ name, code: foreign.code, message: foreign.message, param: foreign.param }).toEqual({ name, code: 'not_found', message: missing.message, param: missing.param });
      }
      // and nothing of bob's changed
      const rec = (await h.client.getRecording({ ownerId: bob.owner, recordingId: bob.recording })).recording!;
      expect(rec.title).toBe('bob recording');
      expect(rec.transcript?.text).toBe('bob private words');
      expect(rec.artifacts).toHaveLength(1);
      const thread = (await h.client.getThoughtThread({ ownerId: bob.owner, threadId: bob.thread })).thread!;
      expect(thread.items).toHaveLength(1);
      expect(thread.contextSources).toHaveLength(1);
    });

    it('rejects an owner_id that is not a user id on every RPC', async () => {
      const ownerId = 'key_0123456789abcdefghijklmn';
      const calls: Array<Promise<unknown>> = [
        h.client.listRecordings({ ownerId, page: page(), query: '', folderId: '', createdAfter: undefined, createdBefore: undefined }),
        h.client.getRecording({ ownerId, recordingId: alice.recording }),
        h.client.listThoughtThreads({ ownerId, page: page() }),
        h.client.getThoughtThread({ ownerId, threadId: alice.thread }),
        h.client.listFolders({ ownerId, page: page() }),
        h.client.getFolder({ ownerId, folderId: alice.folder }),
        h.client.listKnowledgeBases({ ownerId, page: page() }),
        h.client.getLibraryStats({ ownerId }),
        h.client.createRecording({ ownerId, title: 'x', folderId: '', durationSeconds: 0, transcript: undefined, createdAt: undefined, recordingId: '' }),
        h.client.deleteRecording({ ownerId, recordingId: alice.recording }),
        h.client.updateRecording({ ownerId, recordingId: alice.recording, title: 'x' }),
        h.client.attachTranscript({ ownerId, recordingId: alice.recording, transcript: transcript('x') }),
        h.client.addArtifact({ ownerId, recordingId: alice.recording, kind: 'summary', format: 0, content: 'x', creditsCharged: 0, data: undefined }),
        h.client.createFolder({ ownerId, name: 'x', createdAt: undefined }),
        h.client.createThoughtThread({ ownerId, title: 'x', createdAt: undefined }),
        h.client.addThreadItem({ ownerId, threadId: alice.thread, kind: ThreadItemKind.THREAD_ITEM_KIND_NOTE, text: 'x', recordingId: '' }),
        h.client.addThreadContextSource({ ownerId, threadId: alice.thread, kind: ContextSourceKind.CONTEXT_SOURCE_KIND_FOLDER, refId: alice.folder }),
        h.client.createKnowledgeBase({ ownerId, name: 'x', description: '', createdAt: undefined }),
        h.client.addKnowledgeBaseRecording({ ownerId, knowledgeBaseId: alice.kb, recordingId: alice.recording }),
        h.client.setSpeakerNames({ ownerId, recordingId: alice.recording, names: { S1: 'Maria' } }),
        h.client.searchPassages({ ownerId, query: 'words', page: page(), sources: [], folderId: '', recordingId: '', createdAfter: undefined, createdBefore: undefined }),
      ];
      expect(calls).toHaveLength(Object.keys(library.LibraryServiceService).length);
      for (const err of await Promise.all(calls.map(failure))) expect({ code: err.code, param: err.param }).toEqual({ code: 'invalid_request', param: 'owner_id' });
    });
  });

  describe('paging', () => {
    it('walks every recording exactly once while others are inserted between page fetches', async () => {
      const owner = newOwner();
      // 45 recordings, three to a millisecond: ties are broken by id.
      const seeded: string[] = [];
      for (let i = 0; i < 45; i++) {
        seeded.push((await recording(owner, { title: `seed ${i}`, createdAt: new Date(T0 - Math.floor(i / 3) * 1000) })).id);
      }
      const seen: string[] = [];
      const insertedInPast: string[] = [];
      const insertedNow: string[] = [];
      const positions: Array<[number, string]> = [];
      let cursor = '';
      let pages = 0;
      for (;;) {
        const res = await h.client.listRecordings({ ownerId: owner, page: page(7, cursor), query: '', folderId: '', createdAfter: undefined, createdBefore: undefined });
        pages += 1;
        for (const r of res.recordings) {
          seen.push(r.id);
          positions.push([r.createdAt!.getTime(), r.id]);
        }
        if (!res.page?.hasMore) break;
        cursor = res.page.nextCursor;
        // Concurrent writers: one now, one older than everything, one in the very millisecond of the page boundary.
        h.clock.advance(1);
        insertedNow.push((await recording(owner, { title: 'new now' })).id);
        insertedInPast.push((await recording(owner, { title: 'imported', createdAt: new Date(T0 - 365 * DAY - pages) })).id);
        const boundary = res.recordings[res.recordings.length - 1]!.createdAt!;
        await recording(owner, { title: 'same millisecond', createdAt: boundary });
      }
      expect(new Set(seen).size).toBe(seen.length); // no duplicates
      for (const id of seeded) expect(seen.filter((s) => s === id)).toHaveLength(1); // no gaps
      for (const id of insertedInPast) expect(seen).toContain(id); // behind the cursor: reached later
      for (const id of insertedNow) expect(seen).not.toContain(id); // ahead of the cursor: not revisited
      // strictly newest first on (created_at, id) across every page
      for (let i = 1; i < positions.length; i++) {
        const [t0, id0] = positions[i - 1]!;
        const [t1, id1] = positions[i]!;
        expect(t1 < t0 || (t1 === t0 && id1 < id0)).toBe(true);
      }
      expect(pages).toBeGreaterThan(6);
    });

    it('pages threads, folders and knowledge bases newest first the same way', async () => {
      const owner = newOwner();
      const made = { threads: [] as string[], folders: [] as string[], kbs: [] as string[] };
      for (let i = 0; i < 5; i++) {
        const createdAt = new Date(T0 + i * 1000);
        made.threads.unshift((await h.client.createThoughtThread({ ownerId: owner, title: `t${i}`, createdAt })).thread!.id);
        made.folders.unshift((await h.client.createFolder({ ownerId: owner, name: `f${i}`, createdAt })).folder!.id);
        made.kbs.unshift((await h.client.createKnowledgeBase({ ownerId: owner, name: `k${i}`, description: '', createdAt })).knowledgeBase!.id);
      }
      const walk = async (fetch: (cursor: string) => Promise<{ ids: string[]; page: library.PageInfo | undefined }>) => {
        const ids: string[][] = [];
        let cursor = '';
        for (;;) {
          const res = await fetch(cursor);
          ids.push(res.ids);
          if (!res.page?.hasMore) {
            expect(res.page?.nextCursor).toBe('');
            return ids;
          }
          cursor = res.page.nextCursor;
        }
      };
      const threads = await walk(async (c) => {
        const r = await h.client.listThoughtThreads({ ownerId: owner, page: page(2, c) });
        return { ids: r.threads.map((t) => t.id), page: r.page };
      });
      const folders = await walk(async (c) => {
        const r = await h.client.listFolders({ ownerId: owner, page: page(2, c) });
        return { ids: r.folders.map((t) => t.id), page: r.page };
      });
      const kbs = await walk(async (c) => {
        const r = await h.client.listKnowledgeBases({ ownerId: owner, page: page(2, c) });
        return { ids: r.knowledgeBases.map((t) => t.id), page: r.page };
      });
      expect(threads.map((p) => p.length)).toEqual([2, 2, 1]);
      expect(threads.flat()).toEqual(made.threads);
      expect(folders.flat()).toEqual(made.folders);
      expect(kbs.flat()).toEqual(made.kbs);
    });

    it('serves 20 by default and up to 100 on request', async () => {
      const owner = newOwner();
      for (let i = 0; i < 25; i++) await recording(owner, { createdAt: new Date(T0 + i) });
      const first = await h.client.listRecordings({ ownerId: owner, page: undefined, query: '', folderId: '', createdAfter: undefined, createdBefore: undefined });
      expect(first.recordings).toHaveLength(20);
      expect(first.page).toEqual({ hasMore: true, nextCursor: expect.any(String) });
      const all = await h.client.listRecordings({ ownerId: owner, page: page(100), query: '', folderId: '', createdAfter: undefined, createdBefore: undefined });
      expect(all.recordings).toHaveLength(25);
      expect(all.page).toEqual({ hasMore: false, nextCursor: '' });
    });

    describe('bad paging parameters', () => {
      const owner = newOwner();
      let cursor = '';
      beforeAll(async () => {
        for (let i = 0; i < 3; i++) await recording(owner, { createdAt: new Date(T0 + i) });
        const res = await h.client.listRecordings({ ownerId: owner, page: page(1), query: '', folderId: '', createdAfter: undefined, createdBefore: undefined });
        cursor = res.page!.nextCursor;
        expect(cursor).not.toBe('');
      });

      const lists: Array<[string, (p: library.PageRequest, extra?: Partial<library.ListRecordingsRequest>) => Promise<unknown>]> = [
        ['ListRecordings', (p, extra) => h.client.listRecordings({ ownerId: owner, page: p, query: '', folderId: '', createdAfter: undefined, createdBefore: undefined, ...extra })],
        ['ListThoughtThreads', (p) => h.client.listThoughtThreads({ ownerId: owner, page: p })],
        ['ListFolders', (p) => h.client.listFolders({ ownerId: owner, page: p })],
        ['ListKnowledgeBases', (p) => h.client.listKnowledgeBases({ ownerId: owner, page: p })],
      ];

      it.each(lists)('%s rejects limit -1 and 101 on "limit"', async (_name, list) => {
        for (const limit of [-1, 101]) {
          expect(await failure(list(page(limit)))).toMatchObject({ code: 'invalid_request', param: 'limit' });
        }
      });

      const flip = (s: string, at: number) => s.slice(0, at) + (s[at] === 'A' ? 'B' : 'A') + s.slice(at + 1);
      const mangled: Array<[string, () => string]> = [
        ['garbage', () => 'garbage'],
        ['base64 of JSON without a signature', () => Buffer.from(JSON.stringify({ v: 1, l: 'recordings', t: 0, i: newId('rec'), f: '' })).toString('base64url')],
        ['a flipped byte in the payload', () => flip(cursor, 3)],
        ['a flipped byte in the signature', () => flip(cursor, cursor.length - 2)],
        ['a cursor forged with another secret', () => new CursorCodec('not-the-server-secret').encode(JSON.parse(Buffer.from(cursor.split('.')[0]!, 'base64url').toString()))],
        ['an overlong cursor', () => `${cursor}${'A'.repeat(600)}`],
      ];

      it.each(mangled)('ListRecordings rejects %s on "cursor"', async (_name, make) => {
        const bad = make();
        expect(bad).not.toBe(cursor);
        expect(await failure(lists[0]![1](page(1, bad)))).toMatchObject({ code: 'invalid_request', param: 'cursor' });
      });

      it.each(lists.slice(1))('%s rejects a cursor of the recordings list', async (_name, list) => {
        expect(await failure(list(page(1, cursor)))).toMatchObject({ code: 'invalid_request', param: 'cursor' });
      });

      it('rejects a cursor reused with other filters', async () => {
        expect(await failure(lists[0]![1](page(1, cursor), { query: 'milk' }))).toMatchObject({ code: 'invalid_request', param: 'cursor' });
        expect(await failure(lists[0]![1](page(1, cursor), { createdAfter: new Date(T0 - DAY) }))).toMatchObject({ code: 'invalid_request', param: 'cursor' });
        // the signature is what a client cannot fake: the same cursor with its own filters still works
        await expect(lists[0]![1](page(1, cursor))).resolves.toBeDefined();
      });
    });
  });

  describe('full-text search', () => {
    const owner = newOwner();
    const ids: Record<string, string> = {};
    beforeAll(async () => {
      const rows: Array<[string, string, string | undefined]> = [
        ['budget', 'Quarterly budget review', 'We discussed the marketing spend and the hiring plans for spring.'],
        ['groceries', 'Groceries', 'Remember to buy oat milk, eggs and a loaf of sourdough bread.'],
        ['standup', 'Standup', 'Blocked on the database migration; the meetings moved to Thursday.'],
        ['idea', 'Untranscribed idea', undefined],
      ];
      for (const [i, [key, title, text]] of rows.entries()) {
        ids[key] = (await recording(owner, { title, transcript: text === undefined ? undefined : transcript(text), createdAt: new Date(T0 + i * 60_000) })).id;
      }
      // Another owner says the same words.
      await recording(newOwner(), { title: 'Groceries', transcript: transcript('oat milk and eggs') });
    });

    const search = (query: string) => recordingsOf(owner, { query });

    it.each<[string, string, string[]]>([
      ['a transcript word', 'milk', ['groceries']],
      ['another transcript word', 'migration', ['standup']],
      ['a title word', 'budget', ['budget']],
      ['a title word of an untranscribed recording', 'untranscribed', ['idea']],
      ['a word in another form (English stemming)', 'meeting', ['standup']],
      ['two words anywhere', 'marketing quarterly', ['budget']],
      ['a quoted phrase', '"oat milk"', ['groceries']],
      ['either of two words, newest first', 'milk OR budget', ['groceries', 'budget']],
      ['upper case', 'SOURDOUGH', ['groceries']],
    ])('finds recordings by %s', async (_name, query, expected) => {
      expect(await search(query)).toEqual(expected.map((k) => ids[k]));
    });

    it.each<[string, string]>([
      ['an absent word', 'pineapple'],
      ['words that are never together', 'milk budget'],
      ['an excluded word', 'milk -eggs'],
      ['a phrase in the wrong order', '"milk oat"'],
      ['only stop words', 'the and'],
    ])('finds nothing for %s', async (_name, query) => {
      expect(await search(query)).toEqual([]);
    });

    it.each(['"unclosed', 'milk &| !', '(((', ':*', "'; DROP TABLE recordings; --", 'a\\b'])('never fails on odd syntax %p', async (query) => {
      await expect(search(query)).resolves.toBeInstanceOf(Array);
    });

    it('pages search results with cursors', async () => {
      const many = newOwner();
      const made: string[] = [];
      for (let i = 0; i < 5; i++) made.unshift((await recording(many, { title: `Call ${i}`, transcript: transcript('pricing discussion'), createdAt: new Date(T0 + i) })).id);
      await recording(many, { title: 'Other', transcript: transcript('nothing relevant') });
      expect(await walkRecordings({ ownerId: many, query: 'pricing', folderId: '', createdAfter: undefined, createdBefore: undefined }, 2)).toEqual(made);
    });

    it('rejects a query over 500 characters on "query"', async () => {
      expect(await failure(h.client.listRecordings({ ownerId: owner, page: page(), query: 'q'.repeat(501), folderId: '', createdAfter: undefined, createdBefore: undefined }))).toMatchObject({
        code: 'invalid_request',
        param: 'query',
      });
    });
  });

  describe('folder and date filters', () => {
    const owner = newOwner();
    let folderA = '';
    let folderB = '';
    const days: string[] = [];
    let loose = '';
    beforeAll(async () => {
      folderA = (await h.client.createFolder({ ownerId: owner, name: 'A', createdAt: undefined })).folder!.id;
      folderB = (await h.client.createFolder({ ownerId: owner, name: 'B', createdAt: undefined })).folder!.id;
      for (let d = 0; d < 6; d++) {
        const folderId = d % 2 === 0 ? folderA : folderB;
        days.push((await recording(owner, { title: `day ${d}`, folderId, createdAt: new Date(T0 + d * DAY) })).id);
      }
      loose = (await recording(owner, { title: 'loose', createdAt: new Date(T0 + 10 * DAY) })).id;
    });

    it('lists only the recordings of a folder', async () => {
      expect(await recordingsOf(owner, { folderId: folderA })).toEqual([days[4], days[2], days[0]]);
      expect(await recordingsOf(owner, { folderId: folderB })).toEqual([days[5], days[3], days[1]]);
      expect(await failure(recordingsOf(owner, { folderId: newId('fld') }))).toMatchObject({ code: 'not_found', param: 'folder_id' });
    });

    it('lists recordings created strictly inside a date range', async () => {
      const createdAfter = new Date(T0 + 1 * DAY);
      const createdBefore = new Date(T0 + 4 * DAY);
      expect(await recordingsOf(owner, { createdAfter, createdBefore })).toEqual([days[3], days[2]]);
      // both ends are exclusive: the recording made exactly at created_after is left out
      expect(await recordingsOf(owner, { createdAfter: new Date(T0 + 4 * DAY) })).toEqual([loose, days[5]]);
      expect(await recordingsOf(owner, { createdBefore: new Date(T0 + 1) })).toEqual([days[0]]);
    });

    it('combines folder, dates and paging', async () => {
      const ids = await walkRecordings({ ownerId: owner, query: '', folderId: folderA, createdAfter: new Date(T0), createdBefore: undefined }, 1);
      expect(ids).toEqual([days[4], days[2]]);
    });

    it.each<[string, string, string]>([
      ['a malformed folder id', "fld_'; --", 'folder_id'],
      ['an id of another kind', 'rec_0123456789abcdefghijklmn', 'folder_id'],
    ])('answers %s on "folder_id" as a folder not found', async (_name, folderId, param) => {
      expect(await failure(h.client.listRecordings({ ownerId: owner, page: page(), query: '', folderId, createdAfter: undefined, createdBefore: undefined }))).toMatchObject({
        code: 'not_found',
        param,
      });
    });

    it('rejects created_after not earlier than created_before on "created_after"', async () => {
      for (const after of [T0 + DAY, T0 + 2 * DAY]) {
        const err = await failure(
          h.client.listRecordings({ ownerId: owner, page: page(), query: '', folderId: '', createdAfter: new Date(after), createdBefore: new Date(T0 + DAY) }),
        );
        expect(err).toMatchObject({ code: 'invalid_request', param: 'created_after' });
      }
    });
  });

  describe('what lists and details carry', () => {
    it('lists recordings with a preview but without transcript or artifacts', async () => {
      const owner = newOwner();
      const long = Array.from({ length: 120 }, (_, i) => `word${i}`).join(' ');
      const rec = await recording(owner, { title: 'Long', transcript: transcript(long) });
      await h.client.addArtifact({ ownerId: owner, recordingId: rec.id, kind: 'summary', format: 0, content: 'sum', creditsCharged: 2, data: undefined });
      const untranscribed = await recording(owner, { title: 'Silent', createdAt: new Date(T0) });
      const [listed, silent] = (await h.client.listRecordings({ ownerId: owner, page: page(), query: '', folderId: '', createdAfter: undefined, createdBefore: undefined })).recordings;
      expect(listed?.id).toBe(rec.id);
      expect(listed?.transcript).toBeUndefined();
      expect(listed?.artifacts).toEqual([]);
      expect(listed?.preview.endsWith('…')).toBe(true);
      expect(listed!.preview.length).toBeLessThanOrEqual(201);
      expect(long.startsWith(listed!.preview.slice(0, -1))).toBe(true);
      expect(silent).toMatchObject({ id: untranscribed.id, preview: '', transcript: undefined });
    });

    it('returns one recording with its transcript, segments and artifacts oldest first', async () => {
      const owner = newOwner();
      const rec = await recording(owner, {
        title: 'Planning',
        durationSeconds: 4.5,
        transcript: { text: 'First part. Second part.', language: 'en', segments: [{ startSeconds: 0, endSeconds: 1.25, text: 'First part.' }, { startSeconds: 1.25, endSeconds: 4.5, text: 'Second part.' }] },
      });
      const kinds = ['summary', 'email', 'action_items'];
      for (const kind of kinds) {
        await h.client.addArtifact({ ownerId: owner, recordingId: rec.id, kind, format: library.ArtifactFormat.ARTIFACT_FORMAT_PLAIN, content: `${kind} body`, creditsCharged: 3, data: undefined });
      }
      const got = (await h.client.getRecording({ ownerId: owner, recordingId: rec.id })).recording!;
      expect(got).toMatchObject({ id: rec.id, ownerId: owner, title: 'Planning', folderId: '', durationSeconds: 4.5, preview: 'First part. Second part.' });
      expect(got.transcript).toEqual({
        timeline: undefined,
        text: 'First part. Second part.',
        language: 'en',
        segments: [
          { startSeconds: 0, endSeconds: 1.25, text: 'First part.' },
          { startSeconds: 1.25, endSeconds: 4.5, text: 'Second part.' },
        ],
      });
      expect(got.artifacts.map((a) => a.kind)).toEqual(kinds); // same millisecond: insertion order
      expect(got.artifacts[0]).toMatchObject({ recordingId: rec.id, format: library.ArtifactFormat.ARTIFACT_FORMAT_PLAIN, content: 'summary body', creditsCharged: 3 });
      expect(got.artifacts[0]!.id).toMatch(/^art_/);
    });

    it('returns created_at exactly as stored, to the millisecond', async () => {
      const owner = newOwner();
      const at = new Date('2025-06-30T23:59:59.987Z');
      const rec = await recording(owner, { createdAt: at });
      expect(rec.createdAt).toEqual(at);
      expect((await h.client.getRecording({ ownerId: owner, recordingId: rec.id })).recording?.createdAt).toEqual(at);
    });

    it('returns a thread with items oldest first and sources under their current titles', async () => {
      const owner = newOwner();
      const rec = await recording(owner, { title: 'Kickoff' });
      const folder = (await h.client.createFolder({ ownerId: owner, name: 'Projects', createdAt: undefined })).folder!;
      const kb = (await h.client.createKnowledgeBase({ ownerId: owner, name: 'Handbook', description: 'policies', createdAt: undefined })).knowledgeBase!;
      const thread = (await h.client.createThoughtThread({ ownerId: owner, title: 'Launch', createdAt: undefined })).thread!;
      const add = (kind: library.ThreadItemKind, text: string, recordingId = '') => h.client.addThreadItem({ ownerId: owner, threadId: thread.id, kind, text, recordingId });
      await add(ThreadItemKind.THREAD_ITEM_KIND_NOTE, 'first thought');
      h.clock.advance(1000);
      await add(ThreadItemKind.THREAD_ITEM_KIND_RECORDING, '', rec.id);
      await add(ThreadItemKind.THREAD_ITEM_KIND_QUESTION, 'what did we decide?');
      await add(ThreadItemKind.THREAD_ITEM_KIND_ANSWER, 'to ship in March');
      for (const [kind, refId] of [
        [ContextSourceKind.CONTEXT_SOURCE_KIND_KNOWLEDGE_BASE, kb.id],
        [ContextSourceKind.CONTEXT_SOURCE_KIND_RECORDING, rec.id],
        [ContextSourceKind.CONTEXT_SOURCE_KIND_FOLDER, folder.id],
      ] as const) {
        await h.client.addThreadContextSource({ ownerId: owner, threadId: thread.id, kind, refId });
      }
      await h.client.updateRecording({ ownerId: owner, recordingId: rec.id, title: 'Kickoff (renamed)' });

      const got = (await h.client.getThoughtThread({ ownerId: owner, threadId: thread.id })).thread!;
      expect(got.itemCount).toBe(4);
      expect(got.items.map((i) => [i.kind, i.text, i.recordingId])).toEqual([
        [ThreadItemKind.THREAD_ITEM_KIND_NOTE, 'first thought', ''],
        [ThreadItemKind.THREAD_ITEM_KIND_RECORDING, '', rec.id],
        [ThreadItemKind.THREAD_ITEM_KIND_QUESTION, 'what did we decide?', ''],
        [ThreadItemKind.THREAD_ITEM_KIND_ANSWER, 'to ship in March', ''],
      ]);
      expect(got.contextSources.map((s) => [s.kind, s.refId, s.title])).toEqual([
        [ContextSourceKind.CONTEXT_SOURCE_KIND_KNOWLEDGE_BASE, kb.id, 'Handbook'],
        [ContextSourceKind.CONTEXT_SOURCE_KIND_RECORDING, rec.id, 'Kickoff (renamed)'],
        [ContextSourceKind.CONTEXT_SOURCE_KIND_FOLDER, folder.id, 'Projects'],
      ]);
      expect(got.updatedAt!.getTime()).toBeGreaterThan(got.createdAt!.getTime());

      const listed = (await h.client.listThoughtThreads({ ownerId: owner, page: page() })).threads[0]!;
      expect(listed).toMatchObject({ id: thread.id, itemCount: 4, items: [], contextSources: [] });
    });

    it('counts recordings per folder and per knowledge base, and in the stats', async () => {
      const owner = newOwner();
      const folder = (await h.client.createFolder({ ownerId: owner, name: 'Inbox', createdAt: new Date(T0) })).folder!;
      const empty = (await h.client.createFolder({ ownerId: owner, name: 'Empty', createdAt: new Date(T0 - 1) })).folder!;
      const kb = (await h.client.createKnowledgeBase({ ownerId: owner, name: 'KB', description: '', createdAt: undefined })).knowledgeBase!;
      const recs = [];
      for (let i = 0; i < 3; i++) recs.push(await recording(owner, { folderId: folder.id, durationSeconds: 60.5 }));
      await recording(owner, { durationSeconds: 9 });
      for (const r of recs.slice(0, 2)) await h.client.addKnowledgeBaseRecording({ ownerId: owner, knowledgeBaseId: kb.id, recordingId: r.id });

      const folders = (await h.client.listFolders({ ownerId: owner, page: page() })).folders;
      expect(folders.map((f) => [f.name, f.recordingCount])).toEqual([['Inbox', 3], ['Empty', 0]]);
      expect(empty.recordingCount).toBe(0);
      const kbs = (await h.client.listKnowledgeBases({ ownerId: owner, page: page() })).knowledgeBases;
      expect(kbs.map((k) => [k.name, k.recordingCount])).toEqual([['KB', 2]]);
      expect(await h.client.getLibraryStats({ ownerId: owner })).toEqual({ recordings: 4, thoughtThreads: 0, folders: 2, knowledgeBases: 1, recordedSeconds: 190.5 });
    });

    it('answers zeros in the stats of an owner with nothing', async () => {
      expect(await h.client.getLibraryStats({ ownerId: newOwner() })).toEqual({ recordings: 0, thoughtThreads: 0, folders: 0, knowledgeBases: 0, recordedSeconds: 0 });
    });
  });
});
