/**
 * Messages between the diarizer (diarizer.ts, in the service) and its child process
 * (diarizer-process.mts). Control goes over the IPC channel as JSON; the samples of a call
 * go over the child's stdin as raw little-endian float32, `samples` of them right after the
 * `diarize` message, so hours of audio are never serialised or copied twice.
 */

/** Parent → child, once: what to load. */
export interface LoadMessage {
  type: 'load';
  segmentation: string;
  embedding: string;
  numThreads: number;
  minDurationOn: number;
  minDurationOff: number;
}

/** Parent → child, per call. */
export interface DiarizeMessage {
  type: 'diarize';
  id: number;
  /** How many float32 samples follow on stdin. */
  samples: number;
  /** > 0: exactly this many speakers; 0: the threshold decides. */
  numClusters: number;
  threshold: number;
}

export type ToChild = LoadMessage | DiarizeMessage;

/** Child → parent. */
export type FromChild =
  | { type: 'ready'; sampleRate: number }
  | { type: 'progress'; id: number; done: number; total: number }
  | { type: 'turns'; id: number; turns: Array<{ start: number; end: number; speaker: number }> }
  | { type: 'failed'; id?: number; message: string };
