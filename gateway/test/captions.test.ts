/**
 * Captions cut from a timeline (issue 32, item 2). Every rule is checked as a property over
 * seeded generated timelines (a failure names its seed), then table cases show each rule on a
 * small input a reader can follow. The files are read back by a strict SRT reader and the W3C
 * WebVTT validator (support/caption-parsers.ts).
 */
import type { Timeline, TimelineWord } from '@murmur/contract';
import { seededRandom } from '@murmur/kit';
import {
  CAPTION_RULES,
  captionCues,
  timelineFromSegments,
  toSrtFromTimeline,
  toVttFromTimeline,
  type CaptionRules,
  type Cue,
} from '../src/captions/captions';
import { breakCosts } from '../src/captions/caption-breaks';
import { captionTokens } from '../src/captions/caption-tokens';
import { readSrt, readVtt } from './support/caption-parsers';
import { generatedTimeline, type TimelineShape } from './support/generated-timelines';

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const chars = (s: string): number => [...graphemes.segment(s)].length;
const oneLine = (s: string): string => s.replace(/\s+/g, ' ').trim();
const ms = (seconds: number): number => Math.round(seconds * 1000);

/** The name a speaker goes by in captions, and its `Name: ` label (the name cut to 19 characters). */
function nameOf(t: Timeline, id: string): string {
  return oneLine(t.speakers.find((s) => s.id === id)?.name ?? '') || id;
}
function labelOf(t: Timeline, id: string | null, rules: CaptionRules): string {
  if (id === null) return '';
  const name = nameOf(t, id);
  const room = Math.floor(rules.maxLineChars / 2) - 2;
  return `${chars(name) <= room ? name : `${[...graphemes.segment(name)].slice(0, room - 1).map((g) => g.segment).join('')}…`}: `;
}

/** The words captions are cut from, as the rules read them: one line each, in time order. */
function wordsOf(t: Timeline): TimelineWord[] {
  return t.words
    .map((w) => ({ ...w, text: oneLine(w.text), start: Math.max(0, w.start), end: Math.max(0, w.start, w.end) }))
    .filter((w) => w.text !== '')
    .sort((a, b) => a.start - b.start);
}

/**
 * Every rule, checked on the cues of `t`: what breaks one is returned as a sentence. `timed`:
 * the words are in order and do not overlap, so cue times can be held to the words' times.
 */
