/** @murmur/gateway — the HTTP app and the shared operations, for tests, the launcher and the app's side. */
export * from './app';
export * from './clients';
export * from './http/server';
export * as operations from './operations';
export * from './idempotency/store';
export * from './key-cache';
export { CONVERT_READ_FIRST_MAX_BYTES } from './rest/ai-routes';
export { DEFAULT_AUDIO_URL_POLICY, fetchAudioUrl, type AudioUrlPolicy } from './audio-url/fetch-audio';
