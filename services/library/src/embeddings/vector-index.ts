/**
 * Where passages' vectors live and how the nearest are found, behind one interface (issue 34):
 * `array` keeps them in the passages' own `embedding real[]` column and ranks the caller's
 * passages by exact cosine in SQL — what every Postgres and the embedded PGlite can run, fine for a
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

/** Vectors in `passages.embedding real[]`, exact cosine (dot product of unit vectors) in SQL. */
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
         FROM jsonb_to_recordset($2::jsonb) AS v(id text, embedding real[]) WHERE p.id = v.id`,
        [model, JSON.stringify(vectors.map((v) => ({ id: v.id, embedding: Array.from(v.vector) })))],
      );
    },
    async nearest(ownerId, filter, model, vector, limit) {
      const p = new Params();
      const where = filterConditions(p, ownerId, filter);
      const rows = await db.query<{ id: string; similarity: number }>(
        `SELECT p.id, (SELECT sum(a * b) FROM unnest(p.embedding, ${p.add(Array.from(vector))}::real[]) AS v(a, b)) AS similarity
         FROM passages p WHERE ${where} AND p.embedding_model = ${p.add(model)}
         ORDER BY similarity DESC, p.id LIMIT ${p.add(limit)}`,
        p.values,
      );
      return rows.map((r) => ({ id: r.id, similarity: Number(r.similarity) }));
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
