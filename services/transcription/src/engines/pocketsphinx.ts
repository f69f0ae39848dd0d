/**
 * The offline default: Debian's CMU PocketSphinx 5prealpha (`pocketsphinx` +
 * `pocketsphinx-en-us`), one `pocketsphinx_continuous` process per chunk:
 *
 *   pocketsphinx_continuous -infile chunk.wav -hmm <dir>/en-us -lm <dir>/en-us.lm.bin
 *     -dict <dir>/cmudict-en-us.dict -time yes -vad_threshold 3.5
 *
 * `-time yes` prints, after each utterance's hypothesis line, one line per word:
 * `word start end confidence` (seconds). The built-in voice activity detection
 * (`-remove_silence`, on by default) skips silence cheaply and, in this version, keeps word
 * times absolute within the file (checked: the second utterance of speech + 5 s silence +
 * speech starts at 7.87 s). `pocketsphinx_batch -ctm` was rejected: its times drop the
 * removed silence. Words become segments at pauses over 0.5 s or every 12 words.
 *
 * `-vad_threshold 3.5` (default 2.0): with the default, the quiet noise floor of a pause (and
 * most chunks start in one) is taken for an utterance, and the recogniser's adaptation to it
 * ruins the speech after it. Measured WER, LibriVox clean / with pink noise / after 15 s of
 * room noise / the 3-minute file of the long-audio test over five noise seeds / espeak:
 *   2.0 → 0.37 / 0.35 / 0.64 / 0.59–0.69 / 0.67
 *   3.0 → 0.37 / 0.35 / 0.39 / 0.35–0.65 / 0.67
 *   3.5 → 0.37 / 0.38 / 0.39 / 0.31–0.37 / 0.65   ← chosen
 *   4.0 → 0.39 / 0.76 / 0.39 / 0.32–0.35 / 0.65   (starts dropping speech in noise)
 * `-remove_noise` stays on: off wins on clean speech (0.30) but loses badly in noise (0.47).
 */
import { access, readFile } from 'node:fs/promises';
import * as path from 'node:path';
import type { TimedSegment } from '../stitch';
import { spawnProcess } from '../process';
import { ENGINE_CAPABILITIES } from './capabilities';
import { segmentsFromWords } from './words';
import { startLiveRecognizer } from '../live/live-recognizer';
import { EngineError, isEnglish, type Recognition, type RecognizeOptions, type SpeechEngine } from './engine';
import { DEBIAN_POCKETSPHINX_MODEL_DIR, DEFAULT_VAD_THRESHOLD, isFiller, POCKETSPHINX_PACKAGES, pocketsphinxModelFiles } from './pocketsphinx-model';

export { DEBIAN_POCKETSPHINX_MODEL_DIR, DEFAULT_VAD_THRESHOLD, isFiller, POCKETSPHINX_PACKAGES, pocketsphinxModelFiles };

/**
 * Each process pays ~0.3 s of CPU to start and load the model (5 % of a 30 s chunk's work),
 * and recognises better with more context (its noise and cepstral-mean estimates settle over
 * the first seconds; LibriVox ×12: WER 0.296 in 75 s runs, 0.316 in 30 s pieces, 0.293 in one
 * pass), while its own voice activity detection segments long audio. So it gets runs of
 * silence-cut pieces of up to 90 s (plan.ts keeps enough of them to balance the cores).
 * Measured in `npm run bench -- transcribe` (c).
 */
export const POCKETSPHINX_MAX_CHUNK_SECONDS = 90;

export interface PocketsphinxOptions {
  /** Default `pocketsphinx_continuous` (on PATH). */
  binary?: string;
  /** Folder holding en-us/, en-us.lm.bin and cmudict-en-us.dict (default Debian's). */
  modelDir?: string;
  /** `-vad_threshold` (default 3.5, see above). */
  vadThreshold?: number;
  /** The live recognizer (default src/live's LIVE_BINARY, built by scripts/build-native.js). */
  liveBinary?: string;
  /** Longest chunk handed to one process, in seconds (default {@link POCKETSPHINX_MAX_CHUNK_SECONDS}). */
  maxChunkSeconds?: number;
}

/** One recognised word with its times in seconds and its posterior probability (0–1). */
export interface TimedWord {
  word: string;
  start: number;
  end: number;
  confidence: number;
}

const WORD_LINE = /^(\S+) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?) (-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)$/i;

/** The words of `pocketsphinx_continuous -time yes` output, alternative-pronunciation marks removed. */
export function parsePocketsphinxWords(stdout: string): TimedWord[] {
  const words: TimedWord[] = [];
  for (const raw of stdout.split('\n')) {
    const m = WORD_LINE.exec(raw.trim());
    if (!m) continue;
    const word = m[1]!.replace(/\(\d+\)$/, '');
    if (isFiller(word)) continue;
    const p = Number(m[4]);
    words.push({ word, start: Number(m[2]), end: Number(m[3]), confidence: Number.isFinite(p) ? Math.min(1, Math.max(0, p)) : 0 });
  }
  return words;
}