function ruleBreaches(t: Timeline, cues: Cue[], rules: CaptionRules, timed: boolean): string[] {
  const out: string[] = [];
  cues.forEach((c, i) => {
    const next = cues[i + 1];
    const at = { toString: () => `cue ${i} ${JSON.stringify(c)}` }; // written out only for a breach
    const label = labelOf(t, c.speaker, rules);
    if (c.lines.length < 1 || c.lines.length > rules.maxLines) out.push(`${at}: ${c.lines.length} lines`);
    c.lines.forEach((line, l) => {
      if (line === '' || line !== line.trim() || /\s\s|\n/.test(line)) out.push(`${at}: line ${l} is not one trimmed line`);
      if (chars(line) + (l === 0 ? chars(label) : 0) > rules.maxLineChars) out.push(`${at}: line ${l} is longer than ${rules.maxLineChars} with label "${label}"`);
    });
    if (c.lines.length > 1 && chars(label) + chars(c.lines.join(' ')) <= rules.maxLineChars) out.push(`${at}: fits on one line`);
    if (ms(c.start) !== c.start * 1000 && Math.abs(ms(c.start) - c.start * 1000) > 1e-6) out.push(`${at}: start not in whole ms`);
    if (Math.abs(ms(c.end) - c.end * 1000) > 1e-6) out.push(`${at}: end not in whole ms`);
    if (!(c.end > c.start)) out.push(`${at}: does not end after it starts`);
    if (c.end - c.start > rules.maxSeconds + 1e-9) out.push(`${at}: longer than ${rules.maxSeconds} s`);
    if (c.end - c.start < rules.minSeconds - 1e-9 && c.end !== next?.start) out.push(`${at}: shorter than ${rules.minSeconds} s with room after it`);
    if (next && !(next.start > c.start)) out.push(`${at}: the next cue does not start later`);
    if (next && c.end > next.start) out.push(`${at}: overlaps the next cue`);
  });

  // Each word, in order, in the cue(s) that show it: a word is split over cues only when longer
  // than a line, a cue holds one speaker's words, and a speaker change starts a new cue.
  const words = wordsOf(t);
  const cuesOf: number[][] = words.map(() => []);
  const opensWord = cues.map(() => -1); // the word a cue's first token starts, if it starts one
  const closesWord = cues.map(() => -1); // the word a cue's last token ends, if it ends one
  let w = 0;
  let partial = '';
  cues.forEach((c, i) => {
    c.lines.flatMap((l) => l.split(' ')).forEach((token, k, tokens) => {
      const word = words[w];
      if (!word) return void out.push(`cue ${i}: "${token}" is no word of the timeline`);
      if (k === 0 && partial === '') opensWord[i] = w;
      partial += token;
      if (!word.text.startsWith(partial)) return void out.push(`cue ${i}: "${partial}" where word ${w} is "${word.text}"`);
      if (!cuesOf[w]!.includes(i)) cuesOf[w]!.push(i);
      if (partial === word.text) {
        if (k === tokens.length - 1) closesWord[i] = w;
        w++;
        partial = '';
      }
    });
  });
  if (w !== words.length) out.push(`only ${w} of ${words.length} words shown`);
  words.forEach((word, k) => {
    const shownIn = cuesOf[k] ?? [];
    for (const i of shownIn) if (cues[i]!.speaker !== (word.speaker || null)) out.push(`word ${k} of ${word.speaker} in cue ${i} of ${cues[i]!.speaker}`);
    if (shownIn.length > 1 && chars(word.text) <= rules.maxLineChars - chars(labelOf(t, word.speaker, rules))) out.push(`word ${k} "${word.text}" split over cues ${shownIn}`);
    const after = words[k + 1];
    if (after && (after.speaker || null) !== (word.speaker || null) && shownIn.length > 0 && cuesOf[k + 1]?.[0] === shownIn[shownIn.length - 1]) out.push(`words ${k} and ${k + 1} of two speakers share a cue`);
  });
  // Times, when the words' own are sound: a cue starts when its first word does (1 ms after the
  // cue before when both would start together) and shows its last word to that word's end,
  // unless the next cue or the longest duration stops it first.
  if (timed) {
    cues.forEach((c, i) => {
      const first = words[opensWord[i]!];
      const prev = cues[i - 1];
      if (first && ms(c.start) !== Math.max(ms(first.start), prev ? ms(prev.start) + 1 : 0)) out.push(`cue ${i} starts at ${c.start}, its first word at ${first.start}`);
      const last = words[closesWord[i]!];
      const next = cues[i + 1];
      if (last && ms(c.end) < Math.min(ms(last.end), next ? ms(next.start) : Infinity, ms(c.start) + ms(rules.maxSeconds))) out.push(`cue ${i} ends at ${c.end}, its last word at ${last.end}`);
    });
  }
  return out;
}

/** The cues as SRT and VTT files read them back: same times, same lines, the speaker's name. */
function renderingBreaches(t: Timeline, cues: Cue[], rules: CaptionRules): string[] {
  const out: string[] = [];
  const srt = readSrt(toSrtFromTimeline(t, rules));
  const vtt = readVtt(toVttFromTimeline(t, rules));
  if (srt.length !== cues.length || vtt.length !== cues.length) return [`${cues.length} cues, SRT ${srt.length}, VTT ${vtt.length}`];
  cues.forEach((c, i) => {
    const s = srt[i]!;
    const v = vtt[i]!;
    const label = labelOf(t, c.speaker, rules);
    const srtLines = [label + c.lines[0], ...c.lines.slice(1)].map((l) => l.replace(/-->/g, '->'));
    if (ms(s.start) !== ms(c.start) || ms(s.end) !== ms(c.end)) out.push(`SRT cue ${i} times ${s.start}–${s.end} for ${c.start}–${c.end}`);
    if (JSON.stringify(s.lines) !== JSON.stringify(srtLines)) out.push(`SRT cue ${i} lines ${JSON.stringify(s.lines)} for ${JSON.stringify(srtLines)}`);
    if (ms(v.start) !== ms(c.start) || ms(v.end) !== ms(c.end)) out.push(`VTT cue ${i} times ${v.start}–${v.end} for ${c.start}–${c.end}`);
    if (JSON.stringify(v.lines) !== JSON.stringify(c.lines)) out.push(`VTT cue ${i} lines ${JSON.stringify(v.lines)} for ${JSON.stringify(c.lines)}`);
    const voice = c.speaker === null ? null : nameOf(t, c.speaker);
    if (v.voice !== voice) out.push(`VTT cue ${i} voice ${JSON.stringify(v.voice)} for ${JSON.stringify(voice)}`);
  });
  return out;
}

