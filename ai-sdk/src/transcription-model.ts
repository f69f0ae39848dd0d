/**
 * Murmur as an AI SDK transcription model (specification v4 of `@ai-sdk/provider`): audio bytes
 * go to POST /api/v1/transcribe through the Murmur SDK (streamed, with its retries and one
 * Idempotency-Key per call), and an http(s) URL is handed to Murmur to download itself
 * (`doGenerateFromUrl`), so the audio never passes through the caller.
 */
import type { TranscriptionModelV4, TranscriptionModelV4CallOptions, TranscriptionModelV4Result, SharedV4Warning } from '@ai-sdk/provider';
import type { Murmur, TranscribeParams, Transcription } from '@murmur/sdk';

/** The engine runs server-side: `default` is the deployment's engine (pocketsphinx, whisper or an OpenAI-compatible one). */
export type MurmurTranscriptionModelId = 'default' | (string & {});

/**
 * Options under `providerOptions.murmur`: the timeline options of POST /transcribe, and `save`
 * (store it as a recording) with its `title` and `folder_id`.
 */
export interface MurmurTranscriptionOptions {
  language?: string;
  save?: boolean;
  title?: string;
  folder_id?: string;
  words?: boolean;
  diarize?: boolean;
  speakers_expected?: number;
  keyterms?: string[];
  redact_pii?: boolean;
  redact_pii_policies?: string[];
  redact_pii_sub?: string;
  idempotency_key?: string;
}

const OPTION_KEYS = ['language', 'save', 'title', 'folder_id', 'words', 'diarize', 'speakers_expected', 'keyterms', 'redact_pii', 'redact_pii_policies', 'redact_pii_sub', 'idempotency_key'] as const;

function optionsOf(providerOptions: TranscriptionModelV4CallOptions['providerOptions'], warnings: SharedV4Warning[]): MurmurTranscriptionOptions {
  const given = (providerOptions?.murmur ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(given)) {
    if ((OPTION_KEYS as readonly string[]).includes(k)) out[k] = v;
    else warnings.push({ type: 'unsupported', feature: `providerOptions.murmur.${k}` });
  }
  return out as MurmurTranscriptionOptions;
}

function base64Bytes(value: string): Uint8Array {
  const bin = atob(value);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export class MurmurTranscriptionModel implements TranscriptionModelV4 {
  readonly specificationVersion = 'v4' as const;
  readonly provider = 'murmur.transcription';

  constructor(
    readonly modelId: MurmurTranscriptionModelId,
    private readonly client: () => Murmur,
  ) {}

  async doGenerate(options: TranscriptionModelV4CallOptions): Promise<TranscriptionModelV4Result> {
    const bytes = typeof options.audio === 'string' ? base64Bytes(options.audio) : options.audio;
    const audio = new Blob([bytes as Uint8Array<ArrayBuffer>], { type: options.mediaType });
    return this.run(audio, options);
  }

  /** Murmur downloads the URL itself (`audio_url`: public http(s), up to 500 MB). */
  async doGenerateFromUrl(options: Omit<TranscriptionModelV4CallOptions, 'audio' | 'mediaType'> & { audio: URL }): Promise<TranscriptionModelV4Result | undefined> {
    if (options.audio.protocol !== 'http:' && options.audio.protocol !== 'https:') return undefined;
    return this.run({ url: options.audio.toString() }, options);
  }

  private async run(audio: TranscribeParams['audio'], options: Omit<TranscriptionModelV4CallOptions, 'audio' | 'mediaType'>): Promise<TranscriptionModelV4Result> {
    const warnings: SharedV4Warning[] = [];
    if (this.modelId !== 'default') warnings.push({ type: 'unsupported', feature: `model ${this.modelId}`, details: 'Murmur picks its engine server-side; "default" is the only model id.' });
    const { idempotency_key, ...fields } = optionsOf(options.providerOptions, warnings);
    const words = fields.words ?? options.timestampGranularities?.includes('word') ?? false;
    const started = new Date();
    const t: Transcription = await this.client().transcribe(
      { audio, ...fields, words },
      { ...(idempotency_key ? { idempotencyKey: idempotency_key } : {}), ...(options.abortSignal ? { signal: options.abortSignal } : {}) },
    );
    return {
      text: t.text,
      segments: t.segments.map((s) => ({ text: s.text, startSecond: s.start, endSecond: s.end })),
      ...(t.words ? { words: t.words.map((w) => ({ text: w.text, startSecond: w.start, endSecond: w.end })) } : {}),
      language: t.language ?? undefined,
      durationInSeconds: t.duration_seconds,
      warnings,
      usage: { credits_charged: t.credits_charged, audio_seconds: t.duration_seconds },
      response: { timestamp: started, modelId: t.model, body: t },
      providerMetadata: { murmur: { id: t.id, credits_charged: t.credits_charged, recording_id: t.recording_id, ...(t.speakers ? { speakers: t.speakers } : {}) } },
    };
  }
}
