/**
 * POST /transcribe and the MCP `transcribe` tool: audio streamed into the transcription
 * service's client-streaming RPC (backpressure end to end, so memory does not grow with the
 * upload); with `save`, the service stores it as a recording too (before it charges).
 */
import { noteCredits } from '../http/call-note';
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import { invalidParam, isLanguageOption, keytermsOf, MAX_AUDIO_BYTES, MAX_TITLE_CHARS, redactionOptionsOf, speakersExpectedOf, titleOf } from '@murmur/contract';
import type { timeline, transcription } from '@murmur/proto';
import type { OperationContext } from './context';
import type { ChargeContext } from './convert';
import { presentTranscription } from './present';
import { transcriptFormatOf, type TranscriptFormat } from './transcript-formats';

/** Audio up to 500 MB, as a file or as decoded base64: kit's limit, the one the transcription service applies too. */
export { MAX_AUDIO_BYTES };
/** gRPC messages of audio are cut to this size. */
export const CHUNK_BYTES = 256 * 1024;
/** A 2-hour recording on a small machine takes a while; the gateway waits this long at most. */
const TRANSCRIBE_DEADLINE_MS = 3 * 60 * 60 * 1000;

export interface TranscribeOptions {
  language?: string;
  response_format?: string;
  save?: boolean;
  title?: string;
  folder_id?: string;
  webhook_url?: string;
  words?: boolean;
  diarize?: boolean;
  speakers_expected?: number;
  keyterms?: readonly string[];
  redact_pii?: boolean;
  redact_pii_policies?: readonly string[];
  redact_pii_sub?: string;
}

export interface CheckedTranscribeOptions {
  language: string;
  responseFormat: TranscriptFormat;
  save: boolean;
  title: string;
  folderId: string;
  /** Jobs only: where the job's end is delivered ("" = the owner's default endpoint, if any); the service checks it. */
  webhookUrl: string;
  /** What recognition is asked for beyond text; the service checks it against its engine before anything is held. */
  timeline: timeline.TimelineOptions;
}

/** Whether timeline options that arrived after the audio differ from the ones the call opened with (then they travel as late options). */
export function timelineChanged(opened: timeline.TimelineOptions | undefined, final: timeline.TimelineOptions): boolean {
  return JSON.stringify(opened) !== JSON.stringify(final);
}

/** The timeline options by the contract's rules (the engine's abilities are the service's to check). */
export function timelineOptionsOf(o: TranscribeOptions): timeline.TimelineOptions {
  const diarize = o.diarize ?? false;
  const redaction = redactionOptionsOf({ redact_pii: o.redact_pii, redact_pii_policies: o.redact_pii_policies, redact_pii_sub: o.redact_pii_sub });
  return {
    words: o.words ?? false,
    diarize,
    speakersExpected: speakersExpectedOf(o.speakers_expected, diarize),
    keyterms: keytermsOf(o.keyterms),
    redactPii: redaction !== null,
    redactPiiPolicies: redaction?.policies ?? [],
    redactPiiSub: redaction?.style ?? '',
  };
}

/**
 * `language` as the gateway accepts it: absent or a tag by kit's rule (isLanguageTag), the one
 * the transcription service and the library apply too. Absent → "" (the engine decides).
 */
export function languageOf(value: string | undefined): string {
  if (value !== undefined && !isLanguageOption(value)) {
    throw invalidParam('language', '`language` must be a language code such as "en" or "pt-BR", or "auto" to detect it.');
  }
  return value ?? '';
}

/**
 * Validates every option before any paid work starts — each value by the rules the library
 * will apply when it stores the recording (kit's text-rules), then how they combine, and that
 * the folder is the caller's — so a request the library would refuse after the transcription
 * is refused before it, and charged nothing.
 *
 * `partial`: the options of an upload whose later options may still arrive (they can follow
 * the audio): each value present is checked, and the folder if one is named, but not how they
 * combine (`save` may come later); the full check runs once the body has ended.
 */
export async function checkTranscribeOptions(ctx: OperationContext, o: TranscribeOptions, mode: 'full' | 'partial' = 'full'): Promise<CheckedTranscribeOptions> {
  const language = languageOf(o.language);
  const format = transcriptFormatOf(o.response_format);
  const title = o.title === undefined ? '' : titleOf(o.title, MAX_TITLE_CHARS);
  if (o.folder_id !== undefined && (o.folder_id.length > 100 || o.folder_id.includes('\u0000'))) {
    throw invalidParam('folder_id', '`folder_id` must be the id of one of your folders (fld_…).');
  }
  if (mode === 'full' && (o.title !== undefined || o.folder_id !== undefined) && !o.save) {
    throw invalidParam(o.title !== undefined ? 'title' : 'folder_id', '`title` and `folder_id` only apply with `save: true`.');
  }
  if (o.folder_id) {
    await ctx.clients.library.getFolder({ ownerId: ctx.principal.userId, folderId: o.folder_id });
  }
  if (o.webhook_url !== undefined && o.webhook_url.length > 2048) throw invalidParam('webhook_url', '`webhook_url` must be an https URL of at most 2,048 characters.');
  const timeline = timelineOptionsOf(o);
  return { language, responseFormat: format, save: o.save ?? false, title, folderId: o.folder_id ?? '', webhookUrl: o.webhook_url ?? '', timeline };
}

