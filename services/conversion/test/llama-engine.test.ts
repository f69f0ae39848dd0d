/**
 * The llama engine with a tiny GGUF model this test writes itself (test/support/gguf.ts),
 * through the real conversion, billing and library services: node-llama-cpp's prebuilt CPU
 * binding loads it, the kind's JSON-schema grammar constrains it, and its JSON goes through
 * the shared renderers. The model's words are meaningless ("x"); the path is what is tested.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { conversion } from '@murmur/proto';
import { createEngine, EngineConfigError, EngineError, llamaModelPath, loadConversionConfig, LlamaEngine, LocalEngine, parseCsv, type ConversionEngine } from '../src/index';
import { PRODUCT_SYNC } from './support/fixtures';
import { TINY_LLAMA_LETTER as X, writeTinyLlamaGguf } from './support/gguf';
import { convertRequest, failure, newUser, startHarness, transcriptSource, type Harness } from './support/harness';

let h: Harness;
let modelsDir: string;
let engine: ConversionEngine;

beforeAll(async () => {
  modelsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'murmur-models-'));
  writeTinyLlamaGguf(path.join(modelsDir, 'tiny-llama.gguf'));
  engine = createEngine(
    loadConversionConfig({ MURMUR_CONVERSION_ENGINE: 'llama', MURMUR_MODELS_DIR: modelsDir, MURMUR_LLAMA_THREADS: '1', MURMUR_LLAMA_MAX_TOKENS: '512' }),
  );
  h = await startHarness({ engineTimeoutMs: 120_000 });
  h.engine.current = engine;
});
afterAll(async () => {
  await h?.stop();
  await engine?.close?.();
  fs.rmSync(modelsDir, { recursive: true, force: true });
});

const usage = async (userId: string) => (await h.billing.getUsage({ userId })).usage!;

function convert(userId: string, kind: string, outputFormat = conversion.OutputFormat.OUTPUT_FORMAT_MARKDOWN, text = 'Dana will send the mocks by Friday.') {
  return h.conversion.convert(convertRequest({ userId, source: transcriptSource(text), kind, outputFormat, referenceTime: PRODUCT_SYNC.recordedAt }));
}

describe('a tiny generated GGUF', () => {
  it('is picked from MURMUR_MODELS_DIR when it is the only model there', () => {
    expect(engine).toBeInstanceOf(LlamaEngine);
    expect(llamaModelPath({ MURMUR_MODELS_DIR: modelsDir, MURMUR_LLAMA_MODEL: undefined })).toBe(path.join(modelsDir, 'tiny-llama.gguf'));
  });

  it('loads, answers under the action_items grammar, and the answer is rendered and charged', async () => {
    const userId = newUser();
    const r = await convert(userId, 'action_items');
    expect(r).toMatchObject({ engine: 'llama', kind: 'action_items' });
    expect(r.content).toBe(`## Action items\n\n- [ ] **${X}**: ${X}\n`);
    expect(await usage(userId)).toMatchObject({ conversions: 1, creditsUsed: r.creditsCharged, creditsReserved: 0 });
  });

  it('produces valid structured output for every kind', async () => {
    const userId = newUser();
    const out = new Map<string, string>();
    for (const kind of ['summary', 'key_points', 'email', 'meeting_notes'] as const) out.set(kind, (await convert(userId, kind)).content);
    expect(out.get('summary')).toBe(`## ${X}\n\n${X}\n`);
    expect(out.get('key_points')).toBe(`## ${X}\n\n- ${X}\n`);
    expect(out.get('email')).toContain(`**Subject:** ${X}\n\n${X}\n\n`);
    expect(out.get('meeting_notes')).toMatch(new RegExp(`^## ${X}\\n`));
    const csv = (await convert(userId, 'spreadsheet', conversion.OutputFormat.OUTPUT_FORMAT_PLAIN)).content;
    expect(parseCsv(csv)[0]).toEqual([X]);
  });

  it('condenses a transcript too long for its context and still answers', async () => {
    const long = `${PRODUCT_SYNC.text}\n\n${PRODUCT_SYNC.text}`;
    const r = await convert(newUser(), 'action_items', conversion.OutputFormat.OUTPUT_FORMAT_MARKDOWN, long);
    expect(r.content).toBe(`## Action items\n\n- [ ] **${X}**: ${X}\n`);
  });
});

describe('a model that cannot load', () => {
  afterEach(() => {
    h.engine.current = engine;
  });

  const truncated = () => {
    const whole = fs.readFileSync(path.join(modelsDir, 'tiny-llama.gguf'));
    return whole.subarray(0, Math.floor(whole.length / 2));
  };

  it.each([
    ['a truncated GGUF (llama.cpp refuses it)', truncated],
    ['a file that only starts with "GGUF"', () => Buffer.from('GGUF this is not a model at all')],
  ])('answers conversion_failed for %s, and releases the credits', async (_name, bytes) => {
    const bad = path.join(modelsDir, 'broken.bin');
    fs.writeFileSync(bad, bytes());
    const broken = new LlamaEngine({ modelPath: bad, contextSize: 2048, maxTokens: 256, threads: 1 });
    h.engine.current = broken;
    try {
      // The engine itself refuses the file (no time limit involved: a hang is jest's to catch)…
      const input = { transcript: 'A short note.', kind: 'summary' as const, format: 'markdown' as const, instructions: '', referenceTime: new Date(), signal: new AbortController().signal };
      const direct = await broken.convert(input).catch((e: unknown) => e);
      expect(direct).toBeInstanceOf(EngineError);
      expect((direct as Error).message).toMatch(/^the llama model could not be loaded: /);
      // …and the service answers that with conversion_failed, credits returned.
      const userId = newUser();
      const before = await usage(userId);
      const err = await failure(convert(userId, 'summary'));
      expect(err.code).toBe('conversion_failed');
      expect(await usage(userId)).toMatchObject({ monthlyCreditsRemaining: before.monthlyCreditsRemaining, creditsReserved: 0, conversions: 0 });
    } finally {
      fs.rmSync(bad);
    }
  });
});

describe('engine configuration', () => {
  it('defaults to the local engine', () => {
    expect(createEngine(loadConversionConfig({}))).toBeInstanceOf(LocalEngine);
  });

  it('refuses llama without a model, or with several and none named, at start-up', () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'murmur-empty-'));
    expect(() => createEngine(loadConversionConfig({ MURMUR_CONVERSION_ENGINE: 'llama', MURMUR_MODELS_DIR: empty }))).toThrow(EngineConfigError);
    fs.writeFileSync(path.join(empty, 'a.gguf'), '');
    fs.writeFileSync(path.join(empty, 'b.gguf'), '');
    expect(() => llamaModelPath({ MURMUR_MODELS_DIR: empty, MURMUR_LLAMA_MODEL: undefined })).toThrow(/2 \.gguf files; name one with MURMUR_LLAMA_MODEL/);
    expect(() => llamaModelPath({ MURMUR_MODELS_DIR: empty, MURMUR_LLAMA_MODEL: 'c.gguf' })).toThrow(/does not exist/);
    expect(llamaModelPath({ MURMUR_MODELS_DIR: empty, MURMUR_LLAMA_MODEL: 'b.gguf' })).toBe(path.join(empty, 'b.gguf'));
    fs.rmSync(empty, { recursive: true, force: true });
  });

  it('refuses a MURMUR_LLAMA_MODEL that is not a GGUF model at start-up', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'murmur-bad-'));
    fs.writeFileSync(path.join(dir, 'notes.gguf'), 'hello, this is certainly not a model file');
    expect(() => createEngine(loadConversionConfig({ MURMUR_CONVERSION_ENGINE: 'llama', MURMUR_MODELS_DIR: dir }))).toThrow(/not a GGUF model/);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses an unknown engine name with the variable named', () => {
    expect(() => loadConversionConfig({ MURMUR_CONVERSION_ENGINE: 'gpt' })).toThrow(/MURMUR_CONVERSION_ENGINE/);
  });
});
