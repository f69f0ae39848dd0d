import { normalizeWords, wordErrorRate } from '../src/wer';

describe('normalizeWords', () => {
  it.each<[string, string[]]>([
    ['The Quick, brown FOX!', ['the', 'quick', 'brown', 'fox']],
    ["please call at nine o'clock", ['please', 'call', 'at', 'nine', "o'clock"]],
    ['‘quoted’ words', ['quoted', 'words']],
    ['call 555 1234', ['call', 'five', 'five', 'five', 'one', 'two', 'three', 'four']],
    ['  ', []],
  ])('%j', (text, words) => expect(normalizeWords(text)).toEqual(words));
});

describe('wordErrorRate', () => {
  it.each<[string, string, string, number, [number, number, number]]>([
    ['identical', 'the cat sat', 'the cat sat', 0, [0, 0, 0]],
    ['identical after normalisation', 'The cat, sat.', 'the cat sat', 0, [0, 0, 0]],
    ['one substitution', 'the cat sat', 'the dog sat', 1 / 3, [1, 0, 0]],
    ['one deletion', 'the cat sat', 'the sat', 1 / 3, [0, 1, 0]],
    ['one insertion', 'the cat sat', 'the fat cat sat', 1 / 3, [0, 0, 1]],
    ['everything wrong', 'a b', 'c d e f', 2, [2, 0, 2]],
    ['empty hypothesis', 'a b c d', '', 1, [0, 4, 0]],
    ['empty reference, empty hypothesis', '', '', 0, [0, 0, 0]],
    ['empty reference, some words', '', 'x', 1, [0, 0, 1]],
    ['digits match spelled words', 'five five five', '555', 0, [0, 0, 0]],
  ])('%s', (_name, ref, hyp, wer, [s, d, i]) => {
    const r = wordErrorRate(ref, hyp);
    expect(r.wer).toBeCloseTo(wer, 6);
    expect([r.substitutions, r.deletions, r.insertions]).toEqual([s, d, i]);
  });
});
