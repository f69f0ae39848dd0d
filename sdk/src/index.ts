/**
 * @murmur/sdk — the TypeScript SDK of the Murmur API. Types are generated from the API's OpenAPI
 * document (generated/openapi.ts); the client adds what a program needs around them: retries
 * that never charge twice, typed errors, pagination, streamed uploads, jobs, live transcription
 * and webhooks. This is the Node entry: the browser one (browser.ts) with Node's `Murmur`, which
 * also reads file paths and uploads with the socket's backpressure.
 */
export * from './browser.js';
export { Murmur } from './node-client.js';
