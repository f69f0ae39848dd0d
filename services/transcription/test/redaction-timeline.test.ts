/**
 * Redaction of whole timelines: `text`, segments and words get the same substitution; a value
 * spread over several words or segments becomes one, with the first one's start and speaker,
 * the last one's end and the lowest confidence; the styles; and that nothing of a redacted
 * value survives anywhere in the result.
 */
import type { RedactionOptions, Timeline, TimelineWord } from '@murmur/contract';
import { groupWords, parsePocketsphinxWords } from '../src/engines/pocketsphinx';
import { redactTimeline } from '../src/redaction/redact-timeline';

const ALL: RedactionOptions = {
  policies: ['email_address', 'phone_number', 'credit_card_number', 'iban', 'us_social_security_number', 'ip_address', 'date_of_birth', 'uk_national_insurance_number'],
  style: 'entity_name',
};

/** pocketsphinx_continuous -time yes output (fillers, alternative pronunciations) as the engine parses it. */
function pocketsphinxTimeline(sentence: string): Timeline {
  const lines = ['<s> 0.000 0.100 0.999'];
  let t = 0.1;
  sentence.split(' ').forEach((w, i) => {
    lines.push(`${w}${i % 5 === 3 ? '(2)' : ''} ${t.toFixed(3)} ${(t + 0.3).toFixed(3)} 0.9${i % 10}`);
    t += 0.32;
    if (i % 7 === 6) lines.push(`<sil> ${t.toFixed(3)} ${(t + 0.1).toFixed(3)} 1.0`), (t += 0.1);
  });
  const parsed = parsePocketsphinxWords(`${sentence}\n${lines.join('\n')}\n`);
  const words: TimelineWord[] = parsed.map((w, i) => ({ text: w.word, start: w.start, end: w.end, confidence: 0.5 + (i % 10) / 20, speaker: null }));
  const segments = groupWords(parsed).map((s) => ({ ...s, speaker: null }));
  return { text: words.map((w) => w.text).join(' '), segments, words, speakers: [] };
}

function joinedTexts(t: Timeline): { segments: string; words: string } {
  return { segments: t.segments.map((s) => s.text).join(' '), words: t.words.map((w) => w.text).join(' ') };
}

describe('redactTimeline on pocketsphinx words', () => {
  const sentence = 'my phone number is five five five one two three four five six seven and my email is john at example dot com';
  const input = pocketsphinxTimeline(sentence);
  const before = JSON.stringify(input);
  const { timeline, found } = redactTimeline(input, ALL);

  it('replaces the spoken values in text, segments and words alike', () => {
    const expected = 'my phone number is [PHONE_NUMBER] and my email is [EMAIL_ADDRESS]';
    expect(input.segments).toHaveLength(2); // the number is cut by groupWords' 12-word limit
    expect(timeline.text).toBe(expected);
    expect(joinedTexts(timeline)).toEqual({ segments: expected, words: expected });
    expect(found).toEqual({ phone_number: 1, email_address: 1 });
  });

  it('makes one word of the words of a value: first start, last end, lowest confidence', () => {
    const phone = timeline.words[4]!;
    const spoken = input.words.slice(4, 14);
    expect(phone).toEqual({ text: '[PHONE_NUMBER]', start: spoken[0]!.start, end: spoken[9]!.end, confidence: Math.min(...spoken.map((w) => w.confidence!)), speaker: null });
    const email = timeline.words[timeline.words.length - 1]!;
    expect(email).toMatchObject({ text: '[EMAIL_ADDRESS]', start: input.words[18]!.start, end: input.words[22]!.end });
    expect(timeline.words.slice(0, 4)).toEqual(input.words.slice(0, 4));
  });

  it('merges the segments a value spans into one', () => {
    expect(timeline.segments).toEqual([{ start: input.segments[0]!.start, end: input.segments[1]!.end, text: timeline.text, speaker: null }]);
  });

  it('leaves nothing of the values anywhere, and the input unchanged', () => {
    const json = JSON.stringify(timeline);
    for (const w of ['five', 'one', 'two', 'three', 'four', 'six', 'seven', 'john', 'example', 'dot', 'com']) expect(json).not.toMatch(new RegExp(`\\b${w}\\b`));
    expect(JSON.stringify(input)).toBe(before);
  });
});

