/**
 * POST /transcribe's and POST /transcriptions' REST spec (one upload path; the first answers the
 * transcript, the second the queued job, 202 with Location): the body is parsed as a stream (multipart `audio`, or JSON
 * `audio_base64` decoded on the fly), hashed as it flows for the idempotency fingerprint, and
 * piped into the transcription service; the answer is rendered in the requested format.
 *
 * Options may follow the audio. The transcription service starts work only once the upload has
 * ended, so the gateway holds the end of the stream until the body has been read and every
 * option checked (`endCheck`): a bad title or a foreign folder after the audio fails before any
 * paid work. `language` is the one option recognition needs; when it was not settled before the
 * audio, the audio is also copied to a spool file as it flows, and a `language` after it starts
 * the transcription again from that copy (the first call is cancelled before its end, so it has
 * reserved nothing).
 */
import { createHash, type Hash } from 'node:crypto';
import { pipeline, Readable, Transform } from 'node:stream';
import type { Request } from 'express';
import { billing } from '@murmur/proto';
import { invalidParam } from '@murmur/contract';
import * as ops from '../operations';
import type { StoredResponse } from '../idempotency/store';
import { DEFAULT_AUDIO_URL_POLICY, fetchAudioUrl } from '../upload/fetch-audio';
import type { AiRouteSpec } from './ai-route';
import { canonical } from './fingerprint';
import { parseAudioUpload, type AudioUpload } from '../upload/audio-upload';
import { AudioSpool } from '../upload/audio-spool';
import { render } from './transcript-response';
import type { BodyOptions } from '../upload/body-options';

export interface TranscribeRequestInput {
  upload: AudioUpload;
  /** The audio as it flows to the service, hashed on the way. */
  audio: Readable;
  hash: Hash;
  ended: () => boolean;
  /** Runs when the body has ended, before the audio ends; its failure fails the audio. Set once. */
  endCheck: (check: () => Promise<void>) => void;
  /** The copy of the audio kept while a late `language` is possible. */
  spool: AudioSpool | null;
}

/** A `language` arrived after the audio and differs from the one the transcription started with. */
class LanguageAfterAudio extends Error {}

/**
 * Hashes the audio as the consumer pulls it (a Transform, so nothing flows before it is read),
 * copies it to `spool` when given, and waits for the end check before ending.
 */
function hashed(upload: AudioUpload, spool: AudioSpool | null): TranscribeRequestInput {
  const hash = createHash('sha256');
  let ended = false;
  let setCheck!: (check: () => Promise<void>) => void;
  const check = new Promise<() => Promise<void>>((resolve) => {
    setCheck = resolve;
  });
  const tap = new Transform({
    highWaterMark: 64 * 1024,
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      if (!spool) return done(null, chunk);
      void spool.write(chunk).then(() => done(null, chunk));
    },
    flush(done) {
      ended = true;
      check.then((run) => run()).then(() => done(), done);
    },
  });
  // pipeline, not pipe + on('error'): an upload that failed before this runs (a truncated body
  // whose end arrived in the same tick as its first audio byte) has already emitted its error,
  // and only finished()/pipeline see an error emitted in the past.
  pipeline(upload.audio, tap, () => {});
  return { upload, audio: tap, hash, ended: () => ended, endCheck: setCheck, spool };
}

/**
 * What an Idempotency-Key is bound to: the options and the audio's bytes; for an `audio_url`,
 * the options only (the URL among them) — a retry is compared without downloading again.
 */
function fingerprint(input: TranscribeRequestInput): string {
  const fields = createHash('sha256').update(canonical(input.upload.fields));
  if (input.upload.fields.audio_url !== undefined) return fields.digest('hex');
  if (!input.ended()) throw new Error('the upload was not read to its end');
  return fields.update(input.hash.copy().digest()).digest('hex');
}

/** What the route does with the checked upload: transcribe it now, or submit it as a job. */
interface Flavour {
  run(ctx: ops.OperationContext, audio: Readable, file: { filename: string; contentType: string }, options: ops.CheckedTranscribeOptions, call: ops.ChargeContext): Promise<StoredResponse>;
  /** Options the flavour does not take (named in the refusal). */
  refuse: Array<{ param: 'response_format' | 'webhook_url'; message: string }>;
}

