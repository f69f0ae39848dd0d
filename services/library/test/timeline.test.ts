/**
 * A transcript's words and speakers in the library (issue 32): stored as the bytes of
 * murmur.timeline.v1.Words, read only with include_words, never in lists; speakers named by
 * their owner only; bad columns refused with a 400 naming them.
 */
import { library, timeline } from '@murmur/proto';
import { failure, newOwner, page, startHarness, type Harness } from './harness';

describe('library: words and speakers', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.stop();
  });

  const words = (n: number, speakers = 0): timeline.Words => ({
    text: Array.from({ length: n }, (_, i) => `word${i}`),
    startMs: Array.from({ length: n }, (_, i) => i * 400),
    endMs: Array.from({ length: n }, (_, i) => i * 400 + 300),
    confidence: Array.from({ length: n }, (_, i) => (i % 10) / 10),
    speaker: speakers ? Array.from({ length: n }, (_, i) => (i % speakers) + 1) : [],
  });
  const speakers = [
    { id: 'S1', name: '' },
    { id: 'S2', name: '' },
  ];
  const create = async (ownerId: string, transcript: library.Transcript) =>
    (await h.client.createRecording({ ownerId, title: 'Standup', folderId: '', durationSeconds: 60, transcript, createdAt: undefined, recordingId: '' })).recording!;
  const transcriptWith = (w: timeline.Words, s = speakers): library.Transcript => ({
    text: w.text.join(' '),
    language: 'en',
    segments: [{ startSeconds: 0, endSeconds: 1, text: 'word0 word1', speaker: 'S1' }],
    timeline: { words: w, speakers: s, wordCount: 0 },
  });

  it('stores the words and answers them only when asked for', async () => {
    const owner = newOwner();
    const rec = await create(owner, transcriptWith(words(500, 2)));
    const plain = (await h.client.getRecording({ ownerId: owner, recordingId: rec.id })).recording!;
    expect(plain.transcript?.timeline).toEqual({ words: undefined, speakers, wordCount: 500 });
    expect(plain.transcript?.segments[0]).toEqual({ startSeconds: 0, endSeconds: 1, text: 'word0 word1', speaker: 'S1' });
    const full = (await h.client.getRecording({ ownerId: owner, recordingId: rec.id, includeWords: true })).recording!;
    const got = full.transcript!.timeline!.words!;
    expect(got.text).toEqual(words(500).text);
    expect(got.startMs).toEqual(words(500).startMs);
    expect(got.endMs).toEqual(words(500).endMs);
    expect(got.speaker).toEqual(words(500, 2).speaker);
    // float32 on the wire
    got.confidence.forEach((c, i) => expect(c).toBeCloseTo((i % 10) / 10, 5));
    // Lists never carry a transcript, words least of all.
    const list = await h.client.listRecordings({ ownerId: owner, page: page(), query: '', folderId: '', createdAfter: undefined, createdBefore: undefined });
    expect(list.recordings[0]!.transcript).toBeUndefined();
  });

  it('keeps a transcript without words as before (no timeline)', async () => {
    const owner = newOwner();
    const rec = await create(owner, { text: 'hello', language: 'en', segments: [], timeline: undefined });
    const got = (await h.client.getRecording({ ownerId: owner, recordingId: rec.id, includeWords: true })).recording!;
    expect(got.transcript).toEqual({ text: 'hello', language: 'en', segments: [], timeline: undefined });
  });

  it.each<[string, (w: timeline.Words) => void, string]>([
    ['a missing end', (w) => w.endMs.pop(), 'transcript.words'],
    ['times out of order', (w) => (w.startMs[3] = 0), 'transcript.words'],
    ['an end before its start', (w) => (w.endMs[2] = 1), 'transcript.words'],
    ['an empty word', (w) => (w.text[1] = ''), 'transcript.words'],
    ['a word with a line break', (w) => (w.text[1] = 'a\nb'), 'transcript.words'],
    ['a confidence over 1', (w) => (w.confidence[0] = 1.5), 'transcript.words'],
    ['a speaker the transcript lacks', (w) => (w.speaker[0] = 3), 'transcript.words'],
    ['confidences for some words only', (w) => w.confidence.pop(), 'transcript.words'],
  ])('refuses words with %s (400 naming them)', async (_name, spoil, param) => {
    const w = words(10, 2);
    spoil(w);
    const err = await failure(create(newOwner(), transcriptWith(w)));
    expect({ code: err.code, param: err.param }).toEqual({ code: 'invalid_request', param });
  });

  it('refuses bad speakers and segments naming an unknown speaker', async () => {
    for (const s of [[{ id: 'X1', name: '' }], [{ id: 'S1', name: '' }, { id: 'S1', name: '' }]]) {
      const err = await failure(create(newOwner(), transcriptWith(words(3, 1), s)));
      expect({ code: err.code, param: err.param }).toEqual({ code: 'invalid_request', param: 'transcript.speakers' });
    }
    const t = transcriptWith(words(3, 2));
    t.segments[0]!.speaker = 'S7';
    const err = await failure(create(newOwner(), t));
    expect({ code: err.code, param: err.param }).toEqual({ code: 'invalid_request', param: 'transcript.segments' });
  });

  describe('SetSpeakerNames', () => {
    it('names speakers, clears a name with "", and keeps the others', async () => {
      const owner = newOwner();
      const rec = await create(owner, transcriptWith(words(4, 2)));
      const named = (await h.client.setSpeakerNames({ ownerId: owner, recordingId: rec.id, names: { S1: '  Maria López ', S2: 'Ken' } })).recording!;
      expect(named.transcript?.timeline?.speakers).toEqual([
        { id: 'S1', name: 'Maria López' },
        { id: 'S2', name: 'Ken' },
      ]);
      await h.client.setSpeakerNames({ ownerId: owner, recordingId: rec.id, names: { S2: '' } });
      const got = (await h.client.getRecording({ ownerId: owner, recordingId: rec.id })).recording!;
      expect(got.transcript?.timeline?.speakers).toEqual([
        { id: 'S1', name: 'Maria López' },
        { id: 'S2', name: '' },
      ]);
    });

    it('refuses an id the recording lacks, a recording without speakers, a name too long, and another owner’s recording', async () => {
      const owner = newOwner();
      const rec = await create(owner, transcriptWith(words(4, 2)));
      const unknown = await failure(h.client.setSpeakerNames({ ownerId: owner, recordingId: rec.id, names: { S3: 'Ana' } }));
      expect({ code: unknown.code, param: unknown.param }).toEqual({ code: 'invalid_request', param: 'names.S3' });
      const long = await failure(h.client.setSpeakerNames({ ownerId: owner, recordingId: rec.id, names: { S1: 'x'.repeat(101) } }));
      expect({ code: long.code, param: long.param }).toEqual({ code: 'invalid_request', param: 'names.S1' });
      const none = await create(owner, { text: 'hi', language: 'en', segments: [], timeline: undefined });
      const noSpeakers = await failure(h.client.setSpeakerNames({ ownerId: owner, recordingId: none.id, names: { S1: 'Ana' } }));
      expect({ code: noSpeakers.code, param: noSpeakers.param }).toEqual({ code: 'invalid_request', param: 'names' });
      const foreign = await failure(h.client.setSpeakerNames({ ownerId: newOwner(), recordingId: rec.id, names: { S1: 'Eve' } }));
      expect(foreign.code).toBe('not_found');
      // Nothing of the owner's changed.
      const got = (await h.client.getRecording({ ownerId: owner, recordingId: rec.id })).recording!;
      expect(got.transcript?.timeline?.speakers).toEqual(speakers);
    });
  });
});
