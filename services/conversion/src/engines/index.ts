/** The engines, and the one place that picks one from configuration. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ConversionConfig } from '../config';
import type { ConversionEngine } from './engine';
import { ggufHeaderProblem, LlamaEngine } from './llama';
import { LocalEngine } from './local';
import { OpenAiEngine } from './openai';

export { EngineError, type ConversionEngine, type EngineInput } from './engine';
export { extractArtifact, LocalEngine } from './local';
export { condenseTranscript, ggufHeaderProblem, LlamaEngine, type LlamaEngineOptions } from './llama';
export { OpenAiEngine, strictSchema, type OpenAiEngineOptions } from './openai';
export { buildPrompt, modelArtifact, schemaFor } from './structured';

/** Thrown at start-up when the configured engine cannot run (no model file, …). */
export class EngineConfigError extends Error {
  override readonly name = 'EngineConfigError';
}

/** The GGUF file of MURMUR_LLAMA_MODEL, or the only one in MURMUR_MODELS_DIR. */
export function llamaModelPath(cfg: Pick<ConversionConfig, 'MURMUR_MODELS_DIR' | 'MURMUR_LLAMA_MODEL'>): string {
  const dir = path.resolve(cfg.MURMUR_MODELS_DIR);
  if (cfg.MURMUR_LLAMA_MODEL) {
    const file = path.resolve(dir, cfg.MURMUR_LLAMA_MODEL);
    if (!fs.existsSync(file)) throw new EngineConfigError(`MURMUR_LLAMA_MODEL: ${file} does not exist. Put the .gguf file in MURMUR_MODELS_DIR (${dir}).`);
    return file;
  }
  const found = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.toLowerCase().endsWith('.gguf')) : [];
  if (found.length === 1) return path.join(dir, found[0]!);
  throw new EngineConfigError(
    found.length === 0
      ? `MURMUR_CONVERSION_ENGINE=llama needs a .gguf model in MURMUR_MODELS_DIR (${dir}); none is there.`
      : `MURMUR_MODELS_DIR (${dir}) holds ${found.length} .gguf files; name one with MURMUR_LLAMA_MODEL.`,
  );
}

/** The engine the configuration asks for. */
export function createEngine(cfg: ConversionConfig): ConversionEngine {
  switch (cfg.MURMUR_CONVERSION_ENGINE) {
    case 'local':
      return new LocalEngine();
    case 'llama': {
      const modelPath = llamaModelPath(cfg);
      const problem = ggufHeaderProblem(modelPath);
      if (problem) throw new EngineConfigError(`MURMUR_LLAMA_MODEL: ${problem}.`);
      return new LlamaEngine({
        modelPath,
        contextSize: cfg.MURMUR_LLAMA_CONTEXT_SIZE,
        maxTokens: cfg.MURMUR_LLAMA_MAX_TOKENS,
        threads: cfg.MURMUR_LLAMA_THREADS,
      });
    }
    case 'openai':
      return new OpenAiEngine({
        baseUrl: cfg.OPENAI_BASE_URL,
        ...(cfg.OPENAI_API_KEY ? { apiKey: cfg.OPENAI_API_KEY } : {}),
        model: cfg.MURMUR_OPENAI_CONVERT_MODEL,
        timeoutMs: cfg.MURMUR_CONVERSION_TIMEOUT_MS,
      });
  }
}