const SHAPES: Array<[string, Omit<TimelineShape, 'words'>]> = [
  ['plain words, one voice', { speakers: 0, punctuation: false, pauses: false, longWords: false, messy: false }],
  ['sentences, pauses and over-long words', { speakers: 0, punctuation: true, pauses: true, longWords: true, messy: false }],
  ['three named speakers taking turns', { speakers: 3, punctuation: true, pauses: true, longWords: true, messy: false }],
];

describe('captions cut from words: every rule as a property over generated timelines', () => {
  it.each(SHAPES)('%s: lines, cue durations, order, words and speakers keep the rules (150 seeds)', (_, shape) => {
    for (let seed = 1; seed <= 150; seed++) {
      const rand = seededRandom(seed);
      const t = generatedTimeline(rand, { ...shape, words: Math.floor(rand() * 300) });
      const cues = captionCues(t);
      expect({ seed, breaches: ruleBreaches(t, cues, CAPTION_RULES, true) }).toEqual({ seed, breaches: [] });
      expect({ seed, breaches: renderingBreaches(t, cues, CAPTION_RULES) }).toEqual({ seed, breaches: [] });
    }
  });

  it('keeps the rules on messy engine output: words out of order, overlapping, of no or of 12 s length (150 seeds)', () => {
    for (let seed = 1; seed <= 150; seed++) {
      const rand = seededRandom(seed);
      const t = generatedTimeline(rand, { words: Math.floor(rand() * 300), speakers: 2, punctuation: true, pauses: true, longWords: true, messy: true });
      const cues = captionCues(t);
      expect({ seed, breaches: [...ruleBreaches(t, cues, CAPTION_RULES, false), ...renderingBreaches(t, cues, CAPTION_RULES)] }).toEqual({ seed, breaches: [] });
    }
  });

  it.each<[string, Partial<CaptionRules>]>([
    ['32 characters, 3 lines, 0.5–4 s', { maxLineChars: 32, maxLines: 3, minSeconds: 0.5, maxSeconds: 4 }],
    ['12 characters, 1 line, no minimum, 2 s', { maxLineChars: 12, maxLines: 1, minSeconds: 0, maxSeconds: 2 }],
  ])('keeps rules given as options: %s (100 seeds)', (_, options) => {
    const rules = { ...CAPTION_RULES, ...options };
    for (let seed = 1; seed <= 100; seed++) {
      const rand = seededRandom(seed);
      const t = generatedTimeline(rand, { words: Math.floor(rand() * 200), speakers: 2, punctuation: true, pauses: true, longWords: true, messy: false });
      const cues = captionCues(t, options);
      expect({ seed, breaches: [...ruleBreaches(t, cues, rules, true), ...renderingBreaches(t, cues, rules)] }).toEqual({ seed, breaches: [] });
    }
  });

  it('balances two lines: with no punctuation or pause to prefer, no other break is more even (200 seeds)', () => {
    let twoLineCues = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const rand = seededRandom(seed);
      const t = generatedTimeline(rand, { words: 100, speakers: 0, punctuation: false, pauses: false, longWords: false, messy: false });
      for (const c of captionCues(t)) {
        if (c.lines.length !== 2 || /[.,;:!?…—–]/.test(c.lines.join(' '))) continue;
        twoLineCues++;
        const words = c.lines.join(' ').split(' ');
        const diffs = words.slice(1).map((_, k) => [chars(words.slice(0, k + 1).join(' ')), chars(words.slice(k + 1).join(' '))] as const);
        const fitting = diffs.filter(([a, b]) => a <= 42 && b <= 42).map(([a, b]) => Math.abs(a - b));
        expect({ seed, lines: c.lines, diff: Math.abs(chars(c.lines[0]!) - chars(c.lines[1]!)) }).toEqual({ seed, lines: c.lines, diff: Math.min(...fitting) });
        if (chars(c.lines[0]!) !== chars(c.lines[1]!)) expect({ seed, lines: c.lines, topShorter: chars(c.lines[0]!) < chars(c.lines[1]!) || fitting.filter((d) => d === Math.min(...fitting)).length === 1 }).toEqual({ seed, lines: c.lines, topShorter: true });
      }
    }
    expect(twoLineCues).toBeGreaterThan(1000);
  });

  it('cuts 20,000 words (a two-hour recording) within the rules', () => {
    const rand = seededRandom(32);
    const t = generatedTimeline(rand, { words: 20_000, speakers: 4, punctuation: true, pauses: true, longWords: true, messy: false });
    const cues = captionCues(t);
    expect(ruleBreaches(t, cues, CAPTION_RULES, true)).toEqual([]);
    expect(renderingBreaches(t, cues, CAPTION_RULES)).toEqual([]);
    expect(cues.length).toBeGreaterThan(2_000);
  });
});

