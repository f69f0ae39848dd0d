/**
 * bench/search-quality's reading of QMSum and its scores, on a small set made here in QMSum's
 * format: turn times from word counts, speaker ids, spans as times, overlap, recall@5, MRR@10,
 * the OR'ed diagnostic query, and one whole run against the real library service (DATABASE_URL,
 * else the embedded PGlite).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runSearchQuality } from '../src/search-quality';
import { loadSearchMeetings, recordingRequest, spanRange, speakerIds, timeTurns, turnSpanOf } from '../src/search-quality/meetings';
import { anyWordQuery, firstRelevantRank, overlaps, recallAt, scorePage, summarizeOutcomes, type QueryTarget } from '../src/search-quality/scoring';

const TURNS = [
  { speaker: 'Project Manager', content: 'Good morning {vocalsound} , let us start .' },
  { speaker: 'Industrial Designer', content: 'The kinetic battery costs more than the rubber case .' },
  { speaker: 'Project Manager', content: '{vocalsound}' },
  { speaker: 'Marketing', content: 'Young buyers want a fruity colour .' },
];

function makeSet(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'search-quality-'));
  for (const [split, id] of [['train', 'XX01a'], ['test', 'XX02a']] as const) {
    fs.mkdirSync(path.join(dir, 'qmsum', split), { recursive: true });
    const file = {
      topic_list: [],
      general_query_list: [],
      specific_query_list: [
        { query: 'kinetic battery', answer: '', relevant_text_span: [['1', '1']] },
        { query: 'What did Marketing say about the colour?', answer: '', relevant_text_span: [['3', '3'], ['9', '12']] },
      ],
      meeting_transcripts: TURNS,
    };
    fs.writeFileSync(path.join(dir, 'qmsum', split, `${id}.json`), JSON.stringify(file));
  }
  return dir;
}

describe('the evaluation set', () => {
  it('times turns by their words at 150 a minute, a turn of markup only as one word', () => {
    const turns = timeTurns(TURNS);
    expect(turns.map((t) => [t.start, t.end])).toEqual([
      [0, 2],
      [2, 5.6],
      [5.6, 6],
      [6, 8.4],
    ]);
    expect(turns.map((t) => t.text)).toEqual(['Good morning, let us start.', 'The kinetic battery costs more than the rubber case.', '', 'Young buyers want a fruity colour.']);
    expect(turns.map((t) => t.speaker)).toEqual(['S1', 'S2', 'S1', 'S3']);
    expect(spanRange(turns, [1, 3])).toEqual({ start: 2, end: 8.4 });
  });

  it('numbers speakers by first appearance and round again past 50', () => {
    const labels = Array.from({ length: 52 }, (_, i) => `P${i}`);
    const ids = speakerIds([...labels, 'P0']);
    expect(ids.slice(0, 3)).toEqual(['S1', 'S2', 'S3']);
    expect(ids.slice(49)).toEqual(['S50', 'S1', 'S2', 'S1']);
  });

  it('reads QMSum spans, and skips one that is not a range of the meeting', () => {
    expect(turnSpanOf(['2', '5'], 6)).toEqual([2, 5]);
    expect(turnSpanOf(['5', '2'], 6)).toBeNull();
    expect(turnSpanOf(['2', '6'], 6)).toBeNull();
    expect(turnSpanOf(['x', '1'], 6)).toBeNull();
    const dir = makeSet();
    try {
      const { meetings, malformedSpans } = loadSearchMeetings(dir);
      expect(meetings.map((m) => [m.id, m.split, m.queries.length])).toEqual([
        ['XX01a', 'train', 2],
        ['XX02a', 'test', 2],
      ]);
      expect(malformedSpans).toBe(2);
      expect(meetings[1]!.queries[1]!.spans).toEqual([{ start: 6, end: 8.4 }]);
      // The request: spoken turns only, speakers declared for the segments that name them.
      const req = recordingRequest(meetings[1]!, 'usr_x');
      expect(req.transcript!.segments.map((s) => s.speaker)).toEqual(['S1', 'S2', 'S3']);
      expect(req.transcript!.timeline!.speakers.map((s) => s.id)).toEqual(['S1', 'S2', 'S3']);
      expect(req.durationSeconds).toBe(8.4);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says how to fetch it when it is missing', () => {
    expect(() => loadSearchMeetings(path.join(os.tmpdir(), 'no-such-search-set'))).toThrow(/fetch-search-eval/);
  });
});

describe('scores', () => {
  const target: QueryTarget = { recordingId: 'rec_a', spans: [{ start: 10, end: 20 }, { start: 50, end: 60 }] };

  it('counts an overlap of more than a point only', () => {
    expect(overlaps({ start: 0, end: 10 }, { start: 10, end: 20 })).toBe(false);
    expect(overlaps({ start: 0, end: 10.5 }, { start: 10, end: 20 })).toBe(true);
    expect(overlaps({ start: 12, end: 14 }, { start: 10, end: 20 })).toBe(true);
  });

  it('takes recall@k over spans and the rank of the first relevant passage of the right recording', () => {
    const page = [
      { recordingId: 'rec_b', start: 12, end: 18 }, // right time, other meeting
      { recordingId: 'rec_a', start: 0, end: 10 }, // touches the first span only
      { recordingId: 'rec_a', start: 55, end: 70 },
      { recordingId: 'rec_a' }, // no times
      { recordingId: 'rec_a', start: 5, end: 11 },
    ];
    expect(firstRelevantRank(page, target, 10)).toBe(3);
    expect(firstRelevantRank(page, target, 2)).toBeNull();
    expect(recallAt(page, target, 5)).toBe(1);
    expect(recallAt(page, target, 4)).toBe(0.5);
    expect(recallAt([], target, 5)).toBe(0);
  });

  it('averages over every query, a query without results or refused counting 0', () => {
    const hit = scorePage([{ recordingId: 'rec_a', start: 12, end: 14 }], target);
    const second = scorePage([{ recordingId: 'rec_b', start: 0, end: 1 }, { recordingId: 'rec_a', start: 50, end: 51 }], target);
    const empty = scorePage([], target);
    const refused = scorePage('refused', target);
    expect(summarizeOutcomes([hit, second, empty, refused])).toEqual({
      queries: 4,
      zero_results: 1,
      refused: 1,
      recall_at_5: 0.25,
      mrr_at_10: 0.375,
      hit_at_10: 0.5,
      mean_results: 0.75,
    });
  });

  it('joins a question\'s words with OR, without punctuation, quotes or an OR of its own', () => {
    expect(anyWordQuery('What’s said about "go-there" or -hiring?')).toBe('What’s or said or about or go or there or hiring');
    expect(anyWordQuery('alpha beta gamma', 14)).toBe('alpha or beta');
    expect(anyWordQuery('?!')).toBe('');
  });
});

describe('a whole run', () => {
  it('loads each split as its own library and scores both settings', async () => {
    const dir = makeSet();
    try {
      const report = await runSearchQuality(dir, () => undefined, { url: process.env.DATABASE_URL || '' });
      type Summary = { queries: number; zero_results: number; recall_at_5: number; mrr_at_10: number; mean_results: number };
      const splits = report.result.splits as Record<string, { passages: number; settings: Record<string, Record<string, Summary>> }>;
      expect(Object.keys(splits)).toEqual(['train', 'test']);
      expect(splits.test!.passages).toBe(3);
      for (const setting of ['library', 'recording']) {
        const s = splits.test!.settings[setting]!;
        // "kinetic battery" finds its turn (and not the train split's copy: another owner); the
        // question needs "said" and "marketing" in the passage too, and finds nothing.
        expect(s.as_asked).toMatchObject({ queries: 2, zero_results: 1, recall_at_5: 0.5, mrr_at_10: 0.5, mean_results: 0.5 });
        expect(s.as_asked_else_any_word).toMatchObject({ zero_results: 0, recall_at_5: 1, mrr_at_10: 1 });
      }
      expect(report.failures).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
