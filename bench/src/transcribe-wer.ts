/**
 * transcribe (d): word error rate of every speech engine that can run here, on the LibriVox
 * utterances of pocketsphinx-testdata.
 */
import { existsSync, readdirSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createOpenAiEngine, createWhisperEngine, wordErrorRate, type SpeechEngine, type WerResult } from '@murmur/transcription';
import { describe, ROOT } from './stack';
import { librivoxUtterances } from './transcribe-audio';

const CONCURRENCY = os.availableParallelism();
/** whisper.cpp's test model beside the repository (../shared/models), when nothing else is configured. */
const DEFAULT_WHISPER_MODEL = path.resolve(ROOT, '..', 'shared', 'models', 'for-tests-ggml-tiny.en.bin');
const round = (x: number, digits = 2) => Number(x.toFixed(digits));

/** Pooled WER over several (reference, hypothesis) pairs: all edits ÷ all reference words. */
function pooled(results: WerResult[]): number {
  const words = results.reduce((a, r) => a + r.referenceWords, 0);
  const edits = results.reduce((a, r) => a + r.substitutions + r.deletions + r.insertions, 0);
  return words === 0 ? 0 : round(edits / words, 4);
}

/** The whisper model to try: BENCH_WHISPER_MODEL, else the first ggml-*.bin of MURMUR_MODELS_DIR, else the shared test model. */
function whisperModelPath(): string | undefined {
  if (process.env.BENCH_WHISPER_MODEL) return process.env.BENCH_WHISPER_MODEL;
  const dir = process.env.MURMUR_MODELS_DIR;
  if (dir && existsSync(dir)) {
    const first = readdirSync(dir)
      .filter((n) => /^ggml-.+\.bin$/.test(n))
      .sort()[0];
    if (first) return path.join(dir, first);
  }
  return existsSync(DEFAULT_WHISPER_MODEL) ? DEFAULT_WHISPER_MODEL : undefined;
}

/** (d) WER of every engine that can run here, on the LibriVox set. */
export async function measureWer(pocketsphinx: SpeechEngine, setFile: string, log: (line: string) => void) {
  const utterances = librivoxUtterances();
  const reference = utterances.map((u) => u.text).join(' ');
  const signal = new AbortController().signal;
  const engines: Record<string, Record<string, unknown>> = {};

  // pocketsphinx: each utterance on its own (the usual test-set WER), and the set as one file.
  {
    const started = performance.now();
    const per: WerResult[] = [];
    const perUtterance: Record<string, number> = {};
    for (const u of utterances) {
      const r = await pocketsphinx.recognize(u.wav, { language: 'en', signal });
      const w = wordErrorRate(u.text, r.text);
      per.push(w);
      perUtterance[u.id] = round(w.wer, 4);
    }
    const whole = await pocketsphinx.recognize(setFile, { language: 'en', signal });
    engines.pocketsphinx = {
      available: true,
      model: pocketsphinx.model,
      wer: pooled(per),
      wer_set_as_one_file: round(wordErrorRate(reference, whole.text).wer, 4),
      per_utterance: perUtterance,
      seconds: round((performance.now() - started) / 1000),
    };
    log(`(d) pocketsphinx WER ${pooled(per)} (pooled over ${utterances.length} utterances)`);
  }

  // whisper.cpp on the set as one file (one chunk): a real model would be judged here too.
  const modelPath = whisperModelPath();
  if (!modelPath) {
    engines.whisper = { available: false, detail: 'no ggml model: set BENCH_WHISPER_MODEL or MURMUR_MODELS_DIR' };
  } else {
    try {
      const started = performance.now();
      const whisper = await createWhisperEngine({ modelPath, threads: CONCURRENCY });
      try {
        const r = await whisper.recognize(setFile, { language: 'en', signal });
        const w = wordErrorRate(reference, r.text);
        const testModel = /for-tests/.test(path.basename(modelPath));
        engines.whisper = {
          available: true,
          model: whisper.model,
          model_path: modelPath,
          wer: round(w.wer, 4),
          hypothesis_words: w.referenceWords - w.deletions + w.insertions,
          text_empty: r.text.trim() === '',
          seconds: round((performance.now() - started) / 1000),
          ...(testModel
            ? {
                note: "whisper.cpp's own test model (real file format, no weights): it loads and runs the whole whisper path but returns an empty transcript, so WER is 1.0 by construction. It says nothing about Whisper's accuracy; no real Whisper weights can be had on this machine.",
              }
            : {}),
        };
        log(`(d) whisper (${whisper.model}) WER ${round(w.wer, 4)}${r.text.trim() === '' ? ' (empty transcript)' : ''}`);
      } finally {
        await whisper.close?.();
      }
    } catch (err) {
      engines.whisper = { available: false, model_path: modelPath, detail: describe(err) };
    }
  }

  // openai: only against an endpoint the operator configured.
  if (process.env.OPENAI_API_KEY || process.env.OPENAI_BASE_URL) {
    try {
      const openai = createOpenAiEngine({
        baseUrl: process.env.OPENAI_BASE_URL ?? 'https://api.openai.com',
        model: process.env.MURMUR_OPENAI_TRANSCRIBE_MODEL ?? 'whisper-1',
        timeoutMs: 120_000,
        ...(process.env.OPENAI_API_KEY ? { apiKey: process.env.OPENAI_API_KEY } : {}),
      });
      const r = await openai.recognize(setFile, { language: 'en', signal });
      engines.openai = { available: true, model: openai.model, wer: round(wordErrorRate(reference, r.text).wer, 4) };
    } catch (err) {
      engines.openai = { available: false, detail: describe(err) };
    }
  } else {
    engines.openai = { available: false, detail: 'not run: needs OPENAI_API_KEY or OPENAI_BASE_URL (an OpenAI-compatible transcription endpoint); none is reachable here' };
  }
  return {
    test_set: `${utterances.length} LibriVox utterances of pocketsphinx-testdata (${reference.split(' ').length} reference words); pocketsphinx: pooled over the utterances, each recognised alone; whisper and openai: the set concatenated into one ~25 s file (one chunk)`,
    normalisation: 'wordErrorRate of @murmur/transcription: lower case, punctuation dropped, digits spelled',
    engines,
  };
}