/** Groups words into segments: a new one after a pause longer than `maxGap` or at `maxWords` (engines/words.ts). */
export function groupWords(words: readonly TimedWord[], opts: { maxGap?: number; maxWords?: number } = {}): TimedSegment[] {
  return segmentsFromWords(
    words.map((w) => ({ text: w.word, start: w.start, end: w.end })),
    opts,
  );
}

/** The dictionary's words, read once per file (cmudict-en-us: ~135,000 entries, ~40 ms). */
const dictionaries = new Map<string, Promise<Set<string>>>();

function dictionaryWords(dictFile: string): Promise<Set<string>> {
  let words = dictionaries.get(dictFile);
  if (!words) {
    words = readFile(dictFile, 'utf8').then((text) => {
      const set = new Set<string>();
      for (const line of text.split('\n')) {
        const head = line.slice(0, line.indexOf(' ')).replace(/\(\d+\)$/, '');
        if (head) set.add(head.toLowerCase());
      }
      return set;
    });
    words.catch(() => dictionaries.delete(dictFile));
    dictionaries.set(dictFile, words);
  }
  return words;
}

/**
 * The words of `terms` that `dictFile` lacks. PocketSphinx recognises only words its
 * dictionary and language model know; adding a pronunciation (espeak-ng could make one) would
 * still leave the word out of the n-gram model, so it would never be chosen: such terms are
 * refused rather than silently ignored (docs/timelines.md, "Key terms").
 */
export async function wordsMissingFrom(dictFile: string, terms: readonly string[]): Promise<string[]> {
  const known = await dictionaryWords(dictFile);
  const missing = new Set<string>();
  for (const term of terms) {
    for (const word of term.toLowerCase().split(/[\s-]+/)) {
      if (word && !known.has(word)) missing.add(word);
    }
  }
  return [...missing];
}

/** Creates the pocketsphinx engine (it checks nothing; main's preflight checks the install). */
export function createPocketsphinxEngine(opts: PocketsphinxOptions = {}): SpeechEngine {
  const binary = opts.binary ?? 'pocketsphinx_continuous';
  const modelDir = opts.modelDir ?? DEBIAN_POCKETSPHINX_MODEL_DIR;
  const vadThreshold = (opts.vadThreshold ?? DEFAULT_VAD_THRESHOLD).toFixed(2);
  return {
    name: 'pocketsphinx',
    model: path.basename(modelDir) || 'en-us',
    maxChunkSeconds: opts.maxChunkSeconds ?? POCKETSPHINX_MAX_CHUNK_SECONDS,
    capabilities: ENGINE_CAPABILITIES.pocketsphinx,
    supportsLanguage: isEnglish,
    async unknownWords(terms) {
      const { dict } = await pocketsphinxModelFiles(modelDir);
      return wordsMissingFrom(dict, terms);
    },
    // Live streams: one incremental recognizer process per stream, same model and threshold (src/live/).
    startLive: (o) => startLiveRecognizer({ modelDir, vadThreshold: Number(vadThreshold), ...(opts.liveBinary ? { binary: opts.liveBinary } : {}), ...o }),
    async recognize(wavPath: string, { signal }: RecognizeOptions): Promise<Recognition> {
      signal.throwIfAborted();
      const model = await pocketsphinxModelFiles(modelDir);
      const args = ['-infile', wavPath, '-hmm', model.hmm, '-lm', model.lm, '-dict', model.dict, '-time', 'yes', '-vad_threshold', vadThreshold];
      const proc = spawnProcess(binary, args, { signal, stderrFilter: (l) => /^(ERROR|FATAL|FATAL_ERROR)\b/.test(l) });
      let stdout = '';
      proc.child.stdout.setEncoding('utf8');
      proc.child.stdout.on('data', (d: string) => {
        stdout += d;
      });
      const result = await proc.done;
      signal.throwIfAborted();
      if (result.spawnError) {
        throw new EngineError(
          result.spawnError.code === 'ENOENT' ? `${binary} was not found; install it: ${POCKETSPHINX_PACKAGES}` : `${binary} could not start: ${result.spawnError.message}`,
        );
      }
      if (result.code !== 0) {
        throw new EngineError(`${binary} exited with ${result.signal ?? `code ${result.code}`}: ${result.stderrTail.join(' | ') || 'no error output'}`);
      }
      const words = parsePocketsphinxWords(stdout);
      return {
        text: words.map((w) => w.word).join(' '),
        segments: groupWords(words),
        words: words.map((w) => ({ text: w.word, start: w.start, end: w.end, confidence: w.confidence })),
        language: 'en',
      };
    },
  };
}
