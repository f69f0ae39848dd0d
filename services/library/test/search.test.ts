/**
 * Passage search over gRPC, on a real Postgres (DATABASE_URL) and on the embedded PGlite alike:
 * passages cut from speaker turns and windows, highlights, phrases, filters, ranked paging,
 * refusals of queries that can never match, an index that follows every write, the backlog of
 * rows stored before passages existed, and no passage of one owner ever shown to another.
 */
import { createLogger, newId } from '@murmur/kit';
import { testAccess } from '@murmur/kit/testing';
import { startLibraryService } from '@murmur/library';
import { library } from '@murmur/proto';
import { failure, newOwner, page, startHarness, type Harness } from './harness';

const { PassageSource, ThreadItemKind, SearchRanking } = library;

const BACKENDS: Array<[string, string]> = process.env.DATABASE_URL ? [['postgres', process.env.DATABASE_URL], ['pglite', '']] : [['pglite', '']];

describe.each(BACKENDS)('passage search on %s', (_name, url) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(url);
  }, 60_000);
  afterAll(async () => {
    await h.stop();
  });

  type Seg = { start: number; end: number; text: string; speaker?: string };
  /** A transcript of these segments; the speakers they name are its speakers (unnamed). */
  const transcriptOf = (segments: Seg[]): library.Transcript => {
    const speakers = [...new Set(segments.flatMap((s) => (s.speaker ? [s.speaker] : [])))];
    return {
      text: segments.map((s) => s.text).join(' '),
      language: 'en',
      segments: segments.map((s) => ({ startSeconds: s.start, endSeconds: s.end, text: s.text, ...(s.speaker ? { speaker: s.speaker } : {}) })),
      ...(speakers.length > 0 ? { timeline: { words: undefined, speakers: speakers.map((id) => ({ id, name: '' })), wordCount: 0 } } : {}),
    };
  };

  async function recording(ownerId: string, segments: Seg[], fields: Partial<library.CreateRecordingRequest> = {}): Promise<library.Recording> {
    const res = await h.client.createRecording({
      ownerId, title: 'Weekly sync', folderId: '', durationSeconds: segments.at(-1)?.end ?? 0, transcript: transcriptOf(segments), createdAt: undefined, recordingId: '', ...fields,
    });
    return res.recording!;
  }

  const search = (ownerId: string, query: string, extra: Partial<library.SearchPassagesRequest> = {}) =>
    h.client.searchPassages({ ownerId, query, page: page(20), sources: [], folderId: '', recordingId: '', createdAfter: undefined, createdBefore: undefined, ...extra });

  /** The highlighted stretches of a passage, as text. */
  const marked = (p: library.Passage) => p.highlights.map((x) => [...p.text].slice(x.offset, x.offset + x.length).join(''));

  it('finds the speaker turn that says it, with its times, speaker and highlights', async () => {
    const owner = newOwner();
    const rec = await recording(owner, [
      { start: 0, end: 4, text: 'Good morning everyone, let us start.', speaker: 'S1' },
      { start: 4, end: 9, text: 'I looked at the pricing page again yesterday.', speaker: 'S2' },
      { start: 9, end: 14, text: 'We decided the pricing page ships on Friday.', speaker: 'S2' },
      { start: 14, end: 18, text: 'Great, next topic is hiring.', speaker: 'S1' },
    ]);
    const res = await search(owner, 'decided pricing');
    expect(res.ranking).toBe(SearchRanking.SEARCH_RANKING_TEXT);
    expect(res.passages).toHaveLength(1);
    const [hit] = res.passages;
    expect(hit).toMatchObject({
      source: PassageSource.PASSAGE_SOURCE_RECORDING,
      sourceId: rec.id,
      title: 'Weekly sync',
      text: 'I looked at the pricing page again yesterday. We decided the pricing page ships on Friday.',
      startSeconds: 4,
      endSeconds: 14,
      speaker: 'S2',
      threadItemId: '',
    });
    expect(hit!.id).toMatch(/^psg_/);
    expect(hit!.score).toBeGreaterThan(0);
    expect(hit!.score).toBeLessThan(1);
    expect(marked(hit!)).toEqual(['pricing', 'decided', 'pricing']);
    // A phrase's words are one highlight.
    expect(marked((await search(owner, '"pricing page"')).passages[0]!)).toEqual(['pricing page', 'pricing page']);
  });

  it('matches a quoted phrase only where its words stand together, and ranks closer matches first', async () => {
    const owner = newOwner();
    await recording(owner, [{ start: 0, end: 5, text: 'The page about pricing is old.', speaker: 'S1' }, { start: 5, end: 10, text: 'Let us fix the pricing page.', speaker: 'S2' }]);
    const phrase = await search(owner, '"pricing page"');
    expect(phrase.passages.map((p) => p.text)).toEqual(['Let us fix the pricing page.']);
    const words = await search(owner, 'pricing page');
    expect(words.passages.map((p) => p.text)).toEqual(['Let us fix the pricing page.', 'The page about pricing is old.']);
    const excluded = await search(owner, 'pricing -old');
    expect(excluded.passages.map((p) => p.text)).toEqual(['Let us fix the pricing page.']);
  });

  it('cuts one long speaker turn into windows of 30–60 s on segment boundaries', async () => {
    const owner = newOwner();
    const segments: Seg[] = Array.from({ length: 18 }, (_, i) => ({ start: i * 10, end: i * 10 + 10, text: `Budget item number ${i} is settled.`, speaker: 'S1' }));
    await recording(owner, segments);
    const res = await search(owner, 'budget', { page: page(100) });
    const windows = res.passages.map((p) => [p.startSeconds, p.endSeconds]).sort((a, b) => a[0]! - b[0]!);
    expect(windows).toEqual([[0, 30], [30, 60], [60, 90], [90, 120], [120, 150], [150, 180]]);
  });

  it('names the speaker of a passage with the name the user gave it, as it is now', async () => {
    const owner = newOwner();
    const rec = await recording(owner, [{ start: 0, end: 3, text: 'The roadmap review is on Tuesday.', speaker: 'S1' }]);
    expect((await search(owner, 'roadmap')).passages[0]).toMatchObject({ speaker: 'S1', speakerName: '' });
    await h.client.setSpeakerNames({ ownerId: owner, recordingId: rec.id, names: { S1: 'Maria' } });
    expect((await search(owner, 'roadmap')).passages[0]).toMatchObject({ speaker: 'S1', speakerName: 'Maria' });
  });

  it('searches thread items and knowledge bases too, and narrows by type', async () => {
    const owner = newOwner();
    const rec = await recording(owner, [{ start: 0, end: 3, text: 'Onboarding checklist for new hires.' }]);
    const thread = (await h.client.createThoughtThread({ ownerId: owner, title: 'Hiring thoughts', createdAt: undefined })).thread!;
    const item = (await h.client.addThreadItem({ ownerId: owner, threadId: thread.id, kind: ThreadItemKind.THREAD_ITEM_KIND_NOTE, text: 'The onboarding takes too long.', recordingId: '' })).item!;
    const kb = (await h.client.createKnowledgeBase({ ownerId: owner, name: 'People ops', description: 'Everything about onboarding and leave.', createdAt: undefined })).knowledgeBase!;
    const all = await search(owner, 'onboarding');
    expect(all.passages.map((p) => [p.source, p.sourceId, p.title]).sort()).toEqual(
      [
        [PassageSource.PASSAGE_SOURCE_RECORDING, rec.id, 'Weekly sync'],
        [PassageSource.PASSAGE_SOURCE_THOUGHT_THREAD, thread.id, 'Hiring thoughts'],
        [PassageSource.PASSAGE_SOURCE_KNOWLEDGE_BASE, kb.id, 'People ops'],
      ].sort(),
    );
    const threadHit = all.passages.find((p) => p.source === PassageSource.PASSAGE_SOURCE_THOUGHT_THREAD)!;
    expect(threadHit).toMatchObject({ threadItemId: item.id, text: 'The onboarding takes too long.', speaker: '' });
    expect(threadHit.startSeconds).toBeUndefined();
    const onlyThreads = await search(owner, 'onboarding', { sources: [PassageSource.PASSAGE_SOURCE_THOUGHT_THREAD, PassageSource.PASSAGE_SOURCE_KNOWLEDGE_BASE] });
    expect(onlyThreads.passages.map((p) => p.sourceId).sort()).toEqual([thread.id, kb.id].sort());
    expect(await failure(search(owner, 'onboarding', { sources: [99 as never] }))).toMatchObject({ code: 'invalid_request', param: 'type' });
  });

  it('filters by folder, recording and creation time, and answers not_found for a folder or recording that is not the caller’s', async () => {
    const owner = newOwner();
    const other = newOwner();
    const folder = (await h.client.createFolder({ ownerId: owner, name: 'Sales', createdAt: undefined })).folder!;
    const inFolder = await recording(owner, [{ start: 0, end: 2, text: 'Quarterly forecast numbers.' }], { folderId: folder.id, createdAt: new Date('2026-01-10T00:00:00Z') });
    const loose = await recording(owner, [{ start: 0, end: 2, text: 'Forecast for the offsite.' }], { createdAt: new Date('2026-01-12T00:00:00Z') });
    expect((await search(owner, 'forecast', { folderId: folder.id })).passages.map((p) => p.sourceId)).toEqual([inFolder.id]);
    expect((await search(owner, 'forecast', { recordingId: loose.id })).passages.map((p) => p.sourceId)).toEqual([loose.id]);
    expect((await search(owner, 'forecast', { createdAfter: new Date('2026-01-11T00:00:00Z') })).passages.map((p) => p.sourceId)).toEqual([loose.id]);
    expect((await search(owner, 'forecast', { createdBefore: new Date('2026-01-11T00:00:00Z') })).passages.map((p) => p.sourceId)).toEqual([inFolder.id]);
    // A recording moved out of its folder leaves the folder's results in the same write.
    await h.client.updateRecording({ ownerId: owner, recordingId: inFolder.id, folderId: '' });
    expect((await search(owner, 'forecast', { folderId: folder.id })).passages).toEqual([]);
    const otherFolder = (await h.client.createFolder({ ownerId: other, name: 'Theirs', createdAt: undefined })).folder!;
    expect(await failure(search(owner, 'forecast', { folderId: otherFolder.id }))).toMatchObject({ code: 'not_found', param: 'folder_id' });
    const theirs = await recording(other, [{ start: 0, end: 2, text: 'Forecast.' }]);
    expect(await failure(search(owner, 'forecast', { recordingId: theirs.id }))).toMatchObject({ code: 'not_found', param: 'recording_id' });
    expect(await failure(search(owner, 'forecast', { recordingId: 'rec_nope' }))).toMatchObject({ code: 'not_found', param: 'recording_id' });
  });

  it('pages ranked results with a cursor: no passage twice, none left out, in the one-page order', async () => {
    const owner = newOwner();
    for (let r = 0; r < 5; r++) {
      // Repetition varies the rank; equal texts tie, and the id breaks ties.
      await recording(owner, Array.from({ length: 5 }, (_, i) => ({ start: i * 40, end: i * 40 + 35, text: `${'launch '.repeat(1 + ((r + i) % 3))}plan part ${i}.`, speaker: `S${i + 1}` })));
    }
    const whole = await search(owner, 'launch', { page: page(100) });
    expect(whole.passages).toHaveLength(25);
    const walked: string[] = [];
    let cursor = '';
    for (let n = 0; n < 10; n++) {
      const res = await search(owner, 'launch', { page: page(7, cursor) });
      walked.push(...res.passages.map((p) => p.id));
      if (!res.page!.hasMore) break;
      cursor = res.page!.nextCursor;
    }
    expect(walked).toEqual(whole.passages.map((p) => p.id));
    const scores = whole.passages.map((p) => p.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    // A cursor is bound to its query and filters, and to its owner.
    const first = await search(owner, 'launch', { page: page(7) });
    expect(await failure(search(owner, 'plan', { page: page(7, first.page!.nextCursor) }))).toMatchObject({ code: 'invalid_request', param: 'cursor' });
    expect(await failure(search(newOwner(), 'launch', { page: page(7, first.page!.nextCursor) }))).toMatchObject({ code: 'invalid_request', param: 'cursor' });
  });

  it.each([
    ['', 'must not be empty'],
    ['   ', 'must not be empty'],
    ['x'.repeat(501), 'at most 500'],
    ['"pricing page', 'unclosed quote'],
    ['pricing "" page', 'empty "phrase"'],
    ['-pricing -page', 'excludes words'],
    ['the and of', 'no words to search for'],
    ['the -pricing', 'asks for none that can be searched'],
  ])('refuses the query %j as invalid_request naming q', async (query, words) => {
    const err = await failure(search(newOwner(), query));
    expect(err).toMatchObject({ code: 'invalid_request', param: 'q' });
    expect(err.message).toContain(words);
  });

  it('follows every write: a new transcript replaces the passages, a deleted recording leaves none', async () => {
    const owner = newOwner();
    const rec = await recording(owner, [{ start: 0, end: 2, text: 'Draft about the warehouse lease.' }]);
    expect((await search(owner, 'warehouse')).passages).toHaveLength(1);
    await h.client.attachTranscript({ ownerId: owner, recordingId: rec.id, transcript: transcriptOf([{ start: 0, end: 2, text: 'Final words about the office move.' }]) });
    expect((await search(owner, 'warehouse')).passages).toEqual([]);
    expect((await search(owner, 'office')).passages.map((p) => p.sourceId)).toEqual([rec.id]);
    await h.client.deleteRecording({ ownerId: owner, recordingId: rec.id });
    expect((await search(owner, 'office')).passages).toEqual([]);
    const [left] = await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM passages WHERE source_id = $1', [rec.id]);
    expect(left!.n).toBe(0);
  });

  it('never shows one owner’s passage to another, even for identical text', async () => {
    const a = newOwner();
    const b = newOwner();
    const text = 'The acquisition of Contoso closes in March.';
    const recA = await recording(a, [{ start: 0, end: 3, text, speaker: 'S1' }], { title: 'Board A' });
    const recB = await recording(b, [{ start: 0, end: 3, text, speaker: 'S1' }], { title: 'Board B' });
    const thrA = (await h.client.createThoughtThread({ ownerId: a, title: 'A thread', createdAt: undefined })).thread!;
    await h.client.addThreadItem({ ownerId: a, threadId: thrA.id, kind: ThreadItemKind.THREAD_ITEM_KIND_NOTE, text, recordingId: '' });
    const kbB = (await h.client.createKnowledgeBase({ ownerId: b, name: 'B kb', description: text, createdAt: undefined })).knowledgeBase!;
    const forA = await search(a, 'acquisition Contoso');
    const forB = await search(b, 'acquisition Contoso');
    expect(forA.passages.map((p) => p.sourceId).sort()).toEqual([recA.id, thrA.id].sort());
    expect(forB.passages.map((p) => p.sourceId).sort()).toEqual([recB.id, kbB.id].sort());
    const idsA = new Set(forA.passages.map((p) => p.id));
    expect(forB.passages.some((p) => idsA.has(p.id))).toBe(false);
    for (const p of forA.passages) expect(['Board A', 'A thread']).toContain(p.title);
    for (const p of forB.passages) expect(['Board B', 'B kb']).toContain(p.title);
  });

  it('indexes rows stored before passages existed, in the background at start', async () => {
    const owner = newOwner();
    const recId = newId('rec');
    const threadId = newId('thr');
    const kbId = newId('kb');
    const now = new Date('2025-06-01T10:00:00Z');
    // Rows as a database migrated from before passages holds them: unindexed, no passages.
    await h.db.query(
      `INSERT INTO recordings (id, owner_id, title, created_at, updated_at, transcript, language, segments) VALUES ($1, $2, 'Old one', $3, $3, $4, 'en', $5::jsonb)`,
      [recId, owner, now, 'The old zeppelin memo.', JSON.stringify([{ start: 0, end: 3, text: 'The old zeppelin memo.' }])],
    );
    await h.db.query(`INSERT INTO thought_threads (id, owner_id, title, created_at, updated_at) VALUES ($1, $2, 'Old thread', $3, $3)`, [threadId, owner, now]);
    await h.db.query(`INSERT INTO thread_items (id, owner_id, thread_id, kind, text, created_at) VALUES ($1, $2, $3, 'note', 'A zeppelin note.', $4)`, [newId('thi'), owner, threadId, now]);
    await h.db.query(`INSERT INTO knowledge_bases (id, owner_id, name, description, created_at, updated_at) VALUES ($1, $2, 'Zeppelins', '', $3, $3)`, [kbId, owner, now]);
    expect((await search(owner, 'zeppelin')).passages).toEqual([]);
    // A library process starting on this database works the backlog off.
    const second = await startLibraryService({ access: testAccess('library'), db: h.db, log: createLogger('library-test', 'silent'), address: '127.0.0.1:0' });
    try {
      let found: string[] = [];
      for (let i = 0; i < 100 && found.length < 3; i++) {
        found = (await search(owner, 'zeppelin')).passages.map((p) => p.sourceId).sort();
        if (found.length < 3) await new Promise((r) => setTimeout(r, 100));
      }
      expect(found).toEqual([recId, threadId, kbId].sort());
      const [left] = await h.db.query<{ n: number }>(
        `SELECT (SELECT count(*) FROM recordings WHERE owner_id = $1 AND NOT passages_indexed) + (SELECT count(*) FROM knowledge_bases WHERE owner_id = $1 AND NOT passages_indexed)::int AS n`,
        [owner],
      );
      expect(Number(left!.n)).toBe(0);
    } finally {
      await second.stop();
    }
  });
});
