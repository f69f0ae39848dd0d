/**
 * A transcript as a REST response in the format asked for (`response_format`): the JSON object,
 * or text/SRT/VTT with its ids in headers. POST /transcribe answers with it, and GET
 * /transcriptions/{id} for a completed job. Captions are cut on the words when the result has
 * them (the captions room), with the speakers' names as labels.
 */
import { invalidParam, type Timeline, type TimelineSpeaker, type TimelineWord } from '@murmur/contract';
import * as ops from '../operations';
import { toSrtFromTimeline, toVttFromTimeline } from '../captions/captions';
import { transcriptText } from '../captions/transcript-text';
import type { StoredResponse } from '../idempotency/store';

/** What rendering needs of a presented transcription (POST /transcribe's answer or a completed job's). */
export interface RenderedResult {
  id: string;
  text: string;
  segments: Array<{ start: number; end: number; text: string; speaker: string | null }>;
  speakers?: TimelineSpeaker[];
  words?: TimelineWord[] | null;
  credits_charged: number;
  recording_id: string | null;
}

/** The presented result as the timeline captions are cut from. */
export function timelineOfResult(r: RenderedResult): Timeline {
  return { text: r.text, segments: r.segments, words: r.words ?? [], speakers: r.speakers ?? [] };
}

export function render(result: RenderedResult, format: ops.TranscriptFormat): StoredResponse {
  if (format === 'json') {
    return { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(result) };
  }
  const headers: Record<string, string> = {
    'x-transcription-id': result.id,
    'x-credits-charged': String(result.credits_charged),
    ...(result.recording_id ? { 'x-recording-id': result.recording_id } : {}),
  };
  if (format === 'srt') return { status: 200, headers: { ...headers, 'content-type': 'application/x-subrip; charset=utf-8' }, body: toSrtFromTimeline(timelineOfResult(result)) };
  if (format === 'vtt') return { status: 200, headers: { ...headers, 'content-type': 'text/vtt; charset=utf-8' }, body: toVttFromTimeline(timelineOfResult(result)) };
  return { status: 200, headers: { ...headers, 'content-type': 'text/plain; charset=utf-8' }, body: transcriptText(timelineOfResult(result)) };
}

/**
 * A recording's transcript in `format` (text, srt, vtt): cut on its words, with its speakers'
 * names. A recording without a transcript has nothing to render.
 */
export function renderRecording(recording: ReturnType<typeof ops.presentRecording>, format: Exclude<ops.TranscriptFormat, 'json'>): StoredResponse {
  const t = recording.transcript;
  if (!t) throw invalidParam('response_format', 'This recording has no transcript yet, so it has no text or captions.');
  const timeline: Timeline = { text: t.text, segments: t.segments, words: t.words ?? [], speakers: t.speakers };
  const headers = { 'x-recording-id': recording.id };
  if (format === 'srt') return { status: 200, headers: { ...headers, 'content-type': 'application/x-subrip; charset=utf-8' }, body: toSrtFromTimeline(timeline) };
  if (format === 'vtt') return { status: 200, headers: { ...headers, 'content-type': 'text/vtt; charset=utf-8' }, body: toVttFromTimeline(timeline) };
  return { status: 200, headers: { ...headers, 'content-type': 'text/plain; charset=utf-8' }, body: transcriptText(timeline) };
}
