/**
 * The conversion service's own configuration (besides the shared addresses, storage and log
 * settings of the kit): which engine runs, how long it may take, and where its model or
 * endpoint is. A bad value fails at start-up with the variable's name.
 */
import { holdLeaseSchema, loadConfig, z } from '@murmur/kit';

export const conversionConfigSchema = {
  /** local (default: wink-nlp + chrono-node, offline) | llama (GGUF via node-llama-cpp) | openai (chat completions). */
  MURMUR_CONVERSION_ENGINE: z.enum(['local', 'llama', 'openai']).default('local'),
  /** Longest a conversion may run before it fails with conversion_failed (credits returned). */
  MURMUR_CONVERSION_TIMEOUT_MS: z.coerce.number().int().positive().default(120_000),
  /** Folder of model files (shared with transcription). */
  MURMUR_MODELS_DIR: z.string().default('./models'),
  /** GGUF file name in MURMUR_MODELS_DIR; unset → the only .gguf file there. */
  MURMUR_LLAMA_MODEL: z.string().optional(),
  /** Context window of the llama engine, in tokens (capped by the model's own). */
  MURMUR_LLAMA_CONTEXT_SIZE: z.coerce.number().int().min(512).default(8192),
  /** CPU threads of the llama engine; 0 lets node-llama-cpp choose. */
  MURMUR_LLAMA_THREADS: z.coerce.number().int().min(0).default(0),
  /** Most tokens the llama engine writes for one artifact. */
  MURMUR_LLAMA_MAX_TOKENS: z.coerce.number().int().positive().default(2048),
  /** Base URL of an OpenAI-compatible API, up to and including /v1. */
  OPENAI_BASE_URL: z.string().url().default('https://api.openai.com/v1'),
  /** Bearer key for that API; optional for local servers (Ollama, vLLM, llama.cpp server). */
  OPENAI_API_KEY: z.string().optional(),
  /** Chat model the openai engine asks for. */
  MURMUR_OPENAI_CONVERT_MODEL: z.string().default('gpt-4o-mini'),
  ...holdLeaseSchema,
};

export type ConversionConfig = ReturnType<typeof loadConfig<typeof conversionConfigSchema>>;

/** Reads the conversion variables from `env` (the process environment by default). */
export function loadConversionConfig(env: NodeJS.ProcessEnv = process.env): ConversionConfig {
  return loadConfig(conversionConfigSchema, env);
}
