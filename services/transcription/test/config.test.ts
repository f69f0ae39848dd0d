/**
 * Engine choice and start-up checks: a missing Debian package, model or variable must fail
 * start-up with one line that says what to install or set.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { ConfigError, loadConfig } from '@murmur/kit';
import { chooseEngine, createEngineFromConfig, findWhisperModel, probeEngines, StartupError, transcriptionConfigSchema, webhookSecretSealerOf, type TranscriptionConfig } from '../src/config';
import { newSecretKeyEntry } from '../src/webhooks/secret-keys';
import { tempDir } from './fixtures';

let tmp: Awaited<ReturnType<typeof tempDir>>;
let emptyModels: string;
let withModels: string;

beforeAll(async () => {
  tmp = await tempDir('murmur-cfg-');
  emptyModels = path.join(tmp.dir, 'empty');
  withModels = path.join(tmp.dir, 'models');
  await mkdir(emptyModels);
  await mkdir(withModels);
  // Names only matter for the choice; these are not loaded.
  await writeFile(path.join(withModels, 'ggml-small.bin'), '');
  await writeFile(path.join(withModels, 'ggml-base.en.bin'), '');
  await writeFile(path.join(withModels, 'notes.txt'), '');
});
afterAll(() => tmp.remove());

const cfg = (env: Record<string, string>): TranscriptionConfig => loadConfig(transcriptionConfigSchema, env);

describe('engine choice', () => {
  it.each<[string, Record<string, string>, string]>([
    ['auto without a model → pocketsphinx', { MURMUR_MODELS_DIR: 'EMPTY' }, 'pocketsphinx'],
    ['auto with a missing models folder → pocketsphinx', { MURMUR_MODELS_DIR: '/nonexistent/models' }, 'pocketsphinx'],
    ['auto with a ggml model → whisper', { MURMUR_MODELS_DIR: 'MODELS' }, 'whisper'],
    ['an explicit engine wins', { MURMUR_MODELS_DIR: 'MODELS', MURMUR_TRANSCRIPTION_ENGINE: 'pocketsphinx' }, 'pocketsphinx'],
    ['openai only when asked', { MURMUR_TRANSCRIPTION_ENGINE: 'openai' }, 'openai'],
  ])('%s', async (_name, env, engine) => {
    const resolved = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === 'EMPTY' ? emptyModels : v === 'MODELS' ? withModels : v]));
    expect(await chooseEngine(cfg(resolved))).toBe(engine);
  });

  it('takes the first ggml-*.bin by name, or the one MURMUR_WHISPER_MODEL names', async () => {
    expect(await findWhisperModel({ MURMUR_MODELS_DIR: withModels, MURMUR_WHISPER_MODEL: undefined })).toBe(path.join(withModels, 'ggml-base.en.bin'));
    expect(await findWhisperModel({ MURMUR_MODELS_DIR: withModels, MURMUR_WHISPER_MODEL: 'ggml-small.bin' })).toBe(path.join(withModels, 'ggml-small.bin'));
  });

  it('refuses an unknown engine name at start-up', () => {
    expect(() => cfg({ MURMUR_TRANSCRIPTION_ENGINE: 'vosk' })).toThrow(ConfigError);
  });

  it('hands pocketsphinx chunks of at most MURMUR_POCKETSPHINX_MAX_CHUNK_SECONDS (10–90, default 90)', async () => {
    const engine = async (env: Record<string, string>) => (await createEngineFromConfig(cfg({ MURMUR_MODELS_DIR: emptyModels, ...env }))).engine;
    expect((await engine({})).maxChunkSeconds).toBe(90);
    expect((await engine({ MURMUR_POCKETSPHINX_MAX_CHUNK_SECONDS: '30' })).maxChunkSeconds).toBe(30);
    for (const bad of ['9', '91', '2.5']) expect(() => cfg({ MURMUR_POCKETSPHINX_MAX_CHUNK_SECONDS: bad })).toThrow(ConfigError);
  });

  it('defaults the concurrency to the number of CPUs', () => {
    expect(cfg({}).MURMUR_TRANSCRIBE_CONCURRENCY).toBeGreaterThanOrEqual(1);
    expect(cfg({ MURMUR_TRANSCRIBE_CONCURRENCY: '3' }).MURMUR_TRANSCRIBE_CONCURRENCY).toBe(3);
  });
});

describe('start-up checks', () => {
  async function startupError(env: Record<string, string>): Promise<string> {
    const err = await createEngineFromConfig(cfg(env)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StartupError);
    return (err as Error).message;
  }

  it('names the Debian package when ffmpeg is missing', async () => {
    expect(await startupError({ MURMUR_MODELS_DIR: emptyModels, MURMUR_FFMPEG_PATH: path.join(tmp.dir, 'no-bin/ffmpeg') })).toBe(
      'ffmpeg is not installed (it decodes every upload); install it: apt-get install ffmpeg',
    );
  });

  it('names the Debian packages when pocketsphinx is missing', async () => {
    expect(await startupError({ MURMUR_MODELS_DIR: emptyModels, MURMUR_POCKETSPHINX_PATH: path.join(tmp.dir, 'no-bin/pocketsphinx_continuous') })).toBe(
      'pocketsphinx is not installed (the default speech engine); install it: apt-get install pocketsphinx pocketsphinx-en-us',
    );
  });

  it('names the model package when the pocketsphinx model is missing', async () => {
    expect(await startupError({ MURMUR_MODELS_DIR: emptyModels, MURMUR_POCKETSPHINX_MODEL_DIR: path.join(tmp.dir, 'nope') })).toMatch(
      /the pocketsphinx US English model is missing .*apt-get install pocketsphinx pocketsphinx-en-us/,
    );
  });

  it('says how to fetch a model when whisper is asked for without one', async () => {
    expect(await startupError({ MURMUR_TRANSCRIPTION_ENGINE: 'whisper', MURMUR_MODELS_DIR: emptyModels })).toContain('npm run models -- fetch base.en');
  });

  it('says which variable openai needs', async () => {
    expect(await startupError({ MURMUR_TRANSCRIPTION_ENGINE: 'openai' })).toContain('OPENAI_API_KEY');
  });

  it('starts openai against a local server without a key, and pocketsphinx by default', async () => {
    expect((await createEngineFromConfig(cfg({ MURMUR_TRANSCRIPTION_ENGINE: 'openai', OPENAI_BASE_URL: 'http://127.0.0.1:8000/v1' }))).engine).toMatchObject({
      name: 'openai',
      model: 'whisper-1',
    });
    expect((await createEngineFromConfig(cfg({ MURMUR_MODELS_DIR: emptyModels }))).engine).toMatchObject({ name: 'pocketsphinx', model: 'en-us' });
  });

  it('reports every engine for ListEngines, the active one available, each with its capabilities', async () => {
    const engines = await probeEngines(cfg({ MURMUR_MODELS_DIR: emptyModels }), 'pocketsphinx');
    expect(engines).toEqual([
      { name: 'pocketsphinx', model: 'en-us', available: true, detail: '', capabilities: { words: true, languageDetection: false, keyterms: 'dictionary' } },
      { name: 'whisper', model: '', available: false, detail: expect.stringContaining('npm run models -- fetch base.en'), capabilities: { words: true, languageDetection: true, keyterms: 'prompt' } },
      { name: 'openai', model: 'whisper-1', available: false, detail: expect.stringContaining('OPENAI_API_KEY'), capabilities: { words: true, languageDetection: true, keyterms: 'prompt' } },
    ]);
    // An OpenAI-compatible server without word times is told so, and says so.
    const [, , openai] = await probeEngines(cfg({ MURMUR_MODELS_DIR: emptyModels, MURMUR_OPENAI_WORDS: 'false' }), 'pocketsphinx');
    expect(openai!.capabilities).toEqual({ words: false, languageDetection: true, keyterms: 'prompt' });
  });
});

describe('the webhook secret key', () => {
  it('comes from MURMUR_WEBHOOK_SECRET_KEY or the file MURMUR_WEBHOOK_SECRET_KEY_FILE names; without one the start fails saying what to set', async () => {
    expect(webhookSecretSealerOf(cfg({ MURMUR_WEBHOOK_SECRET_KEY: `${newSecretKeyEntry('k2')},${newSecretKeyEntry('k1')}` })).currentKeyId).toBe('k2');
    const file = path.join(tmp.dir, 'webhook.key');
    await writeFile(file, `${newSecretKeyEntry('fromfile')}\n`);
    expect(webhookSecretSealerOf(cfg({ MURMUR_WEBHOOK_SECRET_KEY_FILE: file })).currentKeyId).toBe('fromfile');
    expect(() => webhookSecretSealerOf(cfg({}))).toThrow(StartupError);
    expect(() => webhookSecretSealerOf(cfg({}))).toThrow(/MURMUR_WEBHOOK_SECRET_KEY/);
    expect(() => webhookSecretSealerOf(cfg({ MURMUR_WEBHOOK_SECRET_KEY_FILE: path.join(tmp.dir, 'none.key') }))).toThrow(/cannot read/);
    await writeFile(file, 'k1:short');
    expect(() => webhookSecretSealerOf(cfg({ MURMUR_WEBHOOK_SECRET_KEY_FILE: file }))).toThrow(/exactly 32 bytes/);
    expect(() => cfg({ MURMUR_WEBHOOK_SECRET_KEY: 'k1:short' })).toThrow(ConfigError);
    expect(cfg({}).MURMUR_WEBHOOK_ALLOW_HTTP).toBe('false');
  });
});
