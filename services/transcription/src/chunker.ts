/**
 * Cuts long audio on silence into chunks an engine can take (≤ 30 s by default: Whisper's
 * window, and short enough that chunks recognise in parallel). Pure and streaming: PCM is
 * pushed block by block as ffmpeg decodes it and only the energies of the current window are
 * kept (≤ maxChunkSeconds / frameMs numbers), so a 2-hour file plans in constant memory.
 *
 * Rule: a chunk never exceeds the limit. When it would, the cut goes at the quietest point of
 * the last `searchSeconds` before the limit — the boundary whose surrounding `smoothFrames`
 * frames have the lowest mean RMS energy; on a quiet stretch, its middle (the latest stretch
 * on ties, the limit itself when the stretch reaches it) — so words are split only when there
 * is no pause at all.
 */
import { BYTES_PER_SAMPLE, SAMPLE_RATE } from './pcm';

export interface ChunkerOptions {
  /** Longest chunk, in seconds (default 30). */
  maxChunkSeconds?: number;
  /** How far back from the limit a cut may go, in seconds (default 5). */
  searchSeconds?: number;
  /** Energy frame length in milliseconds (default 20). */
  frameMs?: number;
  /** Frames averaged around a candidate boundary (default 6 → 120 ms). */
  smoothFrames?: number;
}

/** A half-open byte range [startByte, endByte) of the PCM. */
export interface ChunkRange {
  startByte: number;
  endByte: number;
  /** The loudest frame's RMS energy in the range (s16 units; 0 for digital silence). */
  peakRms: number;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** RMS energy of one frame of s16le samples. */
export function frameRms(frame: Buffer): number {
  const samples = Math.floor(frame.length / BYTES_PER_SAMPLE);
  if (samples === 0) return 0;
  let sum = 0;
  if (LITTLE_ENDIAN && frame.byteOffset % BYTES_PER_SAMPLE === 0) {
    const view = new Int16Array(frame.buffer, frame.byteOffset, samples);
    for (let i = 0; i < samples; i++) {
      const s = view[i] ?? 0;
      sum += s * s;
    }
  } else {
    for (let i = 0; i < samples; i++) {
      const s = frame.readInt16LE(i * BYTES_PER_SAMPLE);
      sum += s * s;
    }
  }
  return Math.sqrt(sum / samples);
}

/** The largest of the first `count` energies (0 for none). */
function peak(energies: readonly number[], count: number): number {
  let max = 0;
  for (let i = 0; i < count && i < energies.length; i++) max = Math.max(max, energies[i] ?? 0);
  return max;
}

/** Plans chunk boundaries over a PCM stream; feed it with {@link push}, end with {@link finish}. */
export class SilenceChunker {
  readonly frameBytes: number;
  readonly maxFrames: number;
  private readonly searchFrames: number;
  private readonly half: number;
  /** Energies of frames startFrame, startFrame+1, … (the open chunk plus lookahead). */
  private energies: number[] = [];
  private startFrame = 0;
  private carry: Buffer = Buffer.alloc(0);
  private totalBytes = 0;
  private finished = false;

  constructor(opts: ChunkerOptions = {}) {
    const frameMs = opts.frameMs ?? 20;
    this.frameBytes = Math.round((SAMPLE_RATE * frameMs) / 1000) * BYTES_PER_SAMPLE;
    this.maxFrames = Math.floor(((opts.maxChunkSeconds ?? 30) * 1000) / frameMs);
    this.searchFrames = Math.min(this.maxFrames - 1, Math.max(1, Math.floor(((opts.searchSeconds ?? 5) * 1000) / frameMs)));
    this.half = Math.max(1, Math.floor((opts.smoothFrames ?? 6) / 2));
    if (this.maxFrames < 2) throw new Error('maxChunkSeconds is too small for the frame length');
  }

  /** Frame energies currently held: bounded by maxFrames plus a few lookahead frames. */
  get bufferedFrames(): number {
    return this.energies.length;
  }

  /** Adds decoded PCM; returns the chunks it completed (in order, contiguous). */
  push(pcm: Buffer): ChunkRange[] {
    if (this.finished) throw new Error('push after finish');
    this.totalBytes += pcm.length;
    const data = this.carry.length > 0 ? Buffer.concat([this.carry, pcm]) : pcm;
    let offset = 0;
    while (data.length - offset >= this.frameBytes) {
      this.energies.push(frameRms(data.subarray(offset, offset + this.frameBytes)));
      offset += this.frameBytes;
    }
    this.carry = Buffer.from(data.subarray(offset));
    return this.cut(false);
  }

  /** Ends the stream; returns the remaining chunks (none for empty audio). */
  finish(): ChunkRange[] {
    if (this.finished) return [];
    this.finished = true;
    if (this.carry.length > 0) this.energies.push(frameRms(this.carry));
    const out = this.cut(true);
    const start = this.startFrame * this.frameBytes;
    if (this.totalBytes > start) out.push({ startByte: start, endByte: this.totalBytes, peakRms: peak(this.energies, this.energies.length) });
    this.energies = [];
    return out;
  }

  private cut(final: boolean): ChunkRange[] {
    const out: ChunkRange[] = [];
    const maxBytes = this.maxFrames * this.frameBytes;
    for (;;) {
      const openBytes = this.totalBytes - this.startFrame * this.frameBytes;
      if (openBytes <= maxBytes) break;
      // Wait for a little lookahead past the limit so the boundary at the limit is scored fairly.
      if (!final && this.energies.length < this.maxFrames + this.half) break;
      const b = this.quietestBoundary();
      out.push({ startByte: this.startFrame * this.frameBytes, endByte: (this.startFrame + b) * this.frameBytes, peakRms: peak(this.energies, b) });
      this.energies = this.energies.slice(b);
      this.startFrame += b;
    }
    return out;
  }

  /**
   * Chunk-relative boundary in (maxFrames - searchFrames, maxFrames] with the lowest smoothed
   * energy. Near-ties (within 1 % + 1 of the minimum) form runs; the latest run wins, cut in
   * its middle — or at the limit when the run reaches it (the quiet stretch goes on past it).
   */
  private quietestBoundary(): number {
    const first = this.maxFrames - this.searchFrames + 1;
    const scores: number[] = [];
    for (let b = first; b <= this.maxFrames; b++) {
      const lo = Math.max(0, b - this.half);
      const hi = Math.min(this.energies.length, b + this.half);
      let sum = 0;
      for (let i = lo; i < hi; i++) sum += this.energies[i] ?? 0;
      scores.push(hi > lo ? sum / (hi - lo) : 0);
    }
    const min = Math.min(...scores);
    const tolerance = min * 0.01 + 1;
    let runEnd = scores.length - 1;
    while (scores[runEnd]! > min + tolerance) runEnd--;
    if (runEnd === scores.length - 1) return this.maxFrames;
    let runStart = runEnd;
    while (runStart > 0 && scores[runStart - 1]! <= min + tolerance) runStart--;
    return first + Math.floor((runStart + runEnd) / 2);
  }
}

/** Plans the chunks of a whole in-memory PCM buffer (tests and small inputs). */
export function planChunks(pcm: Buffer, opts: ChunkerOptions = {}): ChunkRange[] {
  const chunker = new SilenceChunker(opts);
  return [...chunker.push(pcm), ...chunker.finish()];
}
