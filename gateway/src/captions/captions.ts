/**
 * Captions cut from a transcript's timeline (issue 32, item 2): SRT and WebVTT cues cut on word
 * boundaries by the usual broadcast rules (`caption-rules.ts`), with the speaker's name when
 * speakers are known. An engine without word times still gets valid captions, cut from its
 * segments. Pure; the rules are tested as properties over generated timelines.
 */
import type { Timeline } from '@murmur/contract';
import { cutCues, type Cue } from './caption-cutter';
import { escapeVtt, srtFile, srtSafe, vttFile } from './caption-files';
import { CAPTION_LABEL_SHARE, captionRulesOf, type CaptionRules } from './caption-rules';
import { charCount, oneLine, shorten } from './caption-text';
import { captionTokens } from './caption-tokens';

export type { Cue } from './caption-cutter';
export { CAPTION_PAUSE_SECONDS, CAPTION_RULES, type CaptionRules } from './caption-rules';

/**
 * The cues of a timeline, in time order and never overlapping: from its words, or from its
 * segments when it has no words. `speaker` is the speaker id of the cue's words.
 */
export function captionCues(t: Timeline, options?: Partial<CaptionRules>): Cue[] {
  const rules = captionRulesOf(options);
  const labels = speakerLabels(t, rules);
  const labelOf = (speaker: string | null): number => (speaker === null ? 0 : labels.of(speaker).chars);
  return cutCues(captionTokens(t, (speaker) => rules.maxLineChars - labelOf(speaker)), rules, labelOf);
}

/** SubRip captions; a cue with a speaker starts `Name: ` on its first line. */
export function toSrtFromTimeline(t: Timeline, options?: Partial<CaptionRules>): string {
  const labels = speakerLabels(t, captionRulesOf(options));
  return srtFile(
    captionCues(t, options).map((c) => {
      const lines = c.speaker === null ? c.lines : [labels.of(c.speaker).label + c.lines[0], ...c.lines.slice(1)];
      return { start: c.start, end: c.end, text: lines.map(srtSafe).join('\n') };
    }),
  );
}

/** WebVTT captions; a cue with a speaker is one voice span, `<v Name>…</v>`. */
export function toVttFromTimeline(t: Timeline, options?: Partial<CaptionRules>): string {
  const labels = speakerLabels(t, captionRulesOf(options));
  return vttFile(
    captionCues(t, options).map((c) => {
      const text = c.lines.map(escapeVtt).join('\n');
      return { start: c.start, end: c.end, text: c.speaker === null ? text : `<v ${escapeVtt(labels.of(c.speaker).name)}>${text}</v>` };
    }),
  );
}

/** A timeline with only segments, for callers that have nothing more (captions cut from segments). */
export function timelineFromSegments(segments: ReadonlyArray<{ start: number; end: number; text: string; speaker?: string | null }>): Timeline {
  return {
    text: segments.map((s) => s.text).join(' '),
    segments: segments.map((s) => ({ start: s.start, end: s.end, text: s.text, speaker: s.speaker ?? null })),
    words: [],
    speakers: [],
  };
}

interface SpeakerLabel {
  /** The name on one line: the owner's name, or the id when it has none. */
  name: string;
  /** `Name: ` as a line starts with it, the name shortened to its share of the line. */
  label: string;
  chars: number;
}

function speakerLabels(t: Timeline, rules: CaptionRules): { of(id: string): SpeakerLabel } {
  const names = new Map(t.speakers.map((s) => [s.id, oneLine(s.name ?? '')]));
  const room = Math.floor(rules.maxLineChars * CAPTION_LABEL_SHARE) - 2;
  const cache = new Map<string, SpeakerLabel>();
  return {
    of(id) {
      let found = cache.get(id);
      if (!found) {
        const name = names.get(id) || oneLine(id) || '?';
        const label = `${shorten(name, room)}: `;
        found = { name, label, chars: charCount(label) };
        cache.set(id, found);
      }
      return found;
    },
  };
}
