/**
 * The `response_format`s of a transcription — the one list and its check — and the ones besides
 * JSON: plain text, SubRip (SRT) and WebVTT, built from the segments. Pure; table-tested.
 */
import { invalidParam } from '@murmur/contract';

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

function clock(seconds: number, separator: ',' | '.'): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  const frac = ms % 1000;
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(h)}:${pad(m)}:${pad(s)}${separator}${pad(frac, 3)}`;
}

/** Cue text may not contain a blank line (it would end the cue) nor, in VTT, the "-->" marker. */
function cueText(text: string, vtt: boolean): string {
  const oneBlock = text.trim().replace(/\r\n?/g, '\n').replace(/\n{2,}/g, '\n');
  return vtt ? oneBlock.replace(/-->/g, '->') : oneBlock;
}

export function toSrt(segments: TimedSegment[]): string {
  return segments
    .filter((s) => s.text.trim() !== '')
    .map((s, i) => `${i + 1}\n${clock(s.start, ',')} --> ${clock(s.end, ',')}\n${cueText(s.text, false)}\n`)
    .join('\n');
}

export function toVtt(segments: TimedSegment[]): string {
  const cues = segments
    .filter((s) => s.text.trim() !== '')
    .map((s) => `${clock(s.start, '.')} --> ${clock(s.end, '.')}\n${cueText(s.text, true)}\n`);
  return ['WEBVTT\n', ...cues].join('\n');
}
