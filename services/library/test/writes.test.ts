import { newId } from '@murmur/kit';
import { library } from '@murmur/proto';
import { failure, newOwner, page, startHarness, type Harness } from './harness';

const { ThreadItemKind, ContextSourceKind, ArtifactFormat } = library;

describe('library writes over gRPC', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.stop();
  });

  const base = (ownerId: string): library.CreateRecordingRequest => ({ ownerId, title: 'Note', folderId: '', durationSeconds: 12, transcript: undefined, createdAt: undefined, recordingId: '' });
  const create = async (ownerId: string, fields: Partial<library.CreateRecordingRequest> = {}) => (await h.client.createRecording({ ...base(ownerId), ...fields })).recording!;
  const get = async (ownerId: string, recordingId: string) => (await h.client.getRecording({ ownerId, recordingId })).recording!;
  const search = async (ownerId: string, query: string) =>
    (await h.client.listRecordings({ ownerId, page: page(), query, folderId: '', createdAfter: undefined, createdBefore: undefined })).recordings.map((r) => r.id);

  describe('CreateRecording', () => {
    it('stores a recording with its transcript and echoes it without the transcript', async () => {
      const owner = newOwner();
      const rec = await create(owner, { title: '  Daily log  ', transcript: { text: 'Shipped the billing fix.', language: 'en', segments: [] } });
      expect(rec).toMatchObject({ ownerId: owner, title: 'Daily log', folderId: '', durationSeconds: 12, preview: 'Shipped the billing fix.', transcript: undefined, artifacts: [] });
      expect(rec.id).toMatch(/^rec_[0-9a-v]{24}$/);
      expect(rec.createdAt).toEqual(h.clock.now());
      expect(rec.updatedAt).toEqual(rec.createdAt);
      expect((await get(owner, rec.id)).transcript?.text).toBe('Shipped the billing fix.');
    });

    it('keeps a recording without transcript untranscribed, and an empty transcript as transcribed silence', async () => {
      const owner = newOwner();
      expect((await get(owner, (await create(owner)).id)).transcript).toBeUndefined();
      const silent = await create(owner, { transcript: { text: '', language: 'en', segments: [] } });
      expect((await get(owner, silent.id)).transcript).toEqual({ text: '', language: 'en', segments: [] });
    });

    it('files a recording into the owner’s folder', async () => {
      const owner = newOwner();
      const folder = (await h.client.createFolder({ ownerId: owner, name: 'Work', createdAt: undefined })).folder!;
      expect((await create(owner, { folderId: folder.id })).folderId).toBe(folder.id);
    });

    it('accepts an import time in the past and a 5,000,000-character transcript', async () => {
      const owner = newOwner();
      const words = 'alpha beta gamma delta ';
      const text = words.repeat(Math.floor(5_000_000 / words.length)).padEnd(5_000_000, 'x');
      const at = new Date('2024-02-29T08:30:00.250Z');
      const rec = await create(owner, { createdAt: at, transcript: { text, language: 'en', segments: [{ startSeconds: 0, endSeconds: 1, text: 'alpha' }] } });
      expect(rec.createdAt).toEqual(at);
      expect((await get(owner, rec.id)).transcript?.text.length).toBe(5_000_000);
      expect(await search(owner, 'gamma')).toEqual([rec.id]);
    });

    it('indexes a transcript with more distinct words than a tsvector holds on its opening, instead of failing', async () => {
      const owner = newOwner();
      const token = (i: number) => `zq${i.toString(36).padStart(6, '0')}`;
      const text = Array.from({ length: 150_000 }, (_, i) => token(i)).join(' '); // ~1.2 MB of distinct lexemes
      const rec = await create(owner, { title: 'Hex dump', transcript: { text, language: 'en', segments: [] } });
      expect(await search(owner, token(1))).toEqual([rec.id]);
      expect(await search(owner, token(149_999))).toEqual([]); // beyond the indexed opening
      expect(await search(owner, 'hex')).toEqual([rec.id]);
    });

    it.each<[string, Partial<library.CreateRecordingRequest>, string]>([
      ['a 501-character title', { title: 't'.repeat(501) }, 'title'],
      ['a NUL in the title', { title: 'a\u0000b' }, 'title'],
      ['a negative duration', { durationSeconds: -1 }, 'duration_seconds'],
      ['a transcript over 5,000,000 characters', { transcript: { text: 'a'.repeat(5_000_001), language: 'en', segments: [] } }, 'transcript.text'],
      ['a NUL in the transcript', { transcript: { text: 'a\u0000', language: 'en', segments: [] } }, 'transcript.text'],
      ['a bad language tag', { transcript: { text: 'hi', language: 'en_US!', segments: [] } }, 'transcript.language'],
      ['a segment that ends before it starts', { transcript: { text: 'hi', language: 'en', segments: [{ startSeconds: 3, endSeconds: 1, text: 'hi' }] } }, 'transcript.segments'],
      ['a creation time in the future', { createdAt: new Date('2027-01-01T00:00:00Z') }, 'created_at'],
      ['a creation time before 1970', { createdAt: new Date('1960-01-01T00:00:00Z') }, 'created_at'],
    ])('rejects %s with invalid_request', async (_name, fields, param) => {
      const owner = newOwner();
      expect(await failure(h.client.createRecording({ ...base(owner), ...fields }))).toMatchObject({ code: 'invalid_request', param });
      expect((await h.client.getLibraryStats({ ownerId: owner })).recordings).toBe(0);
    });

    it('answers not_found on "folder_id" for a folder that is not the owner’s', async () => {
      const owner = newOwner();
      const other = (await h.client.createFolder({ ownerId: newOwner(), name: 'Theirs', createdAt: undefined })).folder!;
      for (const folderId of [other.id, newId('fld'), 'fld_bad!']) {
        expect(await failure(h.client.createRecording({ ...base(owner), folderId }))).toMatchObject({ code: 'not_found', param: 'folder_id' });
      }
    });
  });

  describe('UpdateRecording', () => {
    it('renames, moves into a folder and out again, bumping updated_at', async () => {
      const owner = newOwner();
      const folder = (await h.client.createFolder({ ownerId: owner, name: 'Archive', createdAt: undefined })).folder!;
      const rec = await create(owner, { title: 'Draft' });
      h.clock.advance(60_000);
      const renamed = (await h.client.updateRecording({ ownerId: owner, recordingId: rec.id, title: 'Final' })).recording!;
      expect(renamed).toMatchObject({ title: 'Final', folderId: '' });
      expect(renamed.updatedAt!.getTime()).toBe(rec.createdAt!.getTime() + 60_000);
      expect(renamed.createdAt).toEqual(rec.createdAt);

      h.clock.advance(1000);
      const moved = (await h.client.updateRecording({ ownerId: owner, recordingId: rec.id, folderId: folder.id })).recording!;
      expect(moved).toMatchObject({ title: 'Final', folderId: folder.id });
      expect(moved.updatedAt!.getTime()).toBeGreaterThan(renamed.updatedAt!.getTime());

      const out = (await h.client.updateRecording({ ownerId: owner, recordingId: rec.id, folderId: '' })).recording!;
      expect(out.folderId).toBe('');
      expect(await search(owner, 'final')).toEqual([rec.id]); // the new title is searchable
    });

    it('changes nothing, not even updated_at, when no field is given', async () => {
      const owner = newOwner();
      const rec = await create(owner);
      h.clock.advance(5000);
      const same = (await h.client.updateRecording({ ownerId: owner, recordingId: rec.id })).recording!;
      expect(same).toMatchObject({ title: rec.title, updatedAt: rec.updatedAt });
    });

    it('rejects a title over 500 characters on "title"', async () => {
      const owner = newOwner();
      const rec = await create(owner);
      expect(await failure(h.client.updateRecording({ ownerId: owner, recordingId: rec.id, title: 'x'.repeat(501) }))).toMatchObject({ code: 'invalid_request', param: 'title' });
    });
  });

  describe('AttachTranscript', () => {
    it('sets and then replaces the transcript, and search follows', async () => {
      const owner = newOwner();
      const rec = await create(owner, { title: 'Voice memo' });
      expect(await search(owner, 'zucchini')).toEqual([]);
      h.clock.advance(1000);
      const first = (await h.client.attachTranscript({ ownerId: owner, recordingId: rec.id, transcript: { text: 'Plant zucchini in May.', language: 'en', segments: [] } })).recording!;
      expect(first.preview).toBe('Plant zucchini in May.');
      expect(first.updatedAt!.getTime()).toBeGreaterThan(rec.updatedAt!.getTime());
      expect(await search(owner, 'zucchini')).toEqual([rec.id]);

      await h.client.attachTranscript({ ownerId: owner, recordingId: rec.id, transcript: { text: 'Plantar tomates en abril.', language: 'es', segments: [] } });
      expect(await search(owner, 'zucchini')).toEqual([]);
      expect((await get(owner, rec.id)).transcript).toEqual({ text: 'Plantar tomates en abril.', language: 'es', segments: [] });
    });

    it('requires a transcript', async () => {
      const owner = newOwner();
      const rec = await create(owner);
      expect(await failure(h.client.attachTranscript({ ownerId: owner, recordingId: rec.id, transcript: undefined }))).toMatchObject({ code: 'invalid_request', param: 'transcript' });
    });
  });

  describe('AddArtifact', () => {
    it('stores Markdown when the format is unspecified, and bumps the recording', async () => {
      const owner = newOwner();
      const rec = await create(owner);
      h.clock.advance(1000);
      const art = (
        await h.client.addArtifact({ ownerId: owner, recordingId: rec.id, kind: 'meeting_notes', format: ArtifactFormat.ARTIFACT_FORMAT_UNSPECIFIED, content: '# Notes', creditsCharged: 7, data: undefined })
      ).artifact!;
      expect(art).toMatchObject({ recordingId: rec.id, kind: 'meeting_notes', format: ArtifactFormat.ARTIFACT_FORMAT_MARKDOWN, content: '# Notes', creditsCharged: 7, createdAt: h.clock.now() });
      expect(art.data).toBeUndefined();
      expect((await get(owner, rec.id)).updatedAt).toEqual(h.clock.now());
    });

    it('keeps the artifact as data beside its text, and answers it with the recording', async () => {
      const owner = newOwner();
      const rec = await create(owner);
      const data = { items: [{ task: 'Finish legal review', owner: 'Maria', due: '2026-11-26' }, { task: 'Book the venue', owner: 'Sam', due: null }] };
      const art = (await h.client.addArtifact({ ownerId: owner, recordingId: rec.id, kind: 'action_items', format: ArtifactFormat.ARTIFACT_FORMAT_PLAIN, content: 'x', creditsCharged: 1, data })).artifact!;
      expect(art.data).toEqual(data);
      expect((await get(owner, rec.id)).artifacts.map((a) => a.data)).toEqual([data]);
    });

    it('refuses data whose JSON is over 5,000,000 characters', async () => {
      const owner = newOwner();
      const rec = await create(owner);
      const data = { points: ['p'.repeat(5_000_000)] };
      const req = { ownerId: owner, recordingId: rec.id, kind: 'key_points', format: ArtifactFormat.ARTIFACT_FORMAT_PLAIN, content: 'x', creditsCharged: 0, data };
      expect(await failure(h.client.addArtifact(req))).toMatchObject({ code: 'invalid_request', param: 'data' });
    });

    it.each<[string, Partial<library.AddArtifactRequest>, string]>([
      ['an empty kind', { kind: '' }, 'kind'],
      ['an upper-case kind', { kind: 'Summary' }, 'kind'],
      ['a kind with a space', { kind: 'key points' }, 'kind'],
      ['a 41-character kind', { kind: 'k'.repeat(41) }, 'kind'],
      ['an unknown format', { format: 9 as library.ArtifactFormat }, 'format'],
      ['negative credits', { creditsCharged: -1 }, 'credits_charged'],
    ])('rejects %s with invalid_request', async (_name, fields, param) => {
      const owner = newOwner();
      const rec = await create(owner);
      const req = { ownerId: owner, recordingId: rec.id, kind: 'summary', format: ArtifactFormat.ARTIFACT_FORMAT_PLAIN, content: 'x', creditsCharged: 0, data: undefined, ...fields };
      expect(await failure(h.client.addArtifact(req))).toMatchObject({ code: 'invalid_request', param });
      expect((await get(owner, rec.id)).artifacts).toEqual([]);
    });
  });

  describe('folders, threads and knowledge bases', () => {
    it.each<[string, string]>([
      ['an empty name', ''],
      ['a blank name', '   '],
      ['a 201-character name', 'n'.repeat(201)],
    ])('rejects a folder with %s on "name"', async (_name, name) => {
      expect(await failure(h.client.createFolder({ ownerId: newOwner(), name, createdAt: undefined }))).toMatchObject({ code: 'invalid_request', param: 'name' });
    });

    it('accepts a 200-character folder name', async () => {
      const name = 'n'.repeat(200);
      expect((await h.client.createFolder({ ownerId: newOwner(), name, createdAt: undefined })).folder).toMatchObject({ name, recordingCount: 0 });
    });

    it('rejects a knowledge base without a name or with an overlong description', async () => {
      const ownerId = newOwner();
      expect(await failure(h.client.createKnowledgeBase({ ownerId, name: '', description: '', createdAt: undefined }))).toMatchObject({ code: 'invalid_request', param: 'name' });
      expect(await failure(h.client.createKnowledgeBase({ ownerId, name: 'KB', description: 'd'.repeat(2001), createdAt: undefined }))).toMatchObject({
        code: 'invalid_request',
        param: 'description',
      });
    });

    it('rejects a thread title over 500 characters', async () => {
      expect(await failure(h.client.createThoughtThread({ ownerId: newOwner(), title: 't'.repeat(501), createdAt: undefined }))).toMatchObject({ code: 'invalid_request', param: 'title' });
    });

    it('adds a recording to a knowledge base once, however often it is asked', async () => {
      const owner = newOwner();
      const kb = (await h.client.createKnowledgeBase({ ownerId: owner, name: 'Research', description: 'papers', createdAt: undefined })).knowledgeBase!;
      const rec = await create(owner);
      h.clock.advance(1000);
      const first = (await h.client.addKnowledgeBaseRecording({ ownerId: owner, knowledgeBaseId: kb.id, recordingId: rec.id })).knowledgeBase!;
      expect(first).toMatchObject({ recordingCount: 1, updatedAt: h.clock.now() });
      h.clock.advance(1000);
      const again = await Promise.all([1, 2, 3].map(() => h.client.addKnowledgeBaseRecording({ ownerId: owner, knowledgeBaseId: kb.id, recordingId: rec.id })));
      for (const res of again) expect(res.knowledgeBase).toMatchObject({ recordingCount: 1, updatedAt: first.updatedAt });
    });
  });

  describe('thread items and context sources', () => {
    const owner = newOwner();
    let thread = '';
    let rec = '';
    beforeAll(async () => {
      thread = (await h.client.createThoughtThread({ ownerId: owner, title: 'Ideas', createdAt: undefined })).thread!.id;
      rec = (await create(owner)).id;
    });

    it.each<[string, Partial<library.AddThreadItemRequest>, string, string]>([
      ['an unspecified kind', { kind: ThreadItemKind.THREAD_ITEM_KIND_UNSPECIFIED }, 'invalid_request', 'kind'],
      ['a RECORDING item without recording_id', { kind: ThreadItemKind.THREAD_ITEM_KIND_RECORDING, recordingId: '' }, 'invalid_request', 'recording_id'],
      ['a NOTE item with a recording_id', { kind: ThreadItemKind.THREAD_ITEM_KIND_NOTE, recordingId: 'rec_0123456789abcdefghijklmn' }, 'invalid_request', 'recording_id'],
      ['a NOTE without text', { kind: ThreadItemKind.THREAD_ITEM_KIND_NOTE, text: ' ' }, 'invalid_request', 'text'],
      ['text over 100,000 characters', { kind: ThreadItemKind.THREAD_ITEM_KIND_ANSWER, text: 'a'.repeat(100_001) }, 'invalid_request', 'text'],
      ['a RECORDING item with a malformed recording_id', { kind: ThreadItemKind.THREAD_ITEM_KIND_RECORDING, recordingId: 'fld_0123456789abcdefghijklmn' }, 'not_found', 'recording_id'],
    ])('rejects %s', async (_name, fields, code, param) => {
      const req = { ownerId: owner, threadId: thread, kind: ThreadItemKind.THREAD_ITEM_KIND_NOTE, text: 'x', recordingId: '', ...fields };
      expect(await failure(h.client.addThreadItem(req))).toMatchObject({ code, param });
      expect((await h.client.getThoughtThread({ ownerId: owner, threadId: thread })).thread?.itemCount).toBe(0);
    });

    it('adds a RECORDING item for an owned recording', async () => {
      const item = (await h.client.addThreadItem({ ownerId: owner, threadId: thread, kind: ThreadItemKind.THREAD_ITEM_KIND_RECORDING, text: '', recordingId: rec })).item!;
      expect(item).toMatchObject({ kind: ThreadItemKind.THREAD_ITEM_KIND_RECORDING, recordingId: rec, text: '' });
      expect(item.id).toMatch(/^thi_/);
    });

    it('answers not_found on "ref_id" when the ref is of another kind than named', async () => {
      const err = await failure(h.client.addThreadContextSource({ ownerId: owner, threadId: thread, kind: ContextSourceKind.CONTEXT_SOURCE_KIND_FOLDER, refId: rec }));
      expect(err).toMatchObject({ code: 'not_found', param: 'ref_id' });
    });

    it('rejects an unspecified context source kind', async () => {
      const err = await failure(h.client.addThreadContextSource({ ownerId: owner, threadId: thread, kind: ContextSourceKind.CONTEXT_SOURCE_KIND_UNSPECIFIED, refId: rec }));
      expect(err).toMatchObject({ code: 'invalid_request', param: 'kind' });
    });

    it('adds the same context source only once', async () => {
      const add = () => h.client.addThreadContextSource({ ownerId: owner, threadId: thread, kind: ContextSourceKind.CONTEXT_SOURCE_KIND_RECORDING, refId: rec });
      const first = (await add()).contextSource!;
      expect(first).toMatchObject({ kind: ContextSourceKind.CONTEXT_SOURCE_KIND_RECORDING, refId: rec, title: 'Note' });
      expect(first.id).toMatch(/^ctx_/);
      expect((await add()).contextSource).toEqual(first);
      expect((await h.client.getThoughtThread({ ownerId: owner, threadId: thread })).thread?.contextSources).toHaveLength(1);
    });
  });
});
