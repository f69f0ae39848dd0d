/**
 * Puts diarization's turns on a transcript's timeline (pure). Each word gets the speaker whose
 * turns overlap it most (the nearest turn when none does: a word in a pause, a zero-length
 * word). A segment whose words change speaker is split there, each piece's text rebuilt from
 * its words (joined by single spaces); a segment with one speaker keeps its text. A segment
 * with no words takes the speaker who talks longest within it. Speakers are named `S1`, `S2`,
 * … in order of first appearance in the result, names null; a speaker none of whose turns
 * meets a word or segment is not listed.
 */
import { speakerIdOf, type Timeline, type TimelineSegment, type TimelineWord } from '@murmur/contract';
import type { SpeakerTurn } from './diarizer';

/** The turn speaker covering most of [start, end], else the nearest one; undefined without turns. */
function speakerOver(turns: readonly SpeakerTurn[], start: number, end: number): number | undefined {
  const overlap = new Map<number, number>();
  let nearest: { speaker: number; distance: number } | undefined;
  for (const turn of turns) {
    const shared = Math.min(end, turn.end) - Math.max(start, turn.start);
    if (shared > 0) overlap.set(turn.speaker, (overlap.get(turn.speaker) ?? 0) + shared);
    const distance = Math.max(0, turn.start - end, start - turn.end);
    if (!nearest || distance < nearest.distance) nearest = { speaker: turn.speaker, distance };
  }
  let best: { speaker: number; seconds: number } | undefined;
  for (const [speaker, seconds] of overlap) if (!best || seconds > best.seconds) best = { speaker, seconds };
  return best?.speaker ?? nearest?.speaker;
}

interface Labelled<T> {
  item: T;
  speaker: number | undefined;
}

/** The timeline with speakers from `turns` (see the module comment). */
export function assignSpeakers(t: Timeline, turns: readonly SpeakerTurn[]): Timeline {
  const sorted = [...turns].sort((a, b) => a.start - b.start || a.end - b.end);
  const words: Labelled<TimelineWord>[] = t.words.map((w) => ({ item: w, speaker: speakerOver(sorted, w.start, w.end) }));

  // Each word belongs to the first segment holding its midpoint.
  const wordsOf: Labelled<TimelineWord>[][] = t.segments.map(() => []);
  for (const w of words) {
    const mid = (w.item.start + w.item.end) / 2;
    const at = t.segments.findIndex((s) => mid >= s.start && mid <= s.end);
    if (at >= 0) wordsOf[at]!.push(w);
  }

  const segments: Labelled<TimelineSegment>[] = [];
  t.segments.forEach((segment, i) => {
    const own = wordsOf[i]!;
    if (own.length === 0) {
      segments.push({ item: segment, speaker: speakerOver(sorted, segment.start, segment.end) });
      return;
    }
    const runs: Labelled<TimelineWord>[][] = [];
    for (const w of own) {
      const last = runs[runs.length - 1];
      if (last && last[0]!.speaker === w.speaker) last.push(w);
      else runs.push([w]);
    }
    if (runs.length === 1) {
      segments.push({ item: segment, speaker: runs[0]![0]!.speaker });
      return;
    }
    runs.forEach((run, r) => {
      segments.push({
        item: {
          start: r === 0 ? segment.start : run[0]!.item.start,
          end: r === runs.length - 1 ? segment.end : run[run.length - 1]!.item.end,
          text: run.map((w) => w.item.text).join(' '),
          speaker: null,
        },
        speaker: run[0]!.speaker,
      });
    });
  });

  // Ids in order of first appearance: by start time over words and segments alike.
  const appearances = [...words, ...segments]
    .filter((x): x is Labelled<TimelineWord | TimelineSegment> & { speaker: number } => x.speaker !== undefined)
    .sort((a, b) => a.item.start - b.item.start);
  const ids = new Map<number, string>();
  for (const a of appearances) if (!ids.has(a.speaker)) ids.set(a.speaker, speakerIdOf(ids.size));
  const idOf = (speaker: number | undefined) => (speaker === undefined ? null : ids.get(speaker) ?? null);

  return {
    text: t.text,
    words: words.map((w) => ({ ...w.item, speaker: idOf(w.speaker) })),
    segments: segments.map((s) => ({ ...s.item, speaker: idOf(s.speaker) })),
    speakers: [...ids.values()].map((id) => ({ id, name: null })),
  };
}
