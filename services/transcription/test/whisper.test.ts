/**
 * The whisper engine through @fugood/whisper.node with whisper.cpp's own test model
 * (../shared/models/for-tests-ggml-tiny.en.bin: the real file format, no weights). It loads and
 * transcribes to an empty text — which exercises the whole load → decode → transcribe → charge
 * path — and proves nothing about accuracy. One transcription costs ~15 s of CPU (a full
 * 30 s encoder window on garbage weights), so there is exactly one.
 */
import { existsSync } from 'node:fs';
import { mkdir, symlink } from 'node:fs/promises';
import * as path from 'node:path';
import { loadConfig } from '@murmur/kit';
import { createEngineFromConfig, transcriptionConfigSchema } from '../src/config';
import type { SpeechEngine } from '../src/engines/engine';
import { createWhisperEngine } from '../src/engines/whisper';
import { LIBRIVOX_DIR, tempDir } from './fixtures';
import { config, newUser, startStack, transcribeFile, usageOf, type Stack } from './harness';

const MODEL = process.env.MURMUR_TEST_WHISPER_MODEL ?? path.resolve(__dirname, '../../../../shared/models/for-tests-ggml-tiny.en.bin');
const present = existsSync(MODEL);
if (!present) process.stderr.write(`whisper tests skipped: no test model at ${MODEL}\n`);

(present ? describe : describe.skip)('whisper engine (whisper.cpp test model)', () => {
  let engine: SpeechEngine;
  let stack: Stack;
  let tmp: Awaited<ReturnType<typeof tempDir>>;

  beforeAll(async () => {
    engine = await createWhisperEngine({ modelPath: MODEL, threads: 2 });
    [stack, tmp] = await Promise.all([startStack({ engine, concurrency: 2 }), tempDir('murmur-whisper-')]);
  });
  afterAll(async () => {
    await stack?.stop();
    await engine?.close?.();
    await tmp?.remove();
  });

  it('loads the model and transcribes through the service to an empty transcript, charged by duration', async () => {
    const user = newUser();
    const wav = path.join(LIBRIVOX_DIR, 'sense_and_sensibility_01_austen_64kb-0880.wav');
    const r = await transcribeFile(stack.client, wav, config(user, { filename: 'speech.wav' }));
    expect(r).toMatchObject({ text: '', segments: [], model: 'whisper/for-tests-ggml-tiny.en', language: 'en', creditsCharged: 1 });
    expect(r.durationSeconds).toBeCloseTo(2.99, 1);
    expect(await usageOf(stack.billing, user)).toMatchObject({ creditsUsed: 1, creditsReserved: 0, transcriptionSeconds: 3 });
  }, 120_000);

  it('is chosen automatically when a ggml model is in MURMUR_MODELS_DIR', async () => {
    const dir = path.join(tmp.dir, 'models');
    await mkdir(dir);
    await symlink(MODEL, path.join(dir, 'ggml-tiny.en.bin'));
    const { name, engine: auto } = await createEngineFromConfig(loadConfig(transcriptionConfigSchema, { MURMUR_MODELS_DIR: dir }));
    expect([name, auto.name, auto.model]).toEqual(['whisper', 'whisper', 'ggml-tiny.en']);
    await auto.close?.();
  });
});

// Needs no model: it runs wherever the tests run.
describe('whisper engine without a model file', () => {
  it('fails with the fetch command when the model file is missing', async () => {
    const tmp = await tempDir('murmur-whisper-none-');
    try {
      await expect(createWhisperEngine({ modelPath: path.join(tmp.dir, 'ggml-none.bin') })).rejects.toThrow('npm run models -- fetch base.en');
    } finally {
      await tmp.remove();
    }
  });
});