/** A config-then-audio call of the transcription service (Transcribe, SubmitTranscription). */
interface AudioCall<M, R> {
  stream: { write(message: M): boolean; end(): void; cancel(): void } & NodeJS.EventEmitter;
  response: Promise<R>;
}

/**
 * Streams `config` then `audio` into `call` with backpressure end to end (memory does not grow
 * with the upload) and returns the service's answer. An answer before the upload ended (e.g.
 * audio_too_large) stops reading it; a failed upload (too large, bad base64, client gone)
 * cancels the call so the service does not go on. `last`, when it gives a message once the
 * audio has ended, closes the stream (the options that followed the audio).
 */
export async function streamAudio<M, R>(call: AudioCall<M, R>, config: M, audio: Readable, chunkMessage: (chunk: Buffer) => M, last?: () => M | undefined): Promise<R> {
  const { stream, response } = call;
  // Aborted once the service has answered: a write waiting for 'drain' stops waiting then. (One
  // signal rather than a race against the answer per write: each race would stay attached to the
  // call-long promise until the end of the upload.)
  const answered = new AbortController();
  const settled = response.then(
    (r) => ({ ok: true as const, r }),
    (e: unknown) => ({ ok: false as const, e }),
  );
  void settled.then(() => answered.abort());
  const write = async (msg: M) => {
    if (stream.write(msg) || answered.signal.aborted) return;
    await once(stream, 'drain', { signal: answered.signal }).catch((err: unknown) => {
      if (!answered.signal.aborted) throw err;
    });
  };
  try {
    await write(config);
    for await (const chunk of audio as AsyncIterable<Buffer>) {
      // The service answered early (e.g. audio_too_large): stop reading the upload.
      if (answered.signal.aborted) break;
      for (let at = 0; at < chunk.length; at += CHUNK_BYTES) {
        await write(chunkMessage(chunk.subarray(at, at + CHUNK_BYTES)));
      }
    }
    const closing = answered.signal.aborted ? undefined : last?.();
    if (closing !== undefined) await write(closing);
    stream.end();
  } catch (err) {
    stream.cancel();
    await settled;
    throw err;
  }
  const result = await settled;
  if (!result.ok) throw result.e;
  return result.r;
}

/** The opening config of a Transcribe or SubmitTranscription call: whose, which language, the 500 MB limit, how it is charged. */
export function audioCallConfig(ctx: OperationContext, file: { filename: string; contentType: string }, options: Pick<CheckedTranscribeOptions, 'language' | 'timeline'>, charge: ChargeContext) {
  return {
    userId: ctx.principal.userId,
    language: options.language,
    timeline: options.timeline,
    idempotencyKey: charge.idempotencyKey,
    maxBytes: MAX_AUDIO_BYTES,
    filename: file.filename,
    contentType: file.contentType,
    admissionId: charge.admissionId,
  };
}

/**
 * Sends `audio` through the transcription service, which also stores the result with `save` (it
 * saves before it charges: one owner per transcription). `options` may still change while the
 * audio flows (REST fields after the file complete it before the audio ends): whatever saving
 * option differs from the config once the audio has ended is sent as the stream's last message.
 */
export async function transcribe(
  ctx: OperationContext,
  audio: Readable,
  file: { filename: string; contentType: string },
  options: CheckedTranscribeOptions,
  charge: ChargeContext,
) {
  const config: transcription.TranscribeConfig = { ...audioCallConfig(ctx, file, options, charge), save: options.save, title: options.title, folderId: options.folderId };
  const lateOptions = (): transcription.TranscribeRequest | undefined => {
    const late: transcription.TranscribeLateOptions = { save: options.save, title: options.title, folderId: options.folderId, timeline: options.timeline };
    const changed = late.save !== config.save || late.title !== config.title || late.folderId !== config.folderId || timelineChanged(config.timeline, options.timeline);
    return changed ? { payload: { $case: 'lateOptions', value: late } } : undefined;
  };
  const t = await streamAudio<transcription.TranscribeRequest, transcription.TranscribeResponse>(
    ctx.clients.transcription.transcribe({ signal: charge.signal, deadlineMs: TRANSCRIBE_DEADLINE_MS }),
    { payload: { $case: 'config', value: config } },
    audio,
    (chunk) => ({ payload: { $case: 'audioChunk', value: chunk } }),
    lateOptions,
  );
  // Captions are cut on the words, so srt and vtt read them too (they are not in those bodies).
  const words = options.timeline.words || options.responseFormat === 'srt' || options.responseFormat === 'vtt';
  noteCredits(t.creditsCharged);
  return presentTranscription(t, t.recordingId || null, { words });
}
