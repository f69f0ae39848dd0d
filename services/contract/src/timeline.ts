/**
 * A transcript as a timeline (issue 32): words with times, confidence and speaker, segments
 * with their speaker, and the speakers with the names their owner gave them. The one shape every
 * stage passes along — engines, diarization, redaction, storage, captions, the REST and MCP
 * renderings — so none of them invents its own. Times are seconds from the start of the audio.
 */

/** One recognised word. */
export interface TimelineWord {
  /** The word as recognised (never empty, never holds a line break). */
  text: string;
  start: number;
  end: number;
  /** 0–1, or null when the engine reports none (OpenAI-compatible servers). */
  confidence: number | null;
  /** A speaker id of {@link Timeline.speakers} (`S1`, `S2`, …), or null without diarization. */
  speaker: string | null;
}

/** A run of words, as engines and captions group them. */
export interface TimelineSegment {
  start: number;
  end: number;
  text: string;
  speaker: string | null;
}

/** A speaker found by diarization; `name` is set by the owner later (null until then). */
export interface TimelineSpeaker {
  id: string;
  name: string | null;
}

export interface Timeline {
  text: string;
  segments: TimelineSegment[];
  /** Empty when the engine knows no word times (see the engine capability table). */
  words: TimelineWord[];
  /** Empty without diarization. */
  speakers: TimelineSpeaker[];
}

/** Speaker ids: `S` and a number from 1, in order of first appearance. */
export const SPEAKER_ID_PATTERN = /^S[1-9][0-9]{0,2}$/;

/** The speaker id of the `index`-th (0-based) speaker. */
export function speakerIdOf(index: number): string {
  return `S${index + 1}`;
}
