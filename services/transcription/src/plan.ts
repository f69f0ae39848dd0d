/**
 * From the silence-cut pieces of a file to the chunks an engine is handed. Pure.
 *
 * The chunker cuts the PCM on silence into pieces of at most 30 s. Two things then depend on
 * the engine and the file:
 *
 * - **Silent pieces are not recognised.** A piece whose loudest 20 ms frame stays under
 *   {@link SILENT_PEAK_RMS} (-70 dBFS) holds nothing an engine could hear; skipping it saves an
 *   engine run per half-minute of a recording's silences (and spares Whisper its habit of
 *   inventing words in silence).
 * - **Consecutive pieces are grouped up to the engine's longest chunk.** Whisper reads 30 s at
 *   a time, so it gets the pieces as they are. PocketSphinx pays a fixed start (process and
 *   model load) per chunk, recognises better with more context and segments long audio
 *   itself, so for it consecutive pieces are joined into a few runs of about equal length: a
 *   multiple of the cores, so they all finish together, and at least
 *   {@link PARTS_PER_WORKER} per worker, so one slow run does not leave a core idle for long.
 */
import type { ChunkRange } from './chunker';
import { BYTES_PER_SECOND } from './pcm';

/** A piece whose loudest frame is under this RMS (s16 units; -70 dBFS) is silence. */
export const SILENT_PEAK_RMS = 10;

/** The pieces the chunker cuts: the whole-file plan starts from these (seconds). */
export const PIECE_SECONDS = 30;

/**
 * Runs per worker, at least, when joining: with fewer, one run that recognises slower than the
 * others leaves a core idle at the end (measured: 4 runs of 75 s on 2 cores took 38 s where
 * 11 pieces took 34 s).
 */
export const PARTS_PER_WORKER = 4;

export interface PlanOptions {
  /** The longest chunk the engine should get, in seconds (more than {@link PIECE_SECONDS} to join pieces). */
  maxChunkSeconds: number;
  /** Chunks recognised at once. */
  concurrency: number;
}

const secondsOf = (c: ChunkRange) => (c.endByte - c.startByte) / BYTES_PER_SECOND;

/** True when nothing in the piece is louder than {@link SILENT_PEAK_RMS}. */
export function isSilent(piece: ChunkRange): boolean {
  return piece.peakRms < SILENT_PEAK_RMS;
}

/**
 * The chunks to recognise, in order: silent pieces dropped; then, when the engine takes more
 * than a piece, the audible pieces are dealt into P runs of about equal length — P a multiple
 * of `concurrency`, at least {@link PARTS_PER_WORKER} per worker, and large enough that no run
 * passes `maxChunkSeconds` — by where each piece's middle falls on the audible timeline. A run
 * only joins pieces that touch (a dropped silence always separates two chunks).
 */
export function planRecognition(pieces: readonly ChunkRange[], opts: PlanOptions): ChunkRange[] {
  const audible = pieces.filter((p) => !isSilent(p));
  // A run may overshoot its share by up to one piece, so shares stay a piece under the limit.
  const room = opts.maxChunkSeconds - PIECE_SECONDS;
  if (room <= 0 || audible.length <= 1) return audible.map((p) => ({ ...p }));
  const total = audible.reduce((sum, p) => sum + secondsOf(p), 0);
  const workers = Math.max(1, Math.floor(opts.concurrency));
  const perWorker = Math.max(PARTS_PER_WORKER, Math.ceil(total / (room * workers)));
  const share = total / (workers * perWorker);
  const out: ChunkRange[] = [];
  let at = 0;
  let lastRun = -1;
  for (const piece of audible) {
    const length = secondsOf(piece);
    const run = Math.floor((at + length / 2) / share);
    at += length;
    const last = out[out.length - 1];
    if (last && run === lastRun && last.endByte === piece.startByte && secondsOf(last) + length <= opts.maxChunkSeconds) {
      out[out.length - 1] = { startByte: last.startByte, endByte: piece.endByte, peakRms: Math.max(last.peakRms, piece.peakRms) };
    } else {
      out.push({ ...piece });
    }
    lastRun = run;
  }
  return out;
}
