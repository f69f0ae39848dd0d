/**
 * A transcript as a REST response in the format asked for (`response_format`): the JSON object,
 * or text/SRT/VTT with its ids in headers. POST /transcribe answers with it, and GET
 * /transcriptions/{id} for a completed job.
 */
import * as ops from '../operations';
import type { StoredResponse } from '../idempotency/store';

export function render(
  result: Pick<Awaited<ReturnType<typeof ops.transcribe>>, 'id' | 'text' | 'segments' | 'credits_charged' | 'recording_id'>,
  format: ops.TranscriptFormat,
): StoredResponse {
  if (format === 'json') {
    return { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(result) };
  }
  const headers: Record<string, string> = {
    'x-transcription-id': result.id,
    'x-credits-charged': String(result.credits_charged),
    ...(result.recording_id ? { 'x-recording-id': result.recording_id } : {}),
  };
  if (format === 'srt') return { status: 200, headers: { ...headers, 'content-type': 'application/x-subrip; charset=utf-8' }, body: ops.toSrt(result.segments) };
  if (format === 'vtt') return { status: 200, headers: { ...headers, 'content-type': 'text/vtt; charset=utf-8' }, body: ops.toVtt(result.segments) };
  return { status: 200, headers: { ...headers, 'content-type': 'text/plain; charset=utf-8' }, body: result.text };
}
