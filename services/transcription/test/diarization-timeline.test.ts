/**
 * assignSpeakers, table by table: which speaker a word gets (most overlap, else the nearest
 * turn), how segments split at speaker changes, what a segment without words gets, and the
 * ids in order of first appearance.
 */
import type { Timeline, TimelineSegment, TimelineWord } from '@murmur/contract';
import { assignSpeakers, type SpeakerTurn } from '../src/diarization';

const word = (text: string, start: number, end: number): TimelineWord => ({ text, start, end, confidence: 0.9, speaker: null });
const segment = (start: number, end: number, text: string): TimelineSegment => ({ start, end, text, speaker: null });
const turn = (start: number, end: number, speaker: number): SpeakerTurn => ({ start, end, speaker });
const timeline = (words: TimelineWord[], segments: TimelineSegment[]): Timeline => ({ text: segments.map((s) => s.text).join(' '), words, segments, speakers: [] });

describe('assignSpeakers: words', () => {
  const turns = [turn(0, 2, 7), turn(2, 4, 3), turn(5, 6, 7)];
  it.each([
    ['inside one turn', word('a', 0.5, 1), 'S1'],
    ['across a change, mostly in the second turn', word('b', 1.8, 2.5), 'S2'],
    ['across a change, mostly in the first turn', word('c', 1.2, 2.1), 'S1'],
    ['in a pause, nearer the turn after it', word('d', 4.8, 4.9), 'S1'],
    ['in a pause, nearer the turn before it', word('e', 4.1, 4.2), 'S2'],
    ['of no length, inside a turn', word('f', 3, 3), 'S2'],
    ['after the last turn', word('g', 9, 9.5), 'S1'],
  ])('a word %s', (_, w, expected) => {
    // "a" at 0.5 s comes first, so the speaker numbered 7 is S1 and 3 is S2.
    const out = assignSpeakers(timeline([word('first', 0, 0.4), w], []), turns);
    expect(out.words[1]!.speaker).toBe(expected);
  });

  it('adds up a speaker’s overlap over several turns', () => {
    // 0.3 s of speaker 1 twice beats 0.4 s of speaker 2.
    const out = assignSpeakers(timeline([word('w', 0, 1)], []), [turn(0, 0.3, 1), turn(0.3, 0.7, 2), turn(0.7, 1, 1)]);
    expect(out.words[0]!.speaker).toBe('S1');
    expect(out.speakers).toEqual([{ id: 'S1', name: null }]);
  });

  it('keeps text, times and confidence, and the timeline’s text', () => {
    const t = timeline([{ text: 'hello', start: 1, end: 1.5, confidence: null, speaker: null }], [segment(1, 1.5, 'Hello.')]);
    const out = assignSpeakers(t, [turn(0, 3, 0)]);
    expect(out).toEqual({
      text: 'Hello.',
      words: [{ text: 'hello', start: 1, end: 1.5, confidence: null, speaker: 'S1' }],
      segments: [{ start: 1, end: 1.5, text: 'Hello.', speaker: 'S1' }],
      speakers: [{ id: 'S1', name: null }],
    });
  });

  it('leaves every speaker null and lists none without turns', () => {
    const out = assignSpeakers(timeline([word('a', 0, 1)], [segment(0, 1, 'a')]), []);
    expect(out.words[0]!.speaker).toBeNull();
    expect(out.segments[0]!.speaker).toBeNull();
    expect(out.speakers).toEqual([]);
  });
});

describe('assignSpeakers: segments', () => {
  it('splits a segment at each speaker change, rebuilding each piece’s text from its words', () => {
    const t = timeline(
      [word('so', 0, 0.5), word('we', 0.6, 1), word('agree', 1.2, 1.8), word('no', 2.1, 2.5), word('fine', 3.1, 3.5)],
      [segment(0, 4, 'So, we agree? No. Fine.')],
    );
    const out = assignSpeakers(t, [turn(0, 2, 0), turn(2, 3, 1), turn(3, 4, 0)]);
    expect(out.segments).toEqual([
      { start: 0, end: 1.8, text: 'so we agree', speaker: 'S1' },
      { start: 2.1, end: 2.5, text: 'no', speaker: 'S2' },
      { start: 3.1, end: 4, text: 'fine', speaker: 'S1' },
    ]);
  });

  it('keeps a one-speaker segment whole, with its own text', () => {
    const t = timeline([word('so', 0, 0.5), word('we', 0.6, 1)], [segment(0, 1.2, 'So, we…')]);
    expect(assignSpeakers(t, [turn(0, 5, 4)]).segments).toEqual([{ start: 0, end: 1.2, text: 'So, we…', speaker: 'S1' }]);
  });

  it('gives each word to one segment only (the first holding its middle)', () => {
    const t = timeline([word('edge', 0.8, 1.2)], [segment(0, 1, 'a'), segment(1, 2, 'b')]);
    const out = assignSpeakers(t, [turn(0, 1.1, 0), turn(1.1, 2, 1)]);
    // The word's middle (1.0) is in both: it is the first segment's (speaker 0), and the
    // second, without words, takes who talks most within it (speaker 1).
    expect(out.segments.map((s) => [s.text, s.speaker])).toEqual([['a', 'S1'], ['b', 'S2']]);
  });

  // A first segment whose word is speaker 0's makes speaker 0 S1 and speaker 1 S2.
  it.each([
    ['the speaker who talks longest within it', [turn(0, 2, 0), turn(2, 5, 1)], 'S2'],
    ['the speaker who talks longest within it, over several turns', [turn(0, 1.5, 0), turn(1.5, 2.5, 1), turn(2.5, 3.5, 0), turn(3.5, 5, 1)], 'S2'],
    ['the nearest speaker when no turn meets it', [turn(0, 0.5, 0), turn(5.2, 6, 1)], 'S2'],
  ])('gives a segment without words %s', (_, turns, expected) => {
    const out = assignSpeakers(timeline([word('x', 0, 0.5)], [segment(0, 1, 'x'), segment(1, 5, 'no words')]), turns);
    expect(out.segments).toEqual([
      { start: 0, end: 1, text: 'x', speaker: 'S1' },
      { start: 1, end: 5, text: 'no words', speaker: expected },
    ]);
  });
});

describe('assignSpeakers: speakers', () => {
  it('numbers speakers S1, S2, … in order of first appearance, whatever the clustering called them', () => {
    const t = timeline([word('a', 0, 1), word('b', 2, 3), word('c', 4, 5), word('d', 6, 7)], [segment(0, 7, 'a b c d')]);
    const out = assignSpeakers(t, [turn(0, 1.5, 2), turn(1.5, 3.5, 0), turn(3.5, 5.5, 1), turn(5.5, 7, 0)]);
    expect(out.words.map((w) => w.speaker)).toEqual(['S1', 'S2', 'S3', 'S2']);
    expect(out.speakers).toEqual([
      { id: 'S1', name: null },
      { id: 'S2', name: null },
      { id: 'S3', name: null },
    ]);
  });

  it('lists only speakers that meet a word or a segment', () => {
    const out = assignSpeakers(timeline([word('a', 0, 1)], [segment(0, 1, 'a')]), [turn(0, 1, 0), turn(10, 11, 1)]);
    expect(out.speakers).toEqual([{ id: 'S1', name: null }]);
  });
});
