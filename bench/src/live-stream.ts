/**
 * What the live benchmark sends and records: a stream of real speech (the LibriVox utterances
 * separated by silence, where each utterance lies known), and one client of GET /api/v1/listen
 * over a real WebSocket (Node.js's own, the WHATWG WebSocket a browser has, with the key in
 * `Authorization` as a server-side client sends it) that sends it as 16 kHz linear16 in 100 ms
 * frames at real-time pace, noting when each frame left and when each message arrived on one
 * clock, so every audio time the server names maps back to the moment its audio was sent.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { Utterance } from './transcribe-audio';

/** linear16 at 16 kHz, mono: bytes of one second. */
export const BYTES_PER_SECOND = 32_000;

/** Where one utterance lies in the stream, seconds of audio from its first byte. */
export interface PlacedUtterance {
  id: string;
  text: string;
  start: number;
  end: number;
}

export interface SpeechStream {
  pcm: Buffer;
  seconds: number;
  utterances: PlacedUtterance[];
}

/** The 16-bit PCM samples of a 16 kHz mono WAV (its `data` chunk); anything else is refused. */
export function pcmOfWav(file: string): Buffer {
  const wav = readFileSync(file);
  if (wav.toString('ascii', 0, 4) !== 'RIFF' || wav.toString('ascii', 8, 12) !== 'WAVE') throw new Error(`${file} is not a WAV file`);
  let at = 12;
  let format: { channels: number; rate: number; bits: number } | undefined;
  while (at + 8 <= wav.length) {
    const id = wav.toString('ascii', at, at + 4);
    const size = wav.readUInt32LE(at + 4);
    if (id === 'fmt ') format = { channels: wav.readUInt16LE(at + 10), rate: wav.readUInt32LE(at + 12), bits: wav.readUInt16LE(at + 22) };
    if (id === 'data') {
      if (!format || format.channels !== 1 || format.rate !== 16_000 || format.bits !== 16) throw new Error(`${file} is not 16 kHz mono 16-bit PCM`);
      return wav.subarray(at + 8, at + 8 + size);
    }
    at += 8 + size + (size % 2);
  }
  throw new Error(`${file} has no data chunk`);
}

/**
 * The utterances one after another: `leadSeconds` of silence, each utterance followed by
 * `gapSeconds` of silence (the last by `tailSeconds`). The LibriVox files are cut close around
 * their speech (the last 10 ms above −35 dB of each file's loudest is within 0.2 s of its end),
 * so an utterance's end in the stream is where its speech ends, to that much.
 */
export function speechStream(utterances: readonly Utterance[], opts: { leadSeconds: number; gapSeconds: number; tailSeconds: number }): SpeechStream {
  const silence = (seconds: number) => Buffer.alloc(Math.round(seconds * 16_000) * 2);
  const parts: Buffer[] = [silence(opts.leadSeconds)];
  let bytes = parts[0]!.length;
  const placed: PlacedUtterance[] = [];
  utterances.forEach((u, i) => {
    const pcm = pcmOfWav(u.wav);
    placed.push({ id: u.id, text: u.text, start: bytes / BYTES_PER_SECOND, end: (bytes + pcm.length) / BYTES_PER_SECOND });
    const after = silence(i === utterances.length - 1 ? opts.tailSeconds : opts.gapSeconds);
    parts.push(pcm, after);
    bytes += pcm.length + after.length;
  });
  return { pcm: Buffer.concat(parts), seconds: bytes / BYTES_PER_SECOND, utterances: placed };
}

export type LiveMessage = Record<string, any> & { type: string };

