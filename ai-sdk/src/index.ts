/**
 * @murmur/ai-sdk — Murmur's transcription for the Vercel AI SDK:
 *
 *   import { transcribe } from 'ai';
 *   import { murmur } from '@murmur/ai-sdk';
 *   const { text, segments } = await transcribe({ model: murmur.transcription('default'), audio });
 */
import { Murmur, type ClientOptions } from '@murmur/sdk';
import { MurmurTranscriptionModel, type MurmurTranscriptionModelId } from './transcription-model.js';

export interface MurmurProviderSettings {
  /** Default MURMUR_API_KEY. */
  apiKey?: string;
  /** Default MURMUR_BASE_URL, else http://localhost:8080. */
  baseURL?: string;
  /** Retries of a 429 or 503 inside the Murmur SDK (default 2). */
  maxRetries?: number;
  fetch?: typeof fetch;
}

export interface MurmurProvider {
  (modelId?: MurmurTranscriptionModelId): MurmurTranscriptionModel;
  transcription(modelId?: MurmurTranscriptionModelId): MurmurTranscriptionModel;
  transcriptionModel(modelId: MurmurTranscriptionModelId): MurmurTranscriptionModel;
}

/** A provider with its own settings; the client is made at the first call (the key is read then). */
export function createMurmur(settings: MurmurProviderSettings = {}): MurmurProvider {
  let client: Murmur | undefined;
  const options: ClientOptions = {
    ...(settings.apiKey ? { apiKey: settings.apiKey } : {}),
    ...(settings.baseURL ? { baseUrl: settings.baseURL } : {}),
    ...(settings.maxRetries !== undefined ? { maxRetries: settings.maxRetries } : {}),
    ...(settings.fetch ? { fetch: settings.fetch } : {}),
  };
  const model = (modelId: MurmurTranscriptionModelId = 'default') => new MurmurTranscriptionModel(modelId, () => (client ??= new Murmur(options)));
  return Object.assign(model, { transcription: model, transcriptionModel: model });
}

/** The default provider: MURMUR_API_KEY and MURMUR_BASE_URL from the environment. */
export const murmur = createMurmur();

export { MurmurTranscriptionModel, type MurmurTranscriptionModelId, type MurmurTranscriptionOptions } from './transcription-model.js';
