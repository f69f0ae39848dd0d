/**
 * The two halves of a transcription, on files in one call's temp folder: decode (ffmpeg → PCM
 * on disk while the silence chunker cuts pieces) and recognise (chunks through the engine,
 * bounded by a shared semaphore, stitched in order). The service runs them around billing;
 * the benchmark runs them bare to measure what the platform adds.
 */
import { rm } from 'node:fs/promises';
import * as path from 'node:path';
import { decodeToPcm, writeWavSlice } from './audio-files';
import { SilenceChunker, type ChunkRange } from './chunker';
import type { SpeechEngine } from './engines/engine';
import { BYTES_PER_SECOND } from './pcm';
import { mapInOrder, type Semaphore } from './pool';
import { stitchChunks, type ChunkTranscript, type StitchedTranscript } from './stitch';

export interface DecodedAudio {
  /** 16 kHz mono s16le PCM. */
  pcmFile: string;
  durationSeconds: number;
  /** Silence-cut pieces of ≤ 30 s covering the whole PCM, in order. */
  pieces: ChunkRange[];
}

export interface DecodeOptions {
  signal: AbortSignal;
  /** Stop decoding past this many PCM bytes, throwing `tooLong()`. */
  maxPcmBytes?: number;
  tooLong?: () => Error;
  ffmpegPath?: string;
  /** Told the PCM bytes decoded so far after each block; a promise holds the decode until it settles (paid-audio.ts). */
  paid?: (decodedBytes: number) => Promise<void> | undefined;
}

/** Decodes `input` into `dir`/audio.pcm, cutting pieces on the way (see {@link decodeToPcm}). */
export async function decodeAndCut(input: string, dir: string, opts: DecodeOptions): Promise<DecodedAudio> {
  const pcmFile = path.join(dir, 'audio.pcm');
  const chunker = new SilenceChunker();
  const pieces: ChunkRange[] = [];
  let decoded = 0;
  const bytes = await decodeToPcm(input, pcmFile, {
    signal: opts.signal,
    onPcm: (block) => {
      decoded += block.length;
      if (opts.maxPcmBytes !== undefined && decoded > opts.maxPcmBytes) throw opts.tooLong?.() ?? new Error('the audio is too long');
      pieces.push(...chunker.push(block));
      return opts.paid?.(decoded);
    },
    ...(opts.ffmpegPath ? { ffmpegPath: opts.ffmpegPath } : {}),
  });
  pieces.push(...chunker.finish());
  return { pcmFile, durationSeconds: bytes / BYTES_PER_SECOND, pieces };
}

export interface RecognizeChunksOptions {
  engine: SpeechEngine;
  language: string;
  /** Passed to the engine (its capabilities say how it uses them). */
  keyterms?: readonly string[];
  signal: AbortSignal;
  /** Slots shared with every other running call. */
  semaphore: Semaphore;
  /** This call's chunks in flight at most. */
  limit: number;
  /** Chunks recognised before (a resumed job), by index: not recognised again. */
  done?: ReadonlyMap<number, ChunkTranscript & { language?: string }>;
  /** Called once per chunk recognised now, before the next one is taken (a job records it). */
  onChunk?: (index: number, chunk: ChunkTranscript, language: string) => Promise<void>;
}

/** Recognises `chunks` of the PCM (each cut out as a WAV, removed after) and stitches them. */
export async function recognizeChunks(
  chunks: ReadonlyArray<Pick<ChunkRange, 'startByte' | 'endByte'>>,
  pcmFile: string,
  dir: string,
  opts: RecognizeChunksOptions,
): Promise<{ transcript: StitchedTranscript; language: string }> {
  // The language a resumed job's earlier chunks reported, else the first one reported now.
  let reported = [...(opts.done?.entries() ?? [])].sort((a, b) => a[0] - b[0]).find(([, c]) => c.language)?.[1].language ?? '';
  const todo = chunks.map((chunk, index) => ({ chunk, index })).filter(({ index }) => !opts.done?.has(index));
  const fresh = await mapInOrder(todo, { limit: opts.limit, semaphore: opts.semaphore, signal: opts.signal }, async ({ chunk, index }, _at, chunkSignal): Promise<ChunkTranscript> => {
    const wav = path.join(dir, `chunk-${index}.wav`);
    await writeWavSlice(pcmFile, chunk.startByte, chunk.endByte, wav);
    try {
      const recognition = await opts.engine.recognize(wav, { language: opts.language, signal: chunkSignal, ...(opts.keyterms ? { keyterms: opts.keyterms } : {}) });
      if (!reported && recognition.language) reported = recognition.language;
      const result: ChunkTranscript = {
        offset: chunk.startByte / BYTES_PER_SECOND,
        duration: (chunk.endByte - chunk.startByte) / BYTES_PER_SECOND,
        text: recognition.text,
        segments: recognition.segments,
        ...(recognition.words ? { words: recognition.words } : {}),
      };
      await opts.onChunk?.(index, result, recognition.language ?? '');
      return result;
    } finally {
      await rm(wav, { force: true });
    }
  });
  const byIndex = new Map<number, ChunkTranscript>(opts.done ?? []);
  todo.forEach(({ index }, at) => byIndex.set(index, fresh[at]!));
  return { transcript: stitchChunks(chunks.map((_c, index) => byIndex.get(index)!)), language: reported };
}
