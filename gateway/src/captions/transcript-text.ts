/**
 * A transcript as plain text (`response_format=text`): the text itself, or — when speakers are
 * known — one line per speaker turn, `Name: …` (the speaker's name, else its id), as a meeting
 * transcript reads.
 */
import type { Timeline } from '@murmur/contract';
import { oneLine } from './caption-text';

export function transcriptText(t: Timeline): string {
  if (t.speakers.length === 0 || !t.segments.some((s) => s.speaker)) return t.text;
  const names = new Map(t.speakers.map((s) => [s.id, oneLine(s.name ?? '') || s.id]));
  const turns: Array<{ speaker: string | null; text: string }> = [];
  for (const s of t.segments) {
    const text = oneLine(s.text);
    if (!text) continue;
    const last = turns[turns.length - 1];
    if (last && last.speaker === s.speaker) last.text += ` ${text}`;
    else turns.push({ speaker: s.speaker, text });
  }
  return turns.map((turn) => (turn.speaker ? `${names.get(turn.speaker) ?? turn.speaker}: ${turn.text}` : turn.text)).join('\n');
}
