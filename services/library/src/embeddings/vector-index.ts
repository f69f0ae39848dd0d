/**
 * Where passages' vectors live and how the nearest are found, behind one interface (issue 34):
 * `array` keeps them beside each passage (`embedding bytea`: float32s) and ranks the caller's
 * passages by exact cosine — what every Postgres and the embedded PGlite can run, fine for a
 * personal library (docs/search.md gives the sizes); `pgvector` (pgvector-index.ts) keeps them in
 * an HNSW-indexed `vector` column where the server has the extension.
 */
import type { Database } from '@murmur/kit';
import { filterConditions, type PassageFilter } from '../store-passages';
import { Params } from '../store-sql';

export interface VectorIndex {
  readonly kind: 'array' | 'pgvector';
  /** Passages that have no vector of `model` yet, oldest first (what the embedder fills). */
  pending(model: string, limit: number): Promise<Array<{ id: string; text: string }>>;
  /** Stores vectors of `model` for passages (a passage deleted meanwhile is skipped). */
  store(model: string, vectors: ReadonlyArray<{ id: string; vector: Float32Array }>): Promise<void>;
  /** The owner's passages nearest to `vector` among those the filter keeps, best first, with cosine similarity. */
  nearest(ownerId: string, filter: Omit<PassageFilter, 'query'>, model: string, vector: Float32Array, limit: number): Promise<Array<{ id: string; similarity: number }>>;
  /** Forgets vectors of any other model (the configured model changed): they are made again. */
  forgetOtherModels(model: string): Promise<number>;
}

/** A vector as stored: its float32s, little-endian. */
export function vectorBytes(v: Float32Array): Buffer {
  const out = Buffer.alloc(v.length * 4);
  for (let i = 0; i < v.length; i++) out.writeFloatLE(v[i]!, i * 4);
  return out;
}

/** The dot product of unit vector `q` and a stored vector (its cosine similarity); -Infinity for one of another size. */
export function storedDot(q: Float32Array, bytes: Uint8Array): number {
  if (bytes.byteLength !== q.length * 4) return Number.NEGATIVE_INFINITY;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let sum = 0;
  for (let i = 0; i < q.length; i++) sum += q[i]! * view.getFloat32(i * 4, true);
  return sum;
}

/**
 * Vectors in `passages.embedding` (bytea float32s), exact cosine in this process: the caller's
 * embedded passages (with the filters) are read and scored here. Measured on this 2-core machine
 * at 20,000 passages of 384 numbers: ~0.2 s, where the same dot product in SQL (`unnest` of two
 * `real[]`) took ~1.7 s. It reads 4 bytes a dimension a passage per search, hence pgvector for
 * large libraries.
 */
export function arrayVectorIndex(db: Database): VectorIndex {
  return {
    kind: 'array',
    async pending(_model, limit) {
      return db.query<{ id: string; text: string }>('SELECT id, text FROM passages WHERE embedding_model IS NULL ORDER BY id LIMIT $1', [limit]);
    },
    async store(model, vectors) {
      if (vectors.length === 0) return;
      await db.query(
        `UPDATE passages AS p SET embedding = v.embedding, embedding_model = $1
         FROM unnest($2::text[], $3::bytea[]) AS v(id, embedding) WHERE p.id = v.id`,
        [model, vectors.map((v) => v.id), vectors.map((v) => vectorBytes(v.vector))],
      );
    },
    async nearest(ownerId, filter, model, vector, limit) {
      const p = new Params();
      const where = filterConditions(p, ownerId, filter);
      const rows = await db.query<{ id: string; embedding: Uint8Array }>(`SELECT p.id, p.embedding FROM passages p WHERE ${where} AND p.embedding_model = ${p.add(model)}`, p.values);
      return rows
        .map((r) => ({ id: r.id, similarity: storedDot(vector, r.embedding) }))
        .filter((r) => Number.isFinite(r.similarity))
        .sort((a, b) => b.similarity - a.similarity || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .slice(0, limit);
    },
    async forgetOtherModels(model) {
      const rows = await db.query<{ n: number }>(
        `WITH cleared AS (UPDATE passages SET embedding = NULL, embedding_model = NULL WHERE embedding IS NOT NULL AND embedding_model IS DISTINCT FROM $1 RETURNING 1)
         SELECT count(*)::int AS n FROM cleared`,
        [model],
      );
      return rows[0]?.n ?? 0;
    },
  };
}
