/**
 * The pgvector side of {@link VectorIndex}, for a Postgres that has the `vector` extension (most
 * managed offerings do; Debian 12's archive and PGlite 0.5 do not, so it cannot run on these
 * machines and is not exercised by the tests here — the `array` index is, behind the same
 * interface). Vectors live in `passage_vectors` (made on first use, when the model's size is
 * known) with an HNSW index for cosine distance; a passage's `embedding_model` marks it done, as
 * with the array index, and deleting a passage deletes its vector (ON DELETE CASCADE).
 */
import type { Database } from '@murmur/kit';
import { filterConditions } from '../store-passages';
import { Params } from '../store-sql';
import type { VectorIndex } from './vector-index';

/** Whether the server can run pgvector (installed, or installable by this role). */
export async function pgvectorAvailable(db: Database): Promise<boolean> {
  const rows = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_available_extensions WHERE name = 'vector'");
  return (rows[0]?.n ?? 0) > 0;
}

const literal = (v: Float32Array): string => `[${Array.from(v).join(',')}]`;

export function pgvectorIndex(db: Database): VectorIndex {
  let ready: Promise<void> | undefined;
  /** Creates the extension, table and index for vectors of `dims` numbers (once per process). */
  const prepare = (dims: number) =>
    (ready ??= (async () => {
      await db.query('CREATE EXTENSION IF NOT EXISTS vector');
      await db.query(
        `CREATE TABLE IF NOT EXISTS passage_vectors (
           passage_id text COLLATE "C" PRIMARY KEY REFERENCES passages (id) ON DELETE CASCADE,
           model text NOT NULL,
           embedding vector(${dims}) NOT NULL
         )`,
      );
      await db.query('CREATE INDEX IF NOT EXISTS passage_vectors_hnsw_idx ON passage_vectors USING hnsw (embedding vector_cosine_ops)');
    })());
  return {
    kind: 'pgvector',
    async pending(_model, limit) {
      return db.query<{ id: string; text: string }>('SELECT id, text FROM passages WHERE embedding_model IS NULL ORDER BY id LIMIT $1', [limit]);
    },
    async store(model, vectors) {
      if (vectors.length === 0) return;
      await prepare(vectors[0]!.vector.length);
      await db.transaction(async (client) => {
        await client.query(
          `INSERT INTO passage_vectors (passage_id, model, embedding)
           SELECT v.id, $1, v.embedding::vector FROM unnest($2::text[], $3::text[]) AS v(id, embedding) JOIN passages p ON p.id = v.id
           ON CONFLICT (passage_id) DO UPDATE SET model = excluded.model, embedding = excluded.embedding`,
          [model, vectors.map((v) => v.id), vectors.map((v) => literal(v.vector))],
        );
        await client.query('UPDATE passages SET embedding_model = $1 WHERE id = ANY($2::text[])', [model, vectors.map((v) => v.id)]);
      });
    },
    async nearest(ownerId, filter, model, vector, limit) {
      await prepare(vector.length);
      const p = new Params();
      const where = filterConditions(p, ownerId, filter);
      const v = p.add(literal(vector));
      const rows = await db.query<{ id: string; similarity: number }>(
        `SELECT p.id, 1 - (x.embedding <=> ${v}::vector) AS similarity
         FROM passage_vectors x JOIN passages p ON p.id = x.passage_id
         WHERE ${where} AND x.model = ${p.add(model)}
         ORDER BY x.embedding <=> ${v}::vector, p.id LIMIT ${p.add(limit)}`,
        p.values,
      );
      return rows.map((r) => ({ id: r.id, similarity: Number(r.similarity) }));
    },
    async forgetOtherModels(model) {
      const rows = await db.query<{ n: number }>(
        `WITH cleared AS (UPDATE passages SET embedding_model = NULL WHERE embedding_model IS DISTINCT FROM $1 AND embedding_model IS NOT NULL RETURNING id)
         SELECT count(*)::int AS n FROM cleared`,
        [model],
      );
      // The table may not exist yet (no vector stored on this server so far).
      await db.query("DO $$ BEGIN IF to_regclass('passage_vectors') IS NOT NULL THEN DELETE FROM passage_vectors WHERE model <> '" + model.replace(/'/g, "''") + "'; END IF; END $$");
      return rows[0]?.n ?? 0;
    },
  };
}