describe('redactTimeline on written words (whisper, OpenAI-compatible)', () => {
  const words: TimelineWord[] = [
    ['Call', 0.0, 0.2, 0.99, 'S1'], ['me', 0.2, 0.3, 0.98, 'S1'], ['at', 0.3, 0.4, 0.97, 'S1'], ['555-123-4567.', 0.4, 1.6, 0.81, 'S1'],
    ['Card', 2.0, 2.3, 0.95, 'S2'], ['4111', 2.3, 2.7, 0.9, 'S2'], ['1111', 2.7, 3.1, 0.62, 'S2'], ['1111', 3.1, 3.5, 0.88, 'S1'], ['1111,', 3.5, 3.9, 0.91, 'S1'],
    ['(mail:', 4.0, 4.3, null, 'S2'], ['ann@example.org).', 4.3, 5.0, null, 'S2'],
  ].map(([text, start, end, confidence, speaker]) => ({ text, start, end, confidence, speaker }) as TimelineWord);
  const input: Timeline = {
    text: ' Call me at 555-123-4567. Card 4111 1111 1111 1111, (mail: ann@example.org).',
    segments: [
      { start: 0, end: 1.6, text: ' Call me at 555-123-4567.', speaker: 'S1' },
      { start: 2.0, end: 3.1, text: ' Card 4111 1111', speaker: 'S2' },
      { start: 3.1, end: 5.0, text: ' 1111 1111, (mail: ann@example.org).', speaker: 'S1' },
    ],
    words,
    speakers: [{ id: 'S1', name: null }, { id: 'S2', name: 'Maria' }],
  };
  const { timeline, found } = redactTimeline(input, ALL);

  it('keeps the punctuation around a value and the spacing of the text', () => {
    expect(timeline.text).toBe(' Call me at [PHONE_NUMBER]. Card [CREDIT_CARD_NUMBER], (mail: [EMAIL_ADDRESS]).');
    expect(timeline.segments.map((s) => s.text)).toEqual([' Call me at [PHONE_NUMBER].', ' Card [CREDIT_CARD_NUMBER], (mail: [EMAIL_ADDRESS]).']);
    expect(timeline.words.map((w) => w.text)).toEqual(['Call', 'me', 'at', '[PHONE_NUMBER].', 'Card', '[CREDIT_CARD_NUMBER],', '(mail:', '[EMAIL_ADDRESS]).']);
    expect(found).toEqual({ phone_number: 1, credit_card_number: 1, email_address: 1 });
  });

  it("keeps a one-word value's word as it was but for its text", () => {
    expect(timeline.words[3]).toEqual({ ...words[3], text: '[PHONE_NUMBER].' });
    expect(timeline.words[7]).toEqual({ ...words[10], text: '[EMAIL_ADDRESS]).', confidence: null });
  });

  it("gives a merged word and segment the first one's speaker, even across a change of speaker", () => {
    expect(timeline.words[5]).toEqual({ text: '[CREDIT_CARD_NUMBER],', start: 2.3, end: 3.9, confidence: 0.62, speaker: 'S2' });
    expect(timeline.segments[1]).toEqual({ start: 2.0, end: 5.0, text: ' Card [CREDIT_CARD_NUMBER], (mail: [EMAIL_ADDRESS]).', speaker: 'S2' });
    expect(timeline.speakers).toEqual(input.speakers);
  });

  it('leaves no digit of the values and no part of the address', () => {
    const json = JSON.stringify(timeline);
    expect(json).not.toMatch(/[0-9]{3,}/);
    expect(json).not.toMatch(/ann|example/);
  });
});

