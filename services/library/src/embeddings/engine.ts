/**
 * Embeddings engines: text in, unit-length vectors out. The one implementation is any
 * OpenAI-compatible `/embeddings` endpoint (OpenAI, Ollama, vLLM, llama.cpp server, TEI); the
 * library runs without one (text ranking alone) when none is configured.
 */

export interface EmbeddingsEngine {
  /** The model's name, stored beside each vector: vectors of another model are never compared. */
  readonly model: string;
  /** One vector per text, in order, each scaled to length 1 (so a dot product is the cosine). */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>;
}

/** An engine failure; search falls back to text ranking, the embedder retries later. */
export class EmbeddingsError extends Error {
  override readonly name = 'EmbeddingsError';
}

export interface OpenAiEmbeddingsOptions {
  /** Up to and including /v1, e.g. "https://api.openai.com/v1" or "http://127.0.0.1:11434/v1". */
  baseUrl: string;
  apiKey?: string;
  model: string;
  /** Asks the model for shorter vectors (OpenAI's text-embedding-3 models take `dimensions`); unset: the model's own size. */
  dimensions?: number;
  /** Longest one request may take. */
  timeoutMs: number;
}

interface EmbeddingsBody {
  data?: Array<{ index?: number; embedding?: unknown }>;
}

/** Scales `v` to length 1 in place; a zero vector stays zero. */
export function normalise(v: Float32Array): Float32Array {
  let sum = 0;
  for (const x of v) sum += x * x;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i]! /= norm;
  return v;
}

export class OpenAiEmbeddings implements EmbeddingsEngine {
  readonly model: string;
  private readonly url: string;

  constructor(private readonly opts: OpenAiEmbeddingsOptions) {
    this.model = opts.model;
    this.url = `${opts.baseUrl.replace(/\/+$/, '')}/embeddings`;
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const timeout = AbortSignal.timeout(this.opts.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let res: Response;
    let body: EmbeddingsBody;
    try {
      res = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...(this.opts.apiKey ? { authorization: `Bearer ${this.opts.apiKey}` } : {}) },
        body: JSON.stringify({ model: this.opts.model, input: texts, encoding_format: 'float', ...(this.opts.dimensions ? { dimensions: this.opts.dimensions } : {}) }),
        signal: combined,
      });
      if (!res.ok) throw new EmbeddingsError(`embeddings endpoint answered HTTP ${res.status}`);
      body = (await res.json()) as EmbeddingsBody;
    } catch (err) {
      if (err instanceof EmbeddingsError) throw err;
      throw new EmbeddingsError(combined.aborted ? `embeddings endpoint: no answer within ${this.opts.timeoutMs} ms` : `embeddings endpoint: ${(err as Error).message}`);
    }
    const out: Array<Float32Array | undefined> = new Array(texts.length);
    let dims = -1;
    for (const [i, item] of (body.data ?? []).entries()) {
      const index = item.index ?? i;
      const e = item.embedding;
      if (!Number.isInteger(index) || index < 0 || index >= texts.length || !Array.isArray(e) || e.length === 0 || !e.every((x) => typeof x === 'number' && Number.isFinite(x))) {
        throw new EmbeddingsError('embeddings endpoint answered a malformed vector');
      }
      if (dims !== -1 && e.length !== dims) throw new EmbeddingsError('embeddings endpoint answered vectors of different sizes');
      dims = e.length;
      out[index] = normalise(Float32Array.from(e as number[]));
    }
    if (out.some((v) => v === undefined) || out.length !== texts.length) throw new EmbeddingsError('embeddings endpoint answered fewer vectors than texts');
    return out as Float32Array[];
  }
}