/** Words said one after another from `at`, each `step` seconds long, with `gaps[k]` s of silence after word k. */
function said(text: string, { at = 0, step = 0.3, gaps = {} as Record<number, number>, speaker = null as string | null } = {}): TimelineWord[] {
  let t = at;
  return text.split(' ').map((w, k) => {
    const word = { text: w, start: t, end: t + step, confidence: 0.9, speaker };
    t += step + (gaps[k] ?? 0);
    return word;
  });
}
function timeline(words: TimelineWord[], speakers: Timeline['speakers'] = []): Timeline {
  return { text: words.map((w) => w.text).join(' '), segments: [], words, speakers };
}
const texts = (cues: Cue[]) => cues.map((c) => c.lines);

describe('captions cut from words: the rules one by one', () => {
  it('fills a line up to exactly 42 characters and starts a second line at 43', () => {
    const fortyTwo = 'aaaaaaaaa bbbbbbbbb ccccccccc ddddddddd ee'; // 42
    expect(texts(captionCues(timeline(said(fortyTwo))))).toEqual([[fortyTwo]]);
    expect(texts(captionCues(timeline(said(`${fortyTwo}e`))))).toEqual([['aaaaaaaaa bbbbbbbbb', 'ccccccccc ddddddddd eee']]);
  });

  it('puts at most two lines in a cue and starts a new cue for a third', () => {
    const words = 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen';
    const cues = captionCues(timeline(said(words, { step: 0.2 })));
    expect(cues.length).toBe(2);
    expect(cues.every((c) => c.lines.length <= 2 && c.lines.every((l) => l.length <= 42))).toBe(true);
    expect(cues.flatMap((c) => c.lines).join(' ')).toBe(words);
  });

  it('lasts at most 7 s: slow speech is cut though the lines have room', () => {
    const cues = captionCues(timeline(said('so we will now talk slowly about it', { step: 1.5 })));
    expect(cues.map((c) => [c.start, c.end, c.lines.join(' ')])).toEqual([
      [0, 6, 'so we will now'],
      [6, 12, 'talk slowly about it'],
    ]);
  });

  it('holds a short cue for 1 s, but only until the next cue starts', () => {
    const alone = captionCues(timeline(said('Hi.', { at: 2, step: 0.2 })));
    expect(alone.map((c) => [c.start, c.end])).toEqual([[2, 3]]);
    const words = [...said('Hi.', { at: 2, step: 0.2, speaker: 'S1' }), ...said('Hello!', { at: 2.5, step: 0.2, speaker: 'S2' })];
    expect(captionCues(timeline(words)).map((c) => [c.start, c.end, c.speaker])).toEqual([
      [2, 2.5, 'S1'],
      [2.5, 3.5, 'S2'],
    ]);
  });

  it('shows a single word lasting 12 s for 7 s', () => {
    const cues = captionCues(timeline([{ text: 'ummmm', start: 1, end: 13, confidence: null, speaker: null }]));
    expect(cues).toEqual([{ start: 1, end: 8, lines: ['ummmm'], speaker: null }]);
  });

  it('hard-breaks a word longer than a line into pieces with their share of its time', () => {
    const long = 'x'.repeat(50);
    const cues = captionCues(timeline([{ text: long, start: 0, end: 10, confidence: 1, speaker: null }]));
    expect(cues.flatMap((c) => c.lines).join('')).toBe(long);
    expect(cues.flatMap((c) => c.lines).every((l) => l.length <= 42)).toBe(true);
    // 42 + 8 characters over 10 s: 0–8.4 s, shown for the longest 7 s, and 8.4–10 s.
    expect(cues).toEqual([
      { start: 0, end: 7, lines: ['x'.repeat(42)], speaker: null },
      { start: 8.4, end: 10, lines: ['x'.repeat(8)], speaker: null },
    ]);
  });

  it('never shows two speakers in one cue, however short their turns', () => {
    const words = [...said('yes', { speaker: 'S1' }), ...said('no', { at: 0.3, speaker: 'S2' }), ...said('maybe so', { at: 0.6, speaker: 'S1' })];
    expect(captionCues(timeline(words)).map((c) => [c.speaker, c.lines.join(' ')])).toEqual([
      ['S1', 'yes'],
      ['S2', 'no'],
      ['S1', 'maybe so'],
    ]);
  });

  it('ends a cue after a sentence rather than mid-sentence, when a cut is needed', () => {
    const text = 'We shipped the new release on Monday. Then the support queue filled up with questions about the export button';
    expect(texts(captionCues(timeline(said(text, { step: 0.25 }))))).toEqual([
      ['We shipped the new release on Monday.'],
      ['Then the support queue filled up with', 'questions about the export button'],
    ]);
  });

  it('ends a cue at a pause rather than elsewhere, when a cut is needed', () => {
    const text = 'we shipped the new release on monday and then the support queue filled up with questions about the export';
    const cues = captionCues(timeline(said(text, { step: 0.25, gaps: { 8: 0.9 } })));
    expect(cues[0]?.lines.join(' ')).toBe('we shipped the new release on monday and then');
  });

  it('ends a cue at a long silence even when the words after it would fit', () => {
    expect(texts(captionCues(timeline(said('Yes. I agree.', { gaps: { 0: 3 } }))))).toEqual([['Yes.'], ['I agree.']]);
    expect(texts(captionCues(timeline(said('Yes. I agree.', { gaps: { 0: 0.2 } }))))).toEqual([['Yes. I agree.']]);
  });

  it('breaks a line after a comma when that costs little balance', () => {
    const plain = 'When the numbers are in we will decide what to do next week';
    expect(texts(captionCues(timeline(said(plain, { step: 0.2 }))))).toEqual([['When the numbers are in we will', 'decide what to do next week']]);
    const comma = 'When the numbers are in, we will decide what to do next week';
    expect(texts(captionCues(timeline(said(comma, { step: 0.2 }))))).toEqual([['When the numbers are in,', 'we will decide what to do next week']]);
    const far = 'Well, when the numbers are in we will decide what to do next week';
    expect(texts(captionCues(timeline(said(far, { step: 0.2 }))))).toEqual([['Well, when the numbers are in we', 'will decide what to do next week']]);
  });

  it('rates the place after a sentence, a pause or a segment best, a comma next, a plain word worse, inside a word worst', () => {
    const t: Timeline = {
      ...timeline([]),
      segments: [{ start: 0, end: 1, text: 'end of segment', speaker: null }],
      words: [...said('Done. next, plain pause', { step: 0.2 }), { text: 'x'.repeat(50), start: 2, end: 3, confidence: null, speaker: null }, ...said('end', { at: 3 })],
    };
    const tokens = captionTokens(t, () => 42);
    const costs = breakCosts(tokens);
    const after = (text: string) => costs.cueEnd[tokens.findIndex((tk) => tk.text === text)];
    expect([after('Done.'), after('next,'), after('plain'), after('pause'), after('x'.repeat(42))]).toEqual([0, 0.4, 2, 0, 3]);
    const fromSegments = captionTokens({ ...t, words: [] }, () => 42);
    expect(Array.from(breakCosts(fromSegments).cueEnd)).toEqual([2, 2, 0]);
  });

  it('counts characters as a reader sees them: accents, emoji and CJK', () => {
    const text = `${'e\u0301'.repeat(20)} ${'👍'.repeat(21)}`; // 42 characters on screen
    expect(texts(captionCues(timeline(said(text))))).toEqual([[text]]);
  });

  it('makes nothing of a timeline with no words and no segments', () => {
    const empty = timeline([]);
    expect(captionCues(empty)).toEqual([]);
    expect(toSrtFromTimeline(empty)).toBe('');
    expect(toVttFromTimeline(empty)).toBe('WEBVTT\n');
  });

  it.each<[string, Partial<CaptionRules>]>([
    ['a line under 8 characters', { maxLineChars: 7 }],
    ['no lines', { maxLines: 0 }],
    ['a minimum over the maximum', { minSeconds: 8 }],
    ['a fractional line length', { maxLineChars: 40.5 }],
  ])('refuses options that make no sense: %s', (_, options) => {
    expect(() => captionCues(timeline(said('hello')), options)).toThrow(RangeError);
  });
});

