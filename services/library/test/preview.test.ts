import { makePreview, PREVIEW_MAX_CHARS } from '../src/preview';

describe('makePreview', () => {
  const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ');

  it.each<[string, string, string]>([
    ['keeps a short transcript whole', 'Buy milk and eggs.', 'Buy milk and eggs.'],
    ['returns "" for an empty transcript', '', ''],
    ['collapses runs of whitespace and newlines', '  Hello\n\n  there\tfriend  ', 'Hello there friend'],
  ])('%s', (_name, input, expected) => {
    expect(makePreview(input)).toBe(expected);
  });

  it('cuts a long transcript on a word boundary and marks the cut', () => {
    const text = words(100);
    const preview = makePreview(text);
    expect(preview.endsWith('…')).toBe(true);
    const body = preview.slice(0, -1);
    expect(body.length).toBeLessThanOrEqual(PREVIEW_MAX_CHARS);
    expect(text.startsWith(body)).toBe(true);
    // the last word of the preview is a whole word of the transcript
    expect(text.charAt(body.length)).toBe(' ');
    expect(body.length).toBeGreaterThan(PREVIEW_MAX_CHARS - 10);
  });

  it('keeps a word that ends exactly at the limit', () => {
    const text = `${'a'.repeat(9)} ${'b'.repeat(10)} tail`; // the b-word ends at 20
    expect(makePreview(text, 20)).toBe(`${'a'.repeat(9)} ${'b'.repeat(10)}…`);
  });

  it('reads past an opening that is mostly whitespace (it flattens only the head when it can)', () => {
    const text = `${' \n'.repeat(300)}${words(60)}`;
    expect(makePreview(text)).toBe(makePreview(words(60)));
    expect(makePreview(`${' '.repeat(400)}short`)).toBe('short');
  });

  it('drops trailing punctuation before the ellipsis', () => {
    expect(makePreview('one two, three four five', 9)).toBe('one two…');
  });

  it('cuts inside one enormous word rather than returning almost nothing', () => {
    const preview = makePreview(`hi ${'x'.repeat(500)}`, 50);
    expect(preview).toBe(`hi ${'x'.repeat(47)}…`);
  });

  it('answers what flattening the whole transcript first would (the shortcut for an opening with nothing to collapse)', () => {
    // The definition, without the shortcuts makePreview takes: flatten everything, then cut.
    const reference = (text: string, max: number): string => {
      const flat = text.replace(/\s+/g, ' ').trim();
      if (flat.length <= max) return flat;
      const lastSpace = flat.lastIndexOf(' ', max);
      let cut = lastSpace >= max / 2 ? lastSpace : max;
      const code = flat.charCodeAt(cut - 1);
      if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
      while (cut > 0 && [' ', ',', ';', ':', '.', '–', '—', '-'].includes(flat[cut - 1]!)) cut -= 1;
      return `${flat.slice(0, cut)}…`;
    };
    let seed = 37; // mulberry32: the same texts on every run
    const next = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
    };
    // Half the texts with spaces only (runs of them included), half with every kind of whitespace.
    const spaced = ['a', 'word', 'x'.repeat(30), ' ', ' ', '  ', ',', '.', '—', '😀'];
    const mixed = [...spaced, '\n', '\t', '\u00a0', ' \n '];
    for (let i = 0; i < 4000; i++) {
      const pieces = i % 2 ? spaced : mixed;
      const max = 5 + Math.floor(next() * 40);
      let text = '';
      const length = Math.floor(next() * 4 * max);
      while (text.length < length) text += pieces[Math.floor(next() * pieces.length)];
      expect([text, makePreview(text, max)]).toEqual([text, reference(text, max)]);
    }
  });

  it('never splits a surrogate pair', () => {
    const preview = makePreview('😀'.repeat(300), 11);
    expect(preview).toBe(`${'😀'.repeat(5)}…`);
    expect(() => encodeURIComponent(preview)).not.toThrow();
  });
});
