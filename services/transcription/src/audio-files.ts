/**
 * The service's file work, all streamed through the temp folder of one call: spooling the
 * upload (with the size limit enforced while it streams), decoding it with ffmpeg to PCM while
 * the chunk planner watches the samples go by, and cutting a chunk out of the PCM as a WAV.
 */
import type { Hash } from 'node:crypto';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { MurmurError } from '@murmur/contract';
import { spawnProcess } from './process';
import { wavHeader } from './pcm';

/** Demuxers ffmpeg may use on an upload: common audio and audio-in-video containers, nothing
 * that can reference other files or URLs (no playlists, concat lists or image sequences). */
export const FFMPEG_FORMAT_WHITELIST = [
  'wav', 'w64', 'mp3', 'ogg', 'flac', 'aac', 'aiff', 'caf', 'au', 'amr', 'asf', 'ac3', 'eac3',
  'mov', 'mp4', 'm4a', '3gp', 'matroska', 'webm', 'avi', 'mpegts', 'mpeg',
].join(',');

export const FFMPEG_PACKAGE = 'apt-get install ffmpeg';

/**
 * Destroys a file write stream and waits until its descriptor is closed. A stream destroyed
 * while its open() is pending would create the file after the caller removed the folder, and
 * one destroyed with a write in flight emits ERR_STREAM_DESTROYED when that write returns:
 * that late error is swallowed here, so it neither crashes the process nor hides the error
 * that made the caller give up.
 */
export async function closeQuietly(out: WriteStream): Promise<void> {
  out.on('error', () => undefined);
  if (out.closed) return;
  const closed = new Promise<void>((resolve) => out.once('close', () => resolve()));
  out.destroy();
  await closed;
}

/**
 * Writes the audio chunks to `file`, counting bytes (and feeding `hash`, when given: the request
 * fingerprint). Over `maxBytes` → audio_too_large at once, before the rest is read; nothing at
 * all → missing_audio. Returns the byte count.
 */
export async function spoolUpload(chunks: AsyncIterable<Uint8Array>, file: string, maxBytes: number, hash?: Hash): Promise<number> {
  const out = createWriteStream(file);
  let bytes = 0;
  try {
    for await (const chunk of chunks) {
      if (chunk.length === 0) continue;
      bytes += chunk.length;
      if (bytes > maxBytes) {
        throw new MurmurError('audio_too_large', `The audio is larger than ${formatLimit(maxBytes)}. Split it into shorter files.`, {
          param: 'audio',
          meta: { max_bytes: String(maxBytes) },
        });
      }
      hash?.update(chunk);
      if (!out.write(chunk)) await once(out, 'drain');
    }
    out.end();
    await once(out, 'finish');
  } finally {
    await closeQuietly(out);
  }
  if (bytes === 0) throw new MurmurError('missing_audio', undefined, { param: 'audio' });
  return bytes;
}

function formatLimit(bytes: number): string {
  const mb = bytes / 1_000_000;
  return mb >= 1 ? `${Math.floor(mb)} MB` : `${bytes} bytes`;
}

/** ffmpeg exited without decodable audio; the message is safe to log (no content). */
export class UndecodableAudioError extends Error {}

/**
 * Decodes `input` (a file, so containers with their index at the end — MP4/M4A with a trailing
 * moov — work) to 16 kHz mono s16le PCM in `output`, handing every block to `onPcm` on the
 * way (the chunk planner, the paid-audio check). A promise from `onPcm` holds the block (and,
 * through backpressure, ffmpeg) until it settles; a rejection stops the decode. Returns the PCM
 * byte count. A failure to decode →
 * {@link UndecodableAudioError}; an abort kills ffmpeg and rejects with the abort reason.
 */
export async function decodeToPcm(
  input: string,
  output: string,
  opts: { signal: AbortSignal; onPcm?: (block: Buffer) => void | Promise<void>; ffmpegPath?: string },
): Promise<number> {
  const args = [
    '-nostdin', '-hide_banner', '-loglevel', 'error',
    '-protocol_whitelist', 'file', '-format_whitelist', FFMPEG_FORMAT_WHITELIST,
    '-i', input,
    '-map', '0:a:0', '-vn', '-sn', '-dn',
    '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', '-f', 's16le', 'pipe:1',
  ];
  const proc = spawnProcess(opts.ffmpegPath ?? 'ffmpeg', args, { signal: opts.signal, tailLines: 3 });
  let bytes = 0;
  const tap = new Transform({
    transform(block: Buffer, _enc, cb) {
      bytes += block.length;
      let waiting: void | Promise<void>;
      try {
        waiting = opts.onPcm?.(block);
      } catch (err) {
        cb(err as Error);
        return;
      }
      if (waiting) waiting.then(() => cb(null, block), (err: unknown) => cb(err as Error));
      else cb(null, block);
    },
  });
  const written = pipeline(proc.child.stdout, tap, createWriteStream(output)).then(
    () => undefined,
    (err: unknown) => {
      // onPcm refused more audio, or the disk failed: ffmpeg has nowhere to write, stop it.
      if (proc.child.exitCode === null) proc.child.kill('SIGKILL');
      return err;
    },
  );
  const [result, writeError] = await Promise.all([proc.done, written]);
  opts.signal.throwIfAborted();
  if (result.spawnError) {
    throw new Error(result.spawnError.code === 'ENOENT' ? `ffmpeg was not found; install it: ${FFMPEG_PACKAGE}` : `ffmpeg could not start: ${result.spawnError.message}`);
  }
  if (writeError) throw writeError;
  if (result.code !== 0) throw new UndecodableAudioError(`ffmpeg exited with ${result.signal ?? `code ${result.code}`}: ${result.stderrTail.join(' | ')}`);
  if (bytes === 0) throw new UndecodableAudioError('ffmpeg found no audio samples');
  return bytes;
}

/** Writes bytes [start, end) of the PCM file as a standalone WAV file. */
export async function writeWavSlice(pcmFile: string, start: number, end: number, wavFile: string): Promise<void> {
  const out = createWriteStream(wavFile);
  out.write(wavHeader(end - start));
  await pipeline(createReadStream(pcmFile, { start, end: end - 1 }), out);
}