/** One stream as the client saw it; times are performance.now() milliseconds of the bench process. */
export interface StreamRecord {
  /** When the upgrade request left, and when `open` arrived. */
  connectAt: number;
  openAt: number;
  frameSeconds: number;
  /** Send time of every audio frame, in order: frame k holds audio [k·frameSeconds, (k+1)·frameSeconds). */
  frameSentAt: number[];
  /** How late a frame left after its due time, worst case (the sender's own pacing error). */
  maxSendLateMs: number;
  /** Every text message, with its arrival time. */
  messages: Array<{ at: number; message: LiveMessage }>;
  closeSentAt: number;
  /** When the socket closed, its code and reason. */
  closedAt: number;
  closeCode: number;
  closeReason: string;
  bytesSent: number;
  /** Set when the stream ended otherwise than with `closed` and 1000: its close code, error code and what it had received. */
  error?: string;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Opens a stream with `key`, waits for `open`, sends `pcm` in `frameMs` frames at real-time pace
 * (frame k leaves at k·frameMs after the first, as a microphone hands them over), then
 * `{"type":"close"}`, and resolves once the server closed the socket; a stream the server ended
 * with an error resolves too, with `error` set (a level beyond the machine may end that way). A
 * refused upgrade, or no close within `closeTimeoutMs` after the close, rejects.
 */
export async function runStream(gateway: string, key: string, pcm: Buffer, opts: { frameMs: number; closeTimeoutMs: number }): Promise<StreamRecord> {
  const url = new URL('/api/v1/listen?encoding=linear16&sample_rate=16000', gateway.replace(/^http/, 'ws'));
  const connectAt = performance.now();
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${key}` } });
  const messages: StreamRecord['messages'] = [];
  let openAt = 0;
  let markOpen: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (markOpen = resolve));
  ws.addEventListener('message', (event) => {
    if (typeof event.data !== 'string') return;
    const at = performance.now();
    const message = JSON.parse(event.data) as LiveMessage;
    messages.push({ at, message });
    if (message.type === 'open') {
      openAt = at;
      markOpen();
    }
  });
  const closed = new Promise<{ code: number; reason: string; at: number }>((resolve) =>
    ws.addEventListener('close', (event) => resolve({ code: event.code, reason: event.reason, at: performance.now() })),
  );
  const refused = closed.then(({ code, reason }) => {
    const error = messages.find((m) => m.message.type === 'error');
    throw new Error(`the stream closed before it opened: ${code} ${reason || String(error?.message.error?.code ?? 'no reason (upgrade refused?)')}`);
  });
  refused.catch(() => undefined);
  await Promise.race([opened, refused]);

  const frame = Math.round((BYTES_PER_SECOND * opts.frameMs) / 1000 / 2) * 2;
  const frameSentAt: number[] = [];
  let maxSendLateMs = 0;
  let bytesSent = 0;
  const first = performance.now();
  for (let at = 0, k = 0; at < pcm.length; at += frame, k += 1) {
    const due = first + k * opts.frameMs;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    if (ws.readyState !== WebSocket.OPEN) break;
    const now = performance.now();
    maxSendLateMs = Math.max(maxSendLateMs, now - due);
    const chunk = pcm.subarray(at, at + frame);
    ws.send(chunk);
    bytesSent += chunk.length;
    frameSentAt.push(now);
  }
  const closeSentAt = performance.now();
  if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'close' }));
  const timeout = sleep(opts.closeTimeoutMs).then(() => undefined);
  const end = await Promise.race([closed, timeout]);
  if (!end) {
    ws.close();
    throw new Error(`no close within ${opts.closeTimeoutMs} ms of {"type":"close"}`);
  }
  const error = messages.find((m) => m.message.type === 'error');
  let story: string | undefined;
  if (error || end.code !== 1000) {
    // What the stream had done by then (types and counts, never text), to tell a stuck recognizer from a slow one.
    const counts: Record<string, number> = {};
    for (const m of messages) counts[m.message.type] = (counts[m.message.type] ?? 0) + 1;
    const last = messages.filter((m) => m.message.type !== 'error').at(-1);
    story =
      `closed with ${end.code} ${String(error?.message.error?.code ?? end.reason)}: ${(bytesSent / BYTES_PER_SECOND).toFixed(1)} s of audio sent; received ${JSON.stringify(counts)}; ` +
      `the last message ${last ? `${((end.at - last.at) / 1000).toFixed(1)} s before the close (${last.message.type}${last.message.end !== undefined ? ` to ${last.message.end} s of audio` : ''})` : 'none'}`;
  }
  return {
    connectAt,
    openAt,
    frameSeconds: opts.frameMs / 1000,
    frameSentAt,
    maxSendLateMs,
    messages,
    closeSentAt,
    closedAt: end.at,
    closeCode: end.code,
    closeReason: end.reason,
    bytesSent,
    ...(story ? { error: story } : {}),
  };
}
