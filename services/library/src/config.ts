/**
 * The library's own settings (besides the kit's shared ones): the optional embeddings engine
 * that turns passages into vectors, and where the vectors live. Unset URL: text search alone.
 */
import { loadConfig, z } from '@murmur/kit';
import { OpenAiEmbeddings, type EmbeddingsEngine } from './embeddings/engine';

export const libraryConfigSchema = {
  /** An OpenAI-compatible API (up to and including /v1) with `/embeddings`; unset → no vectors, text ranking alone. */
  MURMUR_EMBEDDINGS_URL: z.string().url().optional(),
  /** The embeddings model asked for; stored beside each vector (a change of model makes them again). */
  MURMUR_EMBEDDINGS_MODEL: z.string().min(1).default('text-embedding-3-small'),
  /** Shorter vectors from models that can give them (`dimensions`; e.g. 512 for text-embedding-3-small): less to store and to compare. */
  MURMUR_EMBEDDINGS_DIMENSIONS: z.coerce.number().int().positive().max(4096).optional(),
  /** Bearer key of that API; optional for local servers. */
  MURMUR_EMBEDDINGS_API_KEY: z.string().optional(),
  /** Longest one embeddings request may take. */
  MURMUR_EMBEDDINGS_TIMEOUT_MS: z.coerce.number().int().positive().default(30_000),
  /** auto (pgvector where the server has the extension, else arrays) | array | pgvector. */
  MURMUR_VECTOR_INDEX: z.enum(['auto', 'array', 'pgvector']).default('auto'),
};

export type LibraryConfig = ReturnType<typeof loadConfig<typeof libraryConfigSchema>>;

export function loadLibraryConfig(env: NodeJS.ProcessEnv = process.env): LibraryConfig {
  return loadConfig(libraryConfigSchema, env);
}

/** The configured embeddings engine, or undefined when none is. */
export function embeddingsFromConfig(cfg: LibraryConfig): EmbeddingsEngine | undefined {
  if (!cfg.MURMUR_EMBEDDINGS_URL) return undefined;
  return new OpenAiEmbeddings({
    baseUrl: cfg.MURMUR_EMBEDDINGS_URL,
    model: cfg.MURMUR_EMBEDDINGS_MODEL,
    timeoutMs: cfg.MURMUR_EMBEDDINGS_TIMEOUT_MS,
    ...(cfg.MURMUR_EMBEDDINGS_DIMENSIONS ? { dimensions: cfg.MURMUR_EMBEDDINGS_DIMENSIONS } : {}),
    ...(cfg.MURMUR_EMBEDDINGS_API_KEY ? { apiKey: cfg.MURMUR_EMBEDDINGS_API_KEY } : {}),
  });
}
