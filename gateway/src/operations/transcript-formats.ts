/**
 * The `response_format`s of a transcription — the one list and its check — and the ones besides
 * JSON: plain text, SubRip (SRT) and WebVTT, built from the segments. Pure; table-tested.
 */
import { invalidParam } from '@murmur/contract';
import { srtFile, vttFile } from './caption-files';

export interface TimedSegment {
  start: number;
  end: number;
  text: string;
}

export const TRANSCRIPT_FORMATS = ['json', 'text', 'srt', 'vtt'] as const;
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number];

/**
 * The one check of `response_format`, wherever it is read (an upload's body as it arrives, the
 * options before paid work): absent means `json`.
 */
export function transcriptFormatOf(value: string | undefined): TranscriptFormat {
  if (value === undefined) return 'json';
  if (!(TRANSCRIPT_FORMATS as readonly string[]).includes(value)) {
    throw invalidParam('response_format', `\`response_format\` must be one of ${TRANSCRIPT_FORMATS.join(', ')}.`);
  }
  return value as TranscriptFormat;
}

/** Cue text may not contain a blank line (it would end the cue) nor, in VTT, the "-->" marker. */
function cueText(text: string, vtt: boolean): string {
  const oneBlock = text.trim().replace(/\r\n?/g, '\n').replace(/\n{2,}/g, '\n');
  return vtt ? oneBlock.replace(/-->/g, '->') : oneBlock;
}

/**
 * One cue per segment, as the segments are. Captions cut by the broadcast rules come from
 * {@link toSrtFromTimeline}; `timelineFromSegments` turns these segments into its input.
 */
export function toSrt(segments: TimedSegment[]): string {
  return srtFile(segments.filter((s) => s.text.trim() !== '').map((s) => ({ start: s.start, end: s.end, text: cueText(s.text, false) })));
}

/** One cue per segment, as the segments are; see {@link toVttFromTimeline} for cut captions. */
export function toVtt(segments: TimedSegment[]): string {
  return vttFile(segments.filter((s) => s.text.trim() !== '').map((s) => ({ start: s.start, end: s.end, text: cueText(s.text, true) })));
}
