/**
 * What the transcribe benchmark feeds and compares against: speech files made from Debian's
 * pocketsphinx-testdata LibriVox utterances (with their reference text), the raw engine path
 * (the transcription package's own decode → chunk → recognise → stitch, in-process, no gRPC, no
 * billing, no upload), a streaming HTTP POST with backpressure, and 500 MB upload bodies
 * generated on the fly (multipart and base64 JSON) that never sit in memory.
 */
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import * as http from 'node:http';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  BYTES_PER_SECOND,
  decodeAndCut,
  PIECE_SECONDS,
  planRecognition,
  recognizeChunks,
  Semaphore,
  type ChunkRange,
  type SpeechEngine,
} from '@murmur/transcription';
import { ffmpeg, type Utterance } from '@murmur/transcription/dist/speech-fixtures';

export { LIBRIVOX_DIR, librivoxUtterances, ffmpeg, probeSeconds, tempDir, type Utterance } from '@murmur/transcription/dist/speech-fixtures';



/** The utterances one after another as one 16 kHz mono WAV. */
export async function concatUtterances(utterances: readonly Utterance[], out: string): Promise<void> {
  const inputs = utterances.flatMap((u) => ['-i', u.wav]);
  const labels = utterances.map((_, i) => `[${i}:a]`).join('');
  await ffmpeg([...inputs, '-filter_complex', `${labels}concat=n=${utterances.length}:v=0:a=1`, '-ar', '16000', '-ac', '1', '-c:a', 'pcm_s16le', out]);
}

/** `input` played `times` times in a row, as a 16 kHz mono WAV. */
export async function loopWav(input: string, times: number, out: string): Promise<void> {
  await ffmpeg(['-stream_loop', String(times - 1), '-i', input, '-ar', '16000', '-ac', '1', '-c:a', 'pcm_s16le', out]);
}

export interface RawTranscription {
  text: string;
  ms: number;
  decode_ms: number;
  chunks: number;
  duration_seconds: number;
}

/** How the raw path cuts a file: the engine's plan (as the service does), 30 s pieces, or one chunk. */
export type RawPlan = 'engine' | 'pieces' | 'single';

/**
 * The raw engine path on a file, exactly as the service does it after the upload is spooled,
 * with the package's own functions: ffmpeg decodes to 16 kHz PCM on disk while the silence
 * chunker cuts ≤ 30 s pieces, the pieces become chunks (`engine`: planRecognition with the
 * engine's longest chunk, like the service; `pieces`: every piece as it is; `single`: one
 * chunk for everything), chunks are recognised at most `concurrency` at a time, and stitched.
 * No gRPC, no billing, no upload.
 */
