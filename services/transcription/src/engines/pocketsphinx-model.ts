/**
 * What the batch engine (pocketsphinx.ts) and the live recognizer (src/live/live-recognizer.ts)
 * share about Debian's PocketSphinx: where its model is, the voice-activity threshold, and what is
 * not a word — so live and uploaded audio transcribe alike.
 */
import * as path from 'node:path';
import { access } from 'node:fs/promises';
import { EngineError } from './engine';

/** Where Debian's pocketsphinx-en-us installs the US English model. */
export const DEBIAN_POCKETSPHINX_MODEL_DIR = '/usr/share/pocketsphinx/model/en-us';
export const POCKETSPHINX_PACKAGES = 'apt-get install pocketsphinx pocketsphinx-en-us';
export const DEFAULT_VAD_THRESHOLD = 3.5;
/**
 * Fillers and markers that are not words: <s>, </s>, <sil>, [NOISE], [SPEECH], ++UH++ … (the
 * live recognizer, native/ps-live.c, drops the same in C; src/live checks its output with this).
 */
export function isFiller(word: string): boolean {
  return /^<.*>$/.test(word) || /^\[.*\]$/.test(word) || /^\+\+.*\+\+$/.test(word);
}

/** The model files of `modelDir`, checked to exist. */
export async function pocketsphinxModelFiles(modelDir: string): Promise<{ hmm: string; lm: string; dict: string }> {
  const files = {
    hmm: path.join(modelDir, 'en-us'),
    lm: path.join(modelDir, 'en-us.lm.bin'),
    dict: path.join(modelDir, 'cmudict-en-us.dict'),
  };
  for (const file of Object.values(files)) {
    try {
      await access(file);
    } catch {
      throw new EngineError(`the pocketsphinx US English model is missing (${file}); install it: ${POCKETSPHINX_PACKAGES}`);
    }
  }
  return files;
}

