/**
 * The `response_format`s of a transcription — the one list and its check. Captions (SRT,
 * WebVTT) are cut from the timeline by the captions room (gateway/src/captions).
 */
import { invalidParam } from '@murmur/contract';

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