describe('styles', () => {
  const input: Timeline = {
    text: 'call 555-123-4567 or five five five one two three four five six seven, not 555 987 6543',
    segments: [{ start: 0, end: 9, text: 'call 555-123-4567 or five five five one two three four five six seven, not 555 987 6543', speaker: null }],
    words: [],
    speakers: [],
  };

  it('entity_name names the policy', () => {
    expect(redactTimeline(input, { ...ALL, style: 'entity_name' }).timeline.text).toBe('call [PHONE_NUMBER] or [PHONE_NUMBER], not [PHONE_NUMBER]');
  });

  it('numbered_entity_name numbers distinct values alike in text and segments, spoken or written', () => {
    const { timeline } = redactTimeline(input, { ...ALL, style: 'numbered_entity_name' });
    expect(timeline.text).toBe('call [PHONE_NUMBER_1] or [PHONE_NUMBER_1], not [PHONE_NUMBER_2]');
    expect(timeline.segments[0]!.text).toBe(timeline.text);
  });

  it('mask writes one # per character of the normalised value', () => {
    const { timeline } = redactTimeline({ ...input, text: 'mail ann@example.org or call +44 20 7946 0958' }, { ...ALL, style: 'mask' });
    expect(timeline.text).toBe(`mail ${'#'.repeat(15)} or call ${'#'.repeat(13)}`);
    expect(redactTimeline(input, { ...ALL, style: 'mask' }).timeline.text).toBe('call ########## or ##########, not ##########');
  });

  it.each(['entity_name', 'numbered_entity_name', 'mask'] as const)('%s leaves no digit of the numbers', (style) => {
    expect(JSON.stringify(redactTimeline(input, { ...ALL, style }).timeline)).not.toMatch(/[0-9]{3}|five|seven/);
  });
});

describe('what redactTimeline leaves alone', () => {
  it('returns an equal timeline when nothing is found, and a copy', () => {
    const input = pocketsphinxTimeline('we met at the station at ten thirty and left at eleven fifteen');
    const { timeline, found } = redactTimeline(input, ALL);
    expect(timeline).toEqual(input);
    expect(timeline.words).not.toBe(input.words);
    expect(found).toEqual({});
  });

  it('handles a timeline without words or segments', () => {
    const { timeline, found } = redactTimeline({ text: 'SSN 123-45-6789', segments: [], words: [], speakers: [] }, ALL);
    expect(timeline).toEqual({ text: 'SSN [US_SOCIAL_SECURITY_NUMBER]', segments: [], words: [], speakers: [] });
    expect(found).toEqual({ us_social_security_number: 1 });
  });

  it('redacts only the policies asked for', () => {
    const text = 'mail ann@example.org from 10.0.0.1';
    expect(redactTimeline({ text, segments: [], words: [], speakers: [] }, { policies: ['ip_address'], style: 'entity_name' }).timeline.text).toBe('mail ann@example.org from [IP_ADDRESS]');
  });
});