const SYNC: Flavour = {
  run: async (ctx, audio, file, options, call) => render(await ops.transcribe(ctx, audio, file, options, call), options.responseFormat),
  refuse: [{ param: 'webhook_url', message: '`webhook_url` applies to jobs: POST /transcriptions, which calls it when the job ends.' }],
};

const JOB: Flavour = {
  run: async (ctx, audio, file, options, call) => {
    const job = await ops.submitTranscription(ctx, audio, file, options, call);
    return {
      status: 202,
      headers: { 'content-type': 'application/json; charset=utf-8', location: `/api/v1/transcriptions/${job.id}` },
      body: JSON.stringify(job),
    };
  },
  refuse: [{ param: 'response_format', message: '`response_format` applies when reading a completed job: GET /transcriptions/{id}?response_format=text|srt|vtt.' }],
};

/** Transcribes (or submits) the upload, applying the options that arrive after the audio (see the file comment). */
async function execute(ctx: ops.OperationContext, input: TranscribeRequestInput, call: ops.ChargeContext, flavour: Flavour): Promise<StoredResponse> {
  const { upload } = input;
  const file = { filename: upload.filename, contentType: upload.contentType };
  const refuse = () => {
    for (const r of flavour.refuse) if (upload.fields[r.param] !== undefined) throw invalidParam(r.param, r.message);
  };
  try {
    refuse();
    // What is known now fails now (before the rest of a 500 MB upload); the rest when the body ends.
    const started = await ops.checkTranscribeOptions(ctx, upload.fields, 'partial');
    // Read by ops.transcribe after the audio (save, title, folder): completed by the end check.
    const options = { ...started };
    input.endCheck(async () => {
      refuse();
      const final = await ops.checkTranscribeOptions(ctx, upload.fields);
      Object.assign(options, final, { language: started.language });
      if (final.language !== started.language) throw new LanguageAfterAudio();
    });
    try {
      return await flavour.run(ctx, input.audio, file, options, call);
    } catch (err) {
      if (!(err instanceof LanguageAfterAudio)) throw err;
      if (!input.spool || !(await input.spool.finish())) {
        throw invalidParam('language', '`language` came after the audio and could not be applied. Send it before the audio.');
      }
      const final = await ops.checkTranscribeOptions(ctx, upload.fields);
      return await flavour.run(ctx, input.spool.read(), file, final, call);
    }
  } finally {
    input.audio.destroy();
    await input.spool?.remove();
  }
}

/** POST /transcribe (`sync`) and POST /transcriptions (`job`): the same upload, checks and charging. */
export function transcribeSpec(body: BodyOptions = {}, mode: 'sync' | 'job' = 'sync'): AiRouteSpec<TranscribeRequestInput> {
  const flavour = mode === 'job' ? JOB : SYNC;
  const policy = body.audioUrlPolicy ?? DEFAULT_AUDIO_URL_POLICY;
  // The audio of an `audio_url` is fetched once the body has been read (after admission).
  const parse = (req: Request, signal: AbortSignal, fetchUrl = true) =>
    parseAudioUpload(req, {
      maxBytes: ops.MAX_AUDIO_BYTES,
      signal,
      idleTimeoutMs: body.bodyIdleTimeoutMs,
      openUrl: fetchUrl ? (url) => fetchAudioUrl(url, policy, { maxBytes: ops.MAX_AUDIO_BYTES, signal }) : async () => ({ stream: Readable.from([]), filename: '', contentType: '' }),
    });
  return {
    operation: billing.Operation.OPERATION_TRANSCRIBE,
    read: async (req, _res, signal) => {
      const upload = await parse(req, signal);
      // Without a spool (no writable temp dir) only a late `language` is refused.
      return hashed(upload, upload.languageKnown ? null : await AudioSpool.create(body.spoolDir).catch(() => null));
    },
    fingerprint,
    fingerprintOf: async (req, _res, signal) => {
      const input = hashed(await parse(req, signal, false), null);
      input.endCheck(async () => {});
      for await (const _chunk of input.audio) void _chunk;
      return fingerprint(input);
    },
    execute: (ctx, input, call) => execute(ctx, input, call, flavour),
  };
}
