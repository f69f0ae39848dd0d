/**
 * @murmur/sdk for browsers, workers and edge runtimes (the `browser`, `worker`, `workerd` and
 * `edge-light` export conditions, and `@murmur/sdk/browser`): everything but what needs Node —
 * file paths and uploads through `node:http` — so a bundler meets no `node:` import. The Node
 * entry (index.ts) is this one with Node's `Murmur`. A page holds no API key: its server makes a
 * listen token, and the page streams with `connectLive({ baseUrl, token })`.
 */
export { Murmur, Recordings } from './client.js';
export type {
  Answer, Artifact, AskParams, ConvertParams, Folder, FormattedTranscript, KnowledgeBase, ListRecordingsParams, ListRequestsParams, Recording, RecordingSummary, RequestLogEntry, SearchPage, SearchParams,
  SearchResult, ThoughtThread, ThoughtThreadSummary, TranscribeParams, Transcription, Usage, User,
} from './client.js';
export { DEFAULT_BASE_URL, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_MS, HttpCore, type Answer as HttpAnswer, type ClientOptions, type RequestOptions } from './http.js';
export * from './errors.js';
export { PagePromise, type Page } from './pagination.js';
export { JobEndedError, Transcriptions, type CallOptions, type CreateJobParams, type JobStatus, type TranscriptFormat, type TranscriptionJob, type TranscriptionOptions } from './jobs.js';
export { type AudioInput, type UploadProgress } from './uploads.js';
export { verifyWebhook, WebhookSignatureError, type WebhookEvent } from './webhooks.js';
export { Listen, type ListenToken } from './listen.js';
export {
  connectLive, LiveConnectionError, LiveSession, type ConnectLiveOptions, type ListenOptions, type LiveClosed, type LiveConnectOptions, type LiveEncoding, type LiveEvent, type LiveFinal, type LiveOpen,
  type LiveParams, type LivePartial, type LiveSpeechStarted, type LiveUtteranceEnd, type LiveWord, type WebSocketConstructor, type WebSocketLike,
} from './live.js';
export type { Platform } from './platform.js';
export type { components, operations, paths } from './generated/openapi.js';
