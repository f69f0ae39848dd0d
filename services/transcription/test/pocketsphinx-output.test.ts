import { groupWords, parsePocketsphinxWords, type TimedWord } from '../src/engines/pocketsphinx';

/** Real `pocketsphinx_continuous -time yes` output (Debian 0.8+5prealpha) of two utterances. */
const OUTPUT = `he was not an illness those young man
<s> 0.000 0.060 0.999500
<sil> 0.070 0.200 0.694306
he 0.210 0.320 0.998701
was(2) 0.330 0.540 0.999800
not 0.550 0.970 0.998701
[SPEECH] 0.980 1.100 0.535598
an(2) 1.110 1.290 0.472940
</s> 2.800 3.090 1.000000
he might
<s> 7.870 7.970 0.999800
he 8.210 8.370 0.997303
might 8.380 8.620 0.995609
++UH++ 8.630 8.700 0.1
`;

describe('parsePocketsphinxWords', () => {
  it('keeps words with their times and posterior probabilities, drops fillers and pronunciation variants', () => {
    expect(parsePocketsphinxWords(OUTPUT)).toEqual([
      { word: 'he', start: 0.21, end: 0.32, confidence: 0.998701 },
      { word: 'was', start: 0.33, end: 0.54, confidence: 0.9998 },
      { word: 'not', start: 0.55, end: 0.97, confidence: 0.998701 },
      { word: 'an', start: 1.11, end: 1.29, confidence: 0.47294 },
      { word: 'he', start: 8.21, end: 8.37, confidence: 0.997303 },
      { word: 'might', start: 8.38, end: 8.62, confidence: 0.995609 },
    ]);
  });

  it.each([
    ['no output', ''],
    ['only hypothesis lines', 'one two three four\n'],
    ['only fillers', '<s> 0.000 0.310 1.000000\n</s> 0.320 1.020 1.000000\n'],
  ])('finds no words in %s', (_name, out) => expect(parsePocketsphinxWords(out)).toEqual([]));
});

const w = (word: string, start: number, end: number): TimedWord => ({ word, start, end, confidence: 1 });

describe('groupWords', () => {
  it.each<[string, TimedWord[], Array<[number, number, string]>]>([
    ['no words → no segments', [], []],
    ['close words → one segment', [w('a', 0, 0.2), w('b', 0.3, 0.5), w('c', 0.6, 1)], [[0, 1, 'a b c']]],
    ['a pause of more than 0.5 s starts a new segment', [w('a', 0, 0.2), w('b', 0.71, 1)], [[0, 0.2, 'a'], [0.71, 1, 'b']]],
    ['a pause of exactly 0.5 s does not', [w('a', 0, 0.2), w('b', 0.7, 1)], [[0, 1, 'a b']]],
    [
      'the 13th word starts a new segment',
      Array.from({ length: 13 }, (_, i) => w(`w${i}`, i * 0.3, i * 0.3 + 0.2)),
      [[0, 3.5, 'w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11'], [3.6, 3.8, 'w12']],
    ],
  ])('%s', (_name, words, segments) => {
    expect(groupWords(words).map((s) => [s.start, s.end, s.text])).toEqual(segments.map(([a, b, t]) => [expect.closeTo(a, 6), expect.closeTo(b, 6), t]));
  });
});
