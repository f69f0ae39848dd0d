/** Postgres side of folders, knowledge bases and the per-owner stats (see store.ts). */
import type { Database } from '@murmur/kit';
import { knowledgeBasePassages } from './passages';
import type { CollectionStore, FolderRecord, KnowledgeBaseRecord } from './store';
import { replacePassages, type PassageOwner } from './store-passages';
import { afterPosition, Params, toNumber } from './store-sql';

interface FolderRow {
  id: string;
  owner_id: string;
  name: string;
  recording_count: number;
  created_at: Date;
  updated_at: Date;
}

interface KnowledgeBaseRow extends FolderRow {
  description: string;
}

const FOLDER_COLUMNS = `f.id, f.owner_id, f.name, f.created_at, f.updated_at,
  (SELECT count(*) FROM recordings r WHERE r.owner_id = f.owner_id AND r.folder_id = f.id)::int AS recording_count`;

const KB_COLUMNS = `k.id, k.owner_id, k.name, k.description, k.created_at, k.updated_at,
  (SELECT count(*) FROM knowledge_base_recordings m WHERE m.owner_id = k.owner_id AND m.knowledge_base_id = k.id)::int AS recording_count`;

function toFolder(row: FolderRow): FolderRecord {
  return { id: row.id, ownerId: row.owner_id, name: row.name, recordingCount: row.recording_count, createdAt: row.created_at, updatedAt: row.updated_at };
}

function toKnowledgeBase(row: KnowledgeBaseRow): KnowledgeBaseRecord {
  return { ...toFolder(row), description: row.description };
}

/** Where a knowledge base's passages belong. */
export function knowledgeBaseOwner(row: { id: string; owner_id: string; created_at: Date }): PassageOwner {
  return { ownerId: row.owner_id, source: 'knowledge_base', sourceId: row.id, folderId: null, createdAt: row.created_at };
}

/** Folders, knowledge bases and stats over `db`. */
export function postgresCollectionStore(db: Database): CollectionStore {
  return {
    async listFolders(ownerId, page) {
      const p = new Params();
      const where = `f.owner_id = ${p.add(ownerId)}${afterPosition(p, page.after, 'f')}`;
      const rows = await db.query<FolderRow>(
        `SELECT ${FOLDER_COLUMNS} FROM folders f WHERE ${where} ORDER BY f.created_at DESC, f.id DESC LIMIT ${p.add(page.limit)}`,
        p.values,
      );
      return rows.map(toFolder);
    },

    async getFolder(ownerId, id) {
      const [row] = await db.query<FolderRow>(`SELECT ${FOLDER_COLUMNS} FROM folders f WHERE f.owner_id = $1 AND f.id = $2`, [ownerId, id]);
      return row ? toFolder(row) : null;
    },

    async createFolder(input) {
      const [row] = await db.query<FolderRow>(
        `INSERT INTO folders AS f (id, owner_id, name, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)
         RETURNING f.id, f.owner_id, f.name, f.created_at, f.updated_at, 0 AS recording_count`,
        [input.id, input.ownerId, input.name, input.createdAt],
      );
      return toFolder(row!);
    },

    async listKnowledgeBases(ownerId, page) {
      const p = new Params();
      const where = `k.owner_id = ${p.add(ownerId)}${afterPosition(p, page.after, 'k')}`;
      const rows = await db.query<KnowledgeBaseRow>(
        `SELECT ${KB_COLUMNS} FROM knowledge_bases k WHERE ${where} ORDER BY k.created_at DESC, k.id DESC LIMIT ${p.add(page.limit)}`,
        p.values,
      );
      return rows.map(toKnowledgeBase);
    },

    async createKnowledgeBase(input) {
      return db.transaction(async (client) => {
        const { rows } = await client.query<KnowledgeBaseRow>(
          `INSERT INTO knowledge_bases AS k (id, owner_id, name, description, created_at, updated_at, passages_indexed) VALUES ($1, $2, $3, $4, $5, $5, true)
           RETURNING k.id, k.owner_id, k.name, k.description, k.created_at, k.updated_at, 0 AS recording_count`,
          [input.id, input.ownerId, input.name, input.description, input.createdAt],
        );
        const kb = rows[0]!;
        await replacePassages(client, knowledgeBaseOwner(kb), knowledgeBasePassages(kb));
        return toKnowledgeBase(kb);
      });
    },

    async addKnowledgeBaseRecording(ownerId, knowledgeBaseId, recordingId, now) {
      return db.transaction(async (client) => {
        const kb = await client.query('SELECT 1 FROM knowledge_bases WHERE owner_id = $1 AND id = $2 FOR UPDATE', [ownerId, knowledgeBaseId]);
        if (kb.rowCount === 0) return { missing: 'knowledge_base' as const };
        const rec = await client.query('SELECT 1 FROM recordings WHERE owner_id = $1 AND id = $2', [ownerId, recordingId]);
        if (rec.rowCount === 0) return { missing: 'recording' as const };
        const inserted = await client.query(
          `INSERT INTO knowledge_base_recordings (owner_id, knowledge_base_id, recording_id, added_at) VALUES ($1, $2, $3, $4)
           ON CONFLICT (knowledge_base_id, recording_id) DO NOTHING`,
          [ownerId, knowledgeBaseId, recordingId, now],
        );
        if ((inserted.rowCount ?? 0) > 0) {
          await client.query('UPDATE knowledge_bases SET updated_at = greatest(updated_at, $3) WHERE owner_id = $1 AND id = $2', [ownerId, knowledgeBaseId, now]);
        }
        const { rows } = await client.query<KnowledgeBaseRow>(`SELECT ${KB_COLUMNS} FROM knowledge_bases k WHERE k.owner_id = $1 AND k.id = $2`, [ownerId, knowledgeBaseId]);
        return toKnowledgeBase(rows[0]!);
      });
    },

    async stats(ownerId) {
      const [row] = await db.query<{ recordings: number; recorded_seconds: number | null; thought_threads: number; folders: number; knowledge_bases: number }>(
        `SELECT
           (SELECT count(*) FROM recordings WHERE owner_id = $1)::int AS recordings,
           (SELECT sum(duration_seconds) FROM recordings WHERE owner_id = $1) AS recorded_seconds,
           (SELECT count(*) FROM thought_threads WHERE owner_id = $1)::int AS thought_threads,
           (SELECT count(*) FROM folders WHERE owner_id = $1)::int AS folders,
           (SELECT count(*) FROM knowledge_bases WHERE owner_id = $1)::int AS knowledge_bases`,
        [ownerId],
      );
      return {
        recordings: row?.recordings ?? 0,
        thoughtThreads: row?.thought_threads ?? 0,
        folders: row?.folders ?? 0,
        knowledgeBases: row?.knowledge_bases ?? 0,
        recordedSeconds: toNumber(row?.recorded_seconds),
      };
    },
  };
}