describe('captions: speakers by name in SRT and WebVTT', () => {
  const words = [...said('Shall we start?', { speaker: 'S1' }), ...said('Yes, go ahead.', { at: 2, speaker: 'S2' })];

  it('prefixes each cue with the name, or the id of a speaker without one', () => {
    const t = timeline(words, [
      { id: 'S1', name: 'Maria' },
      { id: 'S2', name: null },
    ]);
    expect(toSrtFromTimeline(t)).toBe('1\n00:00:00,000 --> 00:00:01,000\nMaria: Shall we start?\n\n2\n00:00:02,000 --> 00:00:03,000\nS2: Yes, go ahead.\n');
    expect(toVttFromTimeline(t)).toBe('WEBVTT\n\n00:00:00.000 --> 00:00:01.000\n<v Maria>Shall we start?</v>\n\n00:00:02.000 --> 00:00:03.000\n<v S2>Yes, go ahead.</v>\n');
  });

  it('escapes <, > and & in names and text for WebVTT, and keeps "-->" out of both files', () => {
    const t = timeline([...said('a <b> & --> c', { speaker: 'S1' })], [{ id: 'S1', name: '<i>Tom & Jerry</i>' }]);
    const vtt = toVttFromTimeline(t);
    expect(vtt).toBe('WEBVTT\n\n00:00:00.000 --> 00:00:01.500\n<v &lt;i&gt;Tom &amp; Jerry&lt;/i&gt;>a &lt;b&gt; &amp; --&gt; c</v>\n');
    expect(readVtt(vtt)).toEqual([{ start: 0, end: 1.5, lines: ['a <b> & --> c'], voice: '<i>Tom & Jerry</i>' }]);
    const srt = toSrtFromTimeline(t);
    expect(srt).toBe('1\n00:00:00,000 --> 00:00:01,500\n<i>Tom & Jerry</i>: a <b> & -> c\n');
    expect(readSrt(srt)).toHaveLength(1);
  });

  it('shortens a long name in the SRT label to keep room for words; WebVTT keeps it whole', () => {
    const name = 'Dr. Ana-Lucía Fernández de la Vega';
    const t = timeline(said('Good morning everyone and welcome to the quarterly review', { speaker: 'S1' }), [{ id: 'S1', name }]);
    const [cue] = readSrt(toSrtFromTimeline(t));
    expect(cue?.lines[0]).toMatch(/^Dr\. Ana-Lucía Fern…: /);
    expect(cue?.lines.every((l) => chars(l) <= 42)).toBe(true);
    expect(readVtt(toVttFromTimeline(t))[0]?.voice).toBe(name);
  });

  it('writes a name with line breaks on one line', () => {
    const t = timeline(said('hello', { speaker: 'S1' }), [{ id: 'S1', name: 'Li\n\nWei ' }]);
    expect(toSrtFromTimeline(t)).toBe('1\n00:00:00,000 --> 00:00:01,000\nLi Wei: hello\n');
    expect(toVttFromTimeline(t)).toBe('WEBVTT\n\n00:00:00.000 --> 00:00:01.000\n<v Li Wei>hello</v>\n');
  });

  it('writes hours past 99 and milliseconds exactly', () => {
    const t = timeline(said('late', { at: 360_000.0425, step: 1.5 }));
    expect(toSrtFromTimeline(t)).toBe('1\n100:00:00,043 --> 100:00:01,543\nlate\n');
    expect(readVtt(toVttFromTimeline(t))).toEqual([{ start: 360_000.043, end: 360_001.543, lines: ['late'], voice: null }]);
  });
});