export async function rawTranscribe(file: string, engine: SpeechEngine, opts: { concurrency: number; plan?: RawPlan; tmpDir: string }): Promise<RawTranscription> {
  const dir = await mkdtemp(path.join(opts.tmpDir, 'raw-'));
  const signal = new AbortController().signal;
  try {
    const started = performance.now();
    const decoded = await decodeAndCut(file, dir, { signal });
    const plan = opts.plan ?? 'engine';
    const bytes = decoded.durationSeconds * BYTES_PER_SECOND;
    const chunks: ChunkRange[] =
      plan === 'single'
        ? [{ startByte: 0, endByte: bytes, peakRms: Math.max(0, ...decoded.pieces.map((p) => p.peakRms)) }]
        : plan === 'pieces'
          ? decoded.pieces
          : planRecognition(decoded.pieces, { maxChunkSeconds: engine.maxChunkSeconds ?? PIECE_SECONDS, concurrency: opts.concurrency });
    const decodeMs = performance.now() - started;
    const semaphore = new Semaphore(opts.concurrency);
    const { transcript } = await recognizeChunks(chunks, decoded.pcmFile, dir, { engine, language: '', signal, semaphore, limit: opts.concurrency });
    return { text: transcript.text, ms: performance.now() - started, decode_ms: decodeMs, chunks: chunks.length, duration_seconds: decoded.durationSeconds };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export interface PostResult {
  status: number;
  body: string;
  /** From the first byte sent to the last byte of the body handed to the socket. */
  upload_ms: number;
  /** From the first byte sent to the last byte of the answer. */
  total_ms: number;
  bytes_sent: number;
}

/**
 * POSTs a body made of `pieces` with a known Content-Length, honouring backpressure (the next
 * piece is produced only when the socket drained), so a 667 MB body never sits in memory. An
 * answer that arrives before the body is sent stops the upload.
 */
export async function postStream(url: string, headers: Record<string, string>, contentLength: number, pieces: Iterable<Buffer | string>): Promise<PostResult> {
  const started = performance.now();
  const req = http.request(url, { method: 'POST', headers: { ...headers, 'content-length': String(contentLength) }, agent: false });
  let answered = false;
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on('response', (res) => {
      answered = true;
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
  response.catch(() => undefined);
  let sent = 0;
  for (const piece of pieces) {
    if (answered || req.destroyed) break;
    sent += Buffer.byteLength(piece);
    if (!req.write(piece)) await Promise.race([once(req, 'drain'), response.then(() => undefined, () => undefined)]);
  }
  const uploadMs = performance.now() - started;
  if (!answered && !req.destroyed) req.end();
  const { status, body } = await response;
  return { status, body, upload_ms: uploadMs, total_ms: performance.now() - started, bytes_sent: sent };
}

/** A multipart/form-data body with one file part `audio`: its boundary, preamble and epilogue. */
export function multipartFrame(filename: string, contentType: string): { contentType: string; head: Buffer; tail: Buffer } {
  const boundary = `----murmur-bench-${Math.random().toString(16).slice(2)}`;
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    head: Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="audio"; filename="${filename}"\r\nContent-Type: ${contentType}\r\n\r\n`),
    tail: Buffer.from(`\r\n--${boundary}--\r\n`),
  };
}

/**
 * A WAV file of exactly `totalBytes` bytes, as a header plus a count of zero bytes (silence):
 * 192 kHz stereo 32-bit PCM (1,536,000 bytes a second), so 500 MB is 325 s of audio — a real,
 * decodable file whose decode and recognition stay short while every byte still travels the
 * whole upload path. A JUNK chunk pads the header so the data is whole sample frames.
 */
export function bigWav(totalBytes: number): { header: Buffer; zeroBytes: number; seconds: number } {
  const rate = 192_000;
  const channels = 2;
  const bits = 32;
  const blockAlign = (channels * bits) / 8;
  const byteRate = rate * blockAlign;
  // RIFF chunks are word-aligned, so the JUNK payload is even: an odd total cannot be whole frames.
  if (totalBytes % 2 !== 0 || totalBytes < 1024) throw new Error(`bigWav needs an even size of at least 1 KiB, not ${totalBytes}`);
  let junk = 0;
  while ((totalBytes - (12 + 24 + 8 + junk + 8)) % blockAlign !== 0) junk += 2;
  const dataBytes = totalBytes - (12 + 24 + 8 + junk + 8);
  const h = Buffer.alloc(12 + 24 + 8 + junk + 8);
  let o = 0;
  o += h.write('RIFF', o, 'ascii');
  o = h.writeUInt32LE(totalBytes - 8, o);
  o += h.write('WAVE', o, 'ascii');
  o += h.write('fmt ', o, 'ascii');
  o = h.writeUInt32LE(16, o);
  o = h.writeUInt16LE(1, o); // PCM
  o = h.writeUInt16LE(channels, o);
  o = h.writeUInt32LE(rate, o);
  o = h.writeUInt32LE(byteRate, o);
  o = h.writeUInt16LE(blockAlign, o);
  o = h.writeUInt16LE(bits, o);
  o += h.write('JUNK', o, 'ascii');
  o = h.writeUInt32LE(junk, o);
  o += junk;
  o += h.write('data', o, 'ascii');
  h.writeUInt32LE(dataBytes, o);
  return { header: h, zeroBytes: dataBytes, seconds: dataBytes / byteRate };
}

const PIECE = 1024 * 1024;
const ZEROS = Buffer.alloc(PIECE);

/** `header` then `zeroBytes` zero bytes, in pieces of at most 1 MiB (one shared zero buffer). */
export function* rawPieces(header: Buffer, zeroBytes: number): Generator<Buffer> {
  yield header;
  for (let left = zeroBytes; left > 0; left -= PIECE) yield left >= PIECE ? ZEROS : ZEROS.subarray(0, left);
}

/** Length of the base64 text of `bytes` bytes (padded). */
export const base64Length = (bytes: number) => 4 * Math.ceil(bytes / 3);

/**
 * The base64 text of `header` followed by `zeroBytes` zero bytes, in pieces: the header's
 * bytes (topped up with zeros to a multiple of 3) are encoded once, then every 3 zero bytes
 * are "AAAA", then the padded tail — byte-for-byte what Buffer#toString('base64') gives for the
 * whole file, without ever holding it.
 */
export function* base64Pieces(header: Buffer, zeroBytes: number): Generator<string> {
  const pad = (3 - (header.length % 3)) % 3;
  if (zeroBytes < pad) {
    yield Buffer.concat([header, Buffer.alloc(zeroBytes)]).toString('base64');
    return;
  }
  yield Buffer.concat([header, Buffer.alloc(pad)]).toString('base64');
  const rest = zeroBytes - pad;
  const groups = Math.floor(rest / 3);
  const chunkGroups = PIECE / 4;
  const full = 'AAAA'.repeat(chunkGroups);
  for (let left = groups; left > 0; left -= chunkGroups) yield left >= chunkGroups ? full : 'AAAA'.repeat(left);
  if (rest % 3 !== 0) yield Buffer.alloc(rest % 3).toString('base64');
}
