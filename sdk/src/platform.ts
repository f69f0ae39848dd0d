/**
 * What a runtime adds to the web platform the client is written for. The client itself needs only
 * `fetch`, web streams and Web Crypto, so it runs in browsers, workers and edge runtimes; Node
 * adds file paths and uploads with backpressure (node-client.ts). Kept as an object handed in,
 * never imported from the shared modules, so a bundler building the browser entry meets no
 * `node:` import at all.
 */

/** The options of an upload the HTTP core sends itself (a streamed body). */
export interface UploadInit {
  method: string;
  headers: Record<string, string>;
  body: ReadableStream<Uint8Array>;
  signal: AbortSignal;
}

export interface Platform {
  /** A file path as a Blob read as it is sent (Node's `fs.openAsBlob`); absent where there are no files. */
  openFile?(path: string): Promise<Blob>;
  /** Sends a streamed body honouring the socket's backpressure (node-upload.ts); absent: `fetch`. */
  upload?(url: string, init: UploadInit): Promise<Response>;
}

/** Browsers, workers and edge runtimes: nothing beyond the web platform. */
export const WEB_PLATFORM: Platform = {};