describe('captions from segments, for engines without word times', () => {
  it('splits a long segment by characters, with times shared out, under the same rules', () => {
    const text = 'This segment is far too long for a single caption, so it has to be cut into several cues of two lines each, and each of them gets a share of the time.';
    const t = timelineFromSegments([{ start: 10, end: 22, text }]);
    const cues = captionCues(t);
    expect(cues.length).toBeGreaterThan(1);
    expect(cues.flatMap((c) => c.lines).join(' ')).toBe(text);
    expect(cues[0]?.start).toBe(10);
    expect(cues[cues.length - 1]?.end).toBe(22);
    for (const [a, b] of cues.slice(0, -1).map((c, i) => [c, cues[i + 1]!] as const)) expect(a.end).toBeLessThanOrEqual(b.start);
    expect(cues[0]?.lines.join(' ')).toBe('This segment is far too long for a single caption,');
    expect(readSrt(toSrtFromTimeline(t))).toHaveLength(cues.length);
    expect(readVtt(toVttFromTimeline(t))).toHaveLength(cues.length);
  });

  it('keeps short segments apart at their silence and merges none across a speaker change', () => {
    const t: Timeline = {
      text: '',
      words: [],
      speakers: [{ id: 'S1', name: 'Ana' }],
      segments: [
        { start: 0, end: 1.2, text: 'Good morning.', speaker: 'S1' },
        { start: 1.2, end: 2, text: 'Hi Ana.', speaker: null },
        { start: 5, end: 6.5, text: '  ', speaker: null },
        { start: 7, end: 9, text: 'Shall\nwe   begin?', speaker: null },
      ],
    };
    expect(captionCues(t).map((c) => [c.start, c.end, c.lines, c.speaker])).toEqual([
      [0, 1.2, ['Good morning.'], 'S1'],
      [1.2, 2.2, ['Hi Ana.'], null],
      [7, 9, ['Shall we begin?'], null],
    ]);
    expect(toSrtFromTimeline(t)).toBe('1\n00:00:00,000 --> 00:00:01,200\nAna: Good morning.\n\n2\n00:00:01,200 --> 00:00:02,200\nHi Ana.\n\n3\n00:00:07,000 --> 00:00:09,000\nShall we begin?\n');
  });

  it('keeps the rules over generated segments (100 seeds)', () => {
    for (let seed = 1; seed <= 100; seed++) {
      const rand = seededRandom(seed);
      const source = generatedTimeline(rand, { words: Math.floor(rand() * 300), speakers: 2, punctuation: true, pauses: true, longWords: true, messy: false });
      const segments: Timeline['segments'] = [];
      for (let i = 0; i < source.words.length; ) {
        const most = 1 + Math.floor(rand() * 40);
        const run = [source.words[i]!];
        while (run.length < most && source.words[i + run.length]?.speaker === run[0]!.speaker) run.push(source.words[i + run.length]!);
        segments.push({ start: run[0]!.start, end: run[run.length - 1]!.end, text: run.map((w) => w.text).join(' '), speaker: run[0]!.speaker });
        i += run.length;
      }
      const t: Timeline = { ...source, words: [], segments };
      const cues = captionCues(t);
      // The segments' words, with times inside their segment, must keep every rule words do.
      const asWords = timeline(
        segments.flatMap((s) => s.text.split(' ').map((text) => ({ text, start: s.start, end: s.end, confidence: null, speaker: s.speaker }))),
        t.speakers,
      );
      expect({ seed, breaches: [...ruleBreaches(asWords, cues, CAPTION_RULES, false), ...renderingBreaches(t, cues, CAPTION_RULES)] }).toEqual({ seed, breaches: [] });
      for (const c of cues) {
        const home = segments.find((s) => ms(s.start) <= ms(c.start) && ms(c.start) <= ms(s.end));
        expect({ seed, cue: c, inSegment: home !== undefined }).toEqual({ seed, cue: c, inSegment: true });
      }
    }
  });

  it('cuts segments without words into cues too, escaping what VTT would read as markup', () => {
    const segments = [
      { start: 0, end: 2.5, text: 'Hello there.' },
      { start: 2.5, end: 20, text: 'A long one <b> & more, which goes on well past what a single caption may hold on screen.' },
    ];
    expect(readSrt(toSrtFromTimeline(timelineFromSegments(segments))).length).toBeGreaterThan(2);
    expect(toVttFromTimeline(timelineFromSegments(segments))).toContain('&lt;b&gt; &amp; more');
  });
});
