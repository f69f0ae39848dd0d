/**
 * The body idle timeout of the AI routes. Node has no body timeout of its own (requestTimeout
 * is off so that 500 MB uploads on slow links finish), so a client that stops sending mid-body
 * — 10 of 100 declared bytes, an upload stalled mid-file — would hold its connection, the
 * transcription call with its temp file, and its Idempotency-Key for as long as the socket
 * lives. The clock runs only while the gateway waits for the client: a body paused because its
 * reader is behind (backpressure) is not idle, and a pause of this process is not the client's
 * (idle-timer.ts).
 */
import type { IncomingMessage } from 'node:http';
import { MurmurError } from '@murmur/contract';
import { idleTimer } from './idle-timer';

/** `MURMUR_BODY_IDLE_TIMEOUT_MS` unset: long enough for a congested mobile link, short enough to free a stalled upload. */
export const DEFAULT_BODY_IDLE_TIMEOUT_MS = 30_000;

/**
 * Calls `onIdle` once no body byte has arrived for `ms` while the body is being read; returns
 * the function that stops watching (also stopped by the body's end or the connection's close).
 * Attach it in the same tick as the body's reader, which starts the flow.
 */
export function watchBodyIdle(req: IncomingMessage, ms: number, onIdle: (err: MurmurError) => void): () => void {
  const { arm, disarm } = idleTimer(ms, () => {
    stop();
    onIdle(new MurmurError('request_timeout', `No part of the request body arrived for ${seconds(ms)}; nothing was charged. Send the request again.`, { param: null }));
  });
  const stop = () => {
    disarm();
    req.off('data', arm);
    req.off('resume', arm);
    req.off('pause', disarm);
    req.off('end', stop);
    req.off('close', stop);
  };
  if (req.complete) return stop;
  req.on('data', arm);
  req.on('resume', arm);
  req.on('pause', disarm);
  req.on('end', stop);
  req.on('close', stop);
  if (!req.isPaused()) arm();
  return stop;
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
