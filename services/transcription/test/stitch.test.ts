import { seededRandom } from '@murmur/kit';
import { cleanText, stitchChunks, type ChunkTranscript } from '../src/stitch';

const chunk = (offset: number, duration: number, text: string, segments: Array<[number, number, string]> = []): ChunkTranscript => ({
  offset,
  duration,
  text,
  segments: segments.map(([start, end, t]) => ({ start, end, text: t })),
});

describe('stitchChunks', () => {
  it.each<[string, ChunkTranscript[], string, Array<[number, number, string]>]>([
    ['nothing → an empty transcript', [], '', []],
    ['one chunk keeps its times', [chunk(0, 10, 'hello world', [[0.5, 1.5, 'hello world']])], 'hello world', [[0.5, 1.5, 'hello world']]],
    [
      'later chunks are shifted by their offset',
      [chunk(0, 28, 'a b', [[1, 2, 'a b']]), chunk(28, 20, 'c d', [[0.5, 3, 'c d']])],
      'a b c d',
      [[1, 2, 'a b'], [28.5, 31, 'c d']],
    ],
    [
      'a segment past its chunk is clamped to the chunk',
      [chunk(0, 10, 'x', [[8, 12, 'x']]), chunk(10, 10, 'y', [[0, 1, 'y']])],
      'x y',
      [[8, 10, 'x'], [10, 11, 'y']],
    ],
    [
      'overlapping segments are pushed after the previous end',
      [chunk(0, 10, 'a b', [[1, 4, 'a'], [3, 5, 'b']])],
      'a b',
      [[1, 4, 'a'], [4, 5, 'b']],
    ],
    [
      'segments out of order are sorted; an end before its start is raised',
      [chunk(0, 10, 'a b', [[5, 6, 'b'], [1, 0.5, 'a']])],
      'a b',
      [[1, 1, 'a'], [5, 6, 'b']],
    ],
    ['empty chunks and blank segments disappear', [chunk(0, 30, '  ', [[1, 2, ' ']]), chunk(30, 5, 'z', [[1, 2, 'z']])], 'z', [[31, 32, 'z']]],
    ['text without segments spans its chunk', [chunk(30, 12.5, 'only text')], 'only text', [[30, 42.5, 'only text']]],
    ['whitespace is collapsed', [chunk(0, 5, ' a \n b ', [[0, 1, ' a \n b ']])], 'a b', [[0, 1, 'a b']]],
    ['times are rounded to milliseconds', [chunk(1 / 3, 10, 't', [[1 / 3, 2 / 3, 't']])], 't', [[0.667, 1, 't']]],
  ])('%s', (_name, chunks, text, segments) => {
    const out = stitchChunks(chunks);
    expect(out.text).toBe(text);
    expect(out.segments.map((s) => [s.start, s.end, s.text])).toEqual(segments);
  });

  it('is monotonic and non-overlapping for arbitrary engine output', () => {
    const random = seededRandom(7);
    const chunks = Array.from({ length: 50 }, (_, i) =>
      chunk(i * 30, 30, 'w', Array.from({ length: 6 }, () => [random() * 40 - 5, random() * 40 - 5, 'w'] as [number, number, string])),
    );
    let cursor = 0;
    for (const s of stitchChunks(chunks).segments) {
      expect(s.start).toBeGreaterThanOrEqual(cursor);
      expect(s.end).toBeGreaterThanOrEqual(s.start);
      cursor = s.end;
    }
    expect(cursor).toBeLessThanOrEqual(50 * 30);
  });
});

describe('cleanText', () => {
  it.each([
    ['  a  b ', 'a b'],
    ['\ta\nb\r\n', 'a b'],
    ['', ''],
  ])('%j → %j', (input, output) => expect(cleanText(input)).toBe(output));
});
