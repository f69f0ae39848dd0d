/** @murmur/gateway — the HTTP app and the shared operations, for tests, the launcher and the app's side. */
export * from './app';
export * from './http/server';
export * as operations from './operations';
export * from './idempotency/store';
export * from './key-cache';
export { DEFAULT_AUDIO_URL_POLICY, fetchAudioUrl, type AudioUrlPolicy } from './upload/fetch-audio';
export { attachListen, LISTEN_PATH, type ListenEndpoint } from './live/listen-socket';
export { RequestLogQueue, type RequestLogCounts } from './request-log/queue';
