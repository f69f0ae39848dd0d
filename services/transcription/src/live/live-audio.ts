/**
 * A live stream's audio as the recognizer takes it: 16 kHz mono s16le PCM, in order, as soon as
 * it can be had. 16 kHz linear16 passes through as it is; other rates, WebM and Ogg go through
 * one ffmpeg process per stream (stdin the client's bytes, stdout PCM, flushed per packet so no
 * audio waits in its buffers). Audio that is not what the stream declared is unsupported_audio,
 * naming what it looks like instead.
 */
import { MurmurError, type LiveEncoding } from '@murmur/contract';
import { spawnProcess } from '../process';
import { SAMPLE_RATE } from '../pcm';

/** The audio format a stream declared. */
export interface LiveFormat {
  encoding: LiveEncoding;
  /** Samples per second of linear16 audio. */
  sampleRate: number;
}

export interface LiveAudio {
  /** Takes the next bytes as the client sent them; resolves once they were taken (backpressure). */
  write(bytes: Uint8Array): Promise<void>;
  /** No more audio: resolves once every PCM byte went to `onPcm`. */
  end(): Promise<void>;
  /** Stops at once. */
  kill(): void;
}

/** Containers recognised by their first bytes: a stream that declared linear16 and sends one of these is told so. */
const CONTAINERS: ReadonlyArray<{ name: string; encoding: string; magic: number[] }> = [
  { name: 'WebM/Matroska', encoding: 'encoding=webm', magic: [0x1a, 0x45, 0xdf, 0xa3] },
  { name: 'Ogg', encoding: 'encoding=ogg', magic: [0x4f, 0x67, 0x67, 0x53] },
  { name: 'WAV (RIFF)', encoding: 'the samples without the WAV header', magic: [0x52, 0x49, 0x46, 0x46] },
  { name: 'FLAC', encoding: 'linear16 or webm', magic: [0x66, 0x4c, 0x61, 0x43] },
  { name: 'MP3 (ID3)', encoding: 'linear16 or webm', magic: [0x49, 0x44, 0x33] },
];

function containerOf(bytes: Uint8Array): (typeof CONTAINERS)[number] | undefined {
  return CONTAINERS.find((c) => c.magic.length <= bytes.length && c.magic.every((b, i) => bytes[i] === b));
}

function notLinear16(container: (typeof CONTAINERS)[number]): MurmurError {
  return new MurmurError('unsupported_audio', `The stream declared encoding=linear16 (raw 16-bit PCM) but the audio is ${container.name}. Send ${container.encoding}.`, { param: 'encoding' });
}

/** ffmpeg's input options for a declared format. */
function inputArgs(format: LiveFormat): string[] {
  switch (format.encoding) {
    case 'linear16':
      return ['-f', 's16le', '-ar', String(format.sampleRate), '-ac', '1', '-probesize', '32', '-analyzeduration', '0'];
    case 'webm':
      return ['-f', 'matroska', '-analyzeduration', '0'];
    case 'ogg':
      return ['-f', 'ogg', '-analyzeduration', '0'];
  }
}

/**
 * Opens the audio path of one stream. `onPcm` gets the PCM in order; the next block waits for it
 * to settle, so a slow recognizer slows the client (through the socket) instead of growing a queue.
 */
export function openLiveAudio(format: LiveFormat, onPcm: (pcm: Buffer) => Promise<void>, opts: { ffmpegPath?: string; signal: AbortSignal }): LiveAudio {
  if (format.encoding === 'linear16' && format.sampleRate === SAMPLE_RATE) return passThrough(onPcm);
  return throughFfmpeg(format, onPcm, opts);
}

/** 16 kHz linear16: the bytes are the PCM (an odd byte waits for its pair). */
function passThrough(onPcm: (pcm: Buffer) => Promise<void>): LiveAudio {
  let first = true;
  let carry: Buffer | undefined;
  return {
    async write(bytes) {
      if (first && bytes.length > 0) {
        first = false;
        const container = containerOf(bytes);
        if (container) throw notLinear16(container);
      }
      let pcm = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      if (carry) pcm = Buffer.concat([carry, pcm]);
      carry = undefined;
      if (pcm.length % 2 === 1) {
        carry = pcm.subarray(pcm.length - 1);
        pcm = pcm.subarray(0, pcm.length - 1);
      }
      if (pcm.length > 0) await onPcm(pcm);
    },
    async end() {},
    kill() {},
  };
}

function throughFfmpeg(format: LiveFormat, onPcm: (pcm: Buffer) => Promise<void>, opts: { ffmpegPath?: string; signal: AbortSignal }): LiveAudio {
  const killer = new AbortController();
  const signal = AbortSignal.any([opts.signal, killer.signal]);
  const args = ['-hide_banner', '-loglevel', 'error', '-fflags', '+nobuffer', ...inputArgs(format), '-i', 'pipe:0', '-f', 's16le', '-ac', '1', '-ar', String(SAMPLE_RATE), '-flush_packets', '1', 'pipe:1'];
  const proc = spawnProcess(opts.ffmpegPath ?? 'ffmpeg', args, { signal, stdin: 'pipe', tailLines: 3 });
  const stdin = proc.child.stdin!;
  // A write after ffmpeg exited is answered by `done` below, not by an unhandled EPIPE.
  stdin.on('error', () => undefined);
  let first = true;
  let failure: MurmurError | undefined;
  // PCM handed on strictly in order, one block at a time.
  const delivered = (async () => {
    for await (const block of proc.child.stdout as AsyncIterable<Buffer>) {
      if (signal.aborted) return;
      await onPcm(block);
    }
  })();
  const done = proc.done.then(async (result) => {
    await delivered;
    if (killer.signal.aborted || opts.signal.aborted) return;
    if (result.spawnError) throw new Error(`ffmpeg could not start: ${result.spawnError.message}`);
    if (result.code !== 0) {
      failure = new MurmurError('unsupported_audio', `The audio could not be decoded as ${format.encoding === 'linear16' ? `linear16 at ${format.sampleRate} Hz` : format.encoding}. Check the stream's \`encoding\`.`, { param: 'encoding' });
      throw failure;
    }
  });
  // Seen by whoever awaits end(), or by write() the moment ffmpeg fails.
  done.catch(() => undefined);
  return {
    async write(bytes) {
      if (failure) throw failure;
      if (first && bytes.length > 0 && format.encoding === 'linear16') {
        first = false;
        const container = containerOf(bytes);
        if (container) throw notLinear16(container);
      }
      if (!stdin.write(bytes)) {
        await Promise.race([new Promise<void>((resolve) => stdin.once('drain', () => resolve())), done.then(() => undefined)]);
      }
      if (failure) throw failure;
    },
    async end() {
      stdin.end();
      await done;
    },
    kill() {
      killer.abort();
    },
  };
}
