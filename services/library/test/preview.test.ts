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

  it('never splits a surrogate pair', () => {
    const preview = makePreview('😀'.repeat(300), 11);
    expect(preview).toBe(`${'😀'.repeat(5)}…`);
    expect(() => encodeURIComponent(preview)).not.toThrow();
  });
});