describe('words cut differently from the text', () => {
  const word = (text: string, i: number): TimelineWord => ({ text, start: i, end: i + 0.5, confidence: 0.9 - i / 100, speaker: null });

  it('redacts word pieces (whisper tokens) by what the text holds, even where the pieces alone show nothing', () => {
    const pieces = ['Write', 'to', 'john', '@', 'ex', 'ample', '.', 'com', 'or', 'call', '(555)', '123', '-', '4567', '.'];
    const input: Timeline = { text: 'Write to john@example.com or call (555) 123-4567.', segments: [], words: pieces.map(word), speakers: [] };
    const { timeline, found } = redactTimeline(input, ALL);
    expect(timeline.text).toBe('Write to [EMAIL_ADDRESS] or call [PHONE_NUMBER].');
    expect(timeline.words.map((w) => w.text)).toEqual(['Write', 'to', '[EMAIL_ADDRESS]', 'or', 'call', '[PHONE_NUMBER]', '.']);
    expect(timeline.words[2]).toEqual({ text: '[EMAIL_ADDRESS]', start: 2, end: 7.5, confidence: input.words[7]!.confidence, speaker: null });
    expect(found).toEqual({ email_address: 1, phone_number: 1 });
    expect(JSON.stringify(timeline)).not.toMatch(/john|"ex"|ample|"com"|555|123|4567/);
  });

  it('finds values in the words afresh when they hold other words than the text', () => {
    const input: Timeline = {
      text: 'uh my number is five five five one two three four five six seven',
      segments: [{ start: 0, end: 9, text: 'my number is five five five one two three four five six seven', speaker: null }],
      words: 'my number is five five five one two three four five six seven'.split(' ').map(word),
      speakers: [],
    };
    const { timeline } = redactTimeline(input, ALL);
    expect(timeline.text).toBe('uh my number is [PHONE_NUMBER]');
    expect(timeline.segments[0]!.text).toBe('my number is [PHONE_NUMBER]');
    expect(timeline.words.map((w) => w.text)).toEqual(['my', 'number', 'is', '[PHONE_NUMBER]']);
  });
});

describe('any timeline', () => {
  /** A small deterministic generator (mulberry32), so a failure names its seed. */
  function random(seed: number): () => number {
    let a = seed;
    return () => {
      a = (a + 0x6d2b79f5) | 0;
      let t = Math.imul(a ^ (a >>> 15), 1 | a);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }
  const VOCABULARY = ('five five five one two three four six seven eight nine oh zero double twenty ninety hundred thousand plus at dot '
    + 'john example com g b a c born on march fifteenth nineteen my number is social 555-123-4567 4111 1111 192.168.1.1 ann@example.org '
    + 'GB82 WEST 1234 5698 7654 32 AB 12 34 56 C ( ) . , and the call').split(' ');

  it.each(Array.from({ length: 40 }, (_, seed) => [seed]))('keeps text, segments and words in step (seed %i)', (seed) => {
    const next = random(seed);
    const words: TimelineWord[] = Array.from({ length: 20 + Math.floor(next() * 60) }, (_, i) => ({
      text: VOCABULARY[Math.floor(next() * VOCABULARY.length)]!, start: i, end: i + 0.9, confidence: next() < 0.2 ? null : next(), speaker: next() < 0.5 ? 'S1' : 'S2',
    }));
    const segments: Timeline['segments'] = [];
    for (let i = 0; i < words.length; ) {
      const n = 1 + Math.floor(next() * 9);
      const part = words.slice(i, i + n);
      segments.push({ start: part[0]!.start, end: part[part.length - 1]!.end, text: part.map((w) => w.text).join(' '), speaker: part[0]!.speaker });
      i += n;
    }
    const input: Timeline = { text: words.map((w) => w.text).join(' '), segments, words, speakers: [] };
    for (const style of ['entity_name', 'numbered_entity_name', 'mask'] as const) {
      const { timeline, found } = redactTimeline(input, { ...ALL, style });
      expect(joinedTexts(timeline)).toEqual({ segments: timeline.text, words: timeline.text });
      for (const w of timeline.words) expect(w.text).toMatch(/^\S+$/);
      for (const list of [timeline.words, timeline.segments]) {
        list.forEach((x, i) => {
          expect(x.end).toBeGreaterThan(x.start);
          if (i > 0) expect(x.start).toBeGreaterThanOrEqual(list[i - 1]!.end);
        });
      }
      const redactions = (timeline.text.match(/\[[A-Z_0-9]+\]|#+/g) ?? []).length;
      expect(redactions).toBe(Object.values(found).reduce((a, b) => a + b, 0));
    }
  });
});
