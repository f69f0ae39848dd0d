/**
 * Timelines made up from a seed (kit's seededRandom), for the caption properties: words of any
 * length (non-ASCII and over-long ones too), punctuation, pauses, speaker turns, odd names, and
 * — when asked — the messes engines make: words out of order, overlapping, lasting no time or
 * far too long.
 */
import type { Timeline, TimelineSpeaker, TimelineWord } from '@murmur/contract';

export interface TimelineShape {
  words: number;
  /** How many speakers take turns; 0 for none (no diarization). */
  speakers: number;
  punctuation: boolean;
  /** Silences from 0.7 to 3 s, now and then one of 8 to 15 s. */
  pauses: boolean;
  /** Now and then a word longer than a line. */
  longWords: boolean;
  /** Out of order, overlapping, zero-length and over-long words. */
  messy: boolean;
}

const LETTERS = 'abcdefghijklmnopqrstuvwxyzéßø';
const ODD_WORDS = ['👍', 'e\u0301te\u0301', '日本語', '-->', '<i>', 'a&b', 'R&D;', '"quoted"', '—'];
const NAMES: Array<string | null> = [null, 'Maria', '<b>Tom & "Jerry"</b>', 'Dr. Ana-Lucía Fernández de la Vega', 'Li\nWei', '  ', 'a-->b'];

export function generatedTimeline(rand: () => number, shape: TimelineShape): Timeline {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)] as T;
  const between = (a: number, b: number) => a + rand() * (b - a);
  const word = (length: number) => Array.from({ length }, () => pick([...LETTERS])).join('');
  const speakers: TimelineSpeaker[] = Array.from({ length: shape.speakers }, (_, i) => ({ id: `S${i + 1}`, name: pick(NAMES) }));
  const words: TimelineWord[] = [];
  let t = between(0, 5);
  let speaker = speakers.length > 0 ? pick(speakers).id : null;
  for (let i = 0; i < shape.words; i++) {
    let text = rand() < 0.03 ? pick(ODD_WORDS) : word(1 + Math.floor(rand() ** 2 * 12));
    if (shape.longWords && rand() < 0.01) text = word(43 + Math.floor(rand() * 100));
    if (shape.punctuation) {
      const r = rand();
      text += r < 0.1 ? '.' : r < 0.14 ? '?' : r < 0.24 ? ',' : r < 0.26 ? '!' : '';
    }
    const r = rand();
    const gap = shape.pauses && r < 0.1 ? between(0.7, 3) : shape.pauses && r < 0.12 ? between(8, 15) : between(0, 0.25);
    const d = rand();
    const duration = shape.messy && d < 0.03 ? 0 : shape.messy && d < 0.05 ? between(7, 12) : between(0.08, 0.8);
    let start = t + gap;
    if (shape.messy && rand() < 0.05) start = Math.max(0, t - between(0, 1));
    if (speakers.length > 0 && rand() < 0.08) speaker = pick(speakers).id;
    words.push({ text, start, end: start + duration, confidence: rand(), speaker });
    t = Math.max(t, start + duration);
  }
  if (shape.messy) {
    for (let i = 1; i < words.length; i++) {
      if (rand() < 0.03) [words[i - 1], words[i]] = [words[i] as TimelineWord, words[i - 1] as TimelineWord];
    }
  }
  return { text: words.map((w) => w.text).join(' '), segments: [], words, speakers };
}
