/**
 * @murmur/sdk — the TypeScript SDK of the Murmur API. Types are generated from the API's OpenAPI
 * document (generated/openapi.ts); the client adds what a program needs around them: retries
 * that never charge twice, typed errors, pagination, streamed uploads, jobs and webhooks.
 */
export { Murmur, Recordings } from './client.js';
export type {
  Answer, Artifact, AskParams, ConvertParams, Folder, FormattedTranscript, KnowledgeBase, ListenToken, ListRecordingsParams, Recording, RecordingSummary, SearchPage, SearchParams,
  SearchResult, ThoughtThread, ThoughtThreadSummary, TranscribeParams, Transcription, Usage, User,
} from './client.js';
export { DEFAULT_BASE_URL, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_MS, HttpCore, type Answer as HttpAnswer, type ClientOptions, type RequestOptions } from './http.js';
export * from './errors.js';
export { PagePromise, type Page } from './pagination.js';
export { JobEndedError, Transcriptions, type CallOptions, type CreateJobParams, type JobStatus, type TranscriptFormat, type TranscriptionJob, type TranscriptionOptions } from './jobs.js';
export { type AudioInput, type UploadProgress } from './uploads.js';
export { verifyWebhook, WebhookSignatureError, type WebhookEvent } from './webhooks.js';
export type { components, operations, paths } from './generated/openapi.js';
