/**
 * Words from engines' raw output: whisper.cpp's token pieces joined into words (its token mode
 * gives " Hel", "lo", ","), and words grouped into segments. Pure.
 */
import { segmentsFromWords, wordsFromPieces } from '../src/engines/words';

describe('wordsFromPieces', () => {
  it('joins pieces into words at leading spaces, keeps punctuation on the word before, drops special tokens', () => {
    const words = wordsFromPieces([
      { text: '[_BEG_]', start: 0, end: 0 },
      { text: ' Hel', start: 0.1, end: 0.3 },
      { text: 'lo', start: 0.3, end: 0.5 },
      { text: ',', start: 0.5, end: 0.52 },
      { text: ' Mar', start: 0.7, end: 0.9 },
      { text: 'ia', start: 0.9, end: 1.1 },
      { text: ' .', start: 1.1, end: 1.12 },
      { text: '<|endoftext|>', start: 1.2, end: 1.2 },
      { text: '   ', start: 1.2, end: 1.3 },
    ]);
    expect(words).toEqual([
      { text: 'Hello,', start: 0.1, end: 0.52, confidence: null },
      { text: 'Maria.', start: 0.7, end: 1.12, confidence: null },
    ]);
  });

  it('starts with a word even when the first piece has no space, and never lets a word end before it starts', () => {
    expect(wordsFromPieces([{ text: 'Okay', start: 2, end: 1.5 }])).toEqual([{ text: 'Okay', start: 2, end: 2, confidence: null }]);
  });
});

describe('segmentsFromWords', () => {
  const w = (text: string, start: number) => ({ text, start, end: start + 0.3 });
  it('cuts after a sentence, at a pause over half a second, and every 12 words', () => {
    const words = [w('Hello.', 0), w('How', 0.4), w('are', 0.8), w('you', 1.2), w('today', 2.5), ...Array.from({ length: 14 }, (_, i) => w(`w${i}`, 3 + i * 0.35))];
    expect(segmentsFromWords(words).map((s) => s.text)).toEqual([
      'Hello.',
      'How are you',
      'today w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 w10',
      'w11 w12 w13',
    ]);
  });
});
