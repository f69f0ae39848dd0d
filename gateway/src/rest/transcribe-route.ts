/**
 * POST /transcribe's REST spec: the body is parsed as a stream (multipart `audio`, or JSON
 * `audio_base64` decoded on the fly), hashed as it flows for the idempotency fingerprint, and
 * piped into the transcription service; the answer is rendered in the requested format.
 */
import { createHash, type Hash } from 'node:crypto';
import { pipeline, Transform, type Readable } from 'node:stream';
import type { Request } from 'express';
import { billing } from '@murmur/proto';
import * as ops from '../operations';
import type { StoredResponse } from '../idempotency/store';
import type { AiRouteSpec } from './ai-route';
import { canonical } from './ai-routes';
import { parseAudioUpload, type AudioUpload } from './audio-upload';

export interface TranscribeRequestInput {
  upload: AudioUpload;
  /** The audio as it flows to the service, hashed on the way. */
  audio: Readable;
  hash: Hash;
  ended: () => boolean;
}

/** Hashes the audio as the consumer pulls it (a Transform, so nothing flows before it is read). */
function hashed(upload: AudioUpload): TranscribeRequestInput {
  const hash = createHash('sha256');
  let ended = false;
  const tap = new Transform({
    highWaterMark: 64 * 1024,
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      done(null, chunk);
    },
    flush(done) {
      ended = true;
      done();
    },
  });
  // pipeline, not pipe + on('error'): an upload that failed before this runs (a truncated body
  // whose end arrived in the same tick as its first audio byte) has already emitted its error,
  // and only finished()/pipeline see an error emitted in the past.
  pipeline(upload.audio, tap, () => {});
  return { upload, audio: tap, hash, ended: () => ended };
}

function fingerprint(input: TranscribeRequestInput): string {
  if (!input.ended()) throw new Error('the upload was not read to its end');
  return createHash('sha256').update(canonical(input.upload.fields)).update(input.hash.copy().digest()).digest('hex');
}

function render(result: Awaited<ReturnType<typeof ops.transcribe>>, format: ops.TranscriptFormat): StoredResponse {
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

export function transcribeSpec(): AiRouteSpec<TranscribeRequestInput> {
  const read = async (req: Request, signal: AbortSignal) => hashed(await parseAudioUpload(req, { maxBytes: ops.MAX_AUDIO_BYTES, signal }));
  return {
    operation: billing.Operation.OPERATION_TRANSCRIBE,
    read: (req, _res, signal) => read(req, signal),
    fingerprint,
    fingerprintOf: async (req, _res, signal) => {
      const input = await read(req, signal);
      for await (const _chunk of input.audio) void _chunk;
      return fingerprint(input);
    },
    execute: async (ctx, input, call) => {
      const options = await ops.checkTranscribeOptions(ctx, input.upload.fields);
      const result = await ops.transcribe(ctx, input.audio, { filename: input.upload.filename, contentType: input.upload.contentType }, options, call);
      return render(result, options.responseFormat);
    },
  };
}
