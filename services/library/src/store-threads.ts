/** Postgres side of Thought Threads, their items and context sources (see store.ts). */
import type { Database } from '@murmur/kit';
import type { ContextSourceKindWord, ThreadItemKindWord } from './kinds';
import type { ContextSourceRecord, ThreadItemRecord, ThreadRecord, ThreadStore } from './store';
import { appendItemPassages, type PassageOwner } from './store-passages';
import { afterPosition, Params, type TxClient } from './store-sql';

interface ThreadRow {
  id: string;
  owner_id: string;
  title: string;
  created_at: Date;
  updated_at: Date;
  item_count: number;
}

interface ItemRow {
  id: string;
  kind: ThreadItemKindWord;
  text: string;
  recording_id: string | null;
  created_at: Date;
}

interface SourceRow {
  id: string;
  kind: ContextSourceKindWord;
  ref_id: string;
  title: string;
  added_at: Date;
}

const THREAD_COLUMNS = `t.id, t.owner_id, t.title, t.created_at, t.updated_at,
  (SELECT count(*) FROM thread_items i WHERE i.owner_id = t.owner_id AND i.thread_id = t.id)::int AS item_count`;

const ITEM_COLUMNS = 'id, kind, text, recording_id, created_at';

/** A source with the current title of what it points at (titles change; the link does not). */
const SOURCE_SELECT = `SELECT s.id, s.kind, s.ref_id, coalesce(r.title, f.name, k.name, '') AS title, s.added_at
  FROM thread_context_sources s
  LEFT JOIN recordings r ON r.owner_id = s.owner_id AND r.id = s.recording_id
  LEFT JOIN folders f ON f.owner_id = s.owner_id AND f.id = s.folder_id
  LEFT JOIN knowledge_bases k ON k.owner_id = s.owner_id AND k.id = s.knowledge_base_id`;

/** The table a context source of each kind points into, and its column in thread_context_sources. */
const SOURCE_TARGET: Record<ContextSourceKindWord, { table: string; column: string }> = {
  recording: { table: 'recordings', column: 'recording_id' },
  folder: { table: 'folders', column: 'folder_id' },
  knowledge_base: { table: 'knowledge_bases', column: 'knowledge_base_id' },
};

function toThread(row: ThreadRow): ThreadRecord {
  return { id: row.id, ownerId: row.owner_id, title: row.title, createdAt: row.created_at, updatedAt: row.updated_at, itemCount: row.item_count };
}

function toItem(row: ItemRow): ThreadItemRecord {
  return { id: row.id, kind: row.kind, text: row.text, recordingId: row.recording_id, createdAt: row.created_at };
}

function toSource(row: SourceRow): ContextSourceRecord {
  return { id: row.id, kind: row.kind, refId: row.ref_id, title: row.title, addedAt: row.added_at };
}

/** Where a thread's passages belong (its creation time, for the date filters). */
export async function threadOwner(client: TxClient, ownerId: string, threadId: string): Promise<PassageOwner> {
  const { rows } = await client.query<{ created_at: Date }>('SELECT created_at FROM thought_threads WHERE owner_id = $1 AND id = $2', [ownerId, threadId]);
  return { ownerId, source: 'thought_thread', sourceId: threadId, folderId: null, createdAt: rows[0]!.created_at };
}

/** Locks the owner's thread for the rest of the transaction; false when there is none. */
async function lockThread(client: TxClient, ownerId: string, threadId: string): Promise<boolean> {
  const found = await client.query('SELECT 1 FROM thought_threads WHERE owner_id = $1 AND id = $2 FOR UPDATE', [ownerId, threadId]);
  return (found.rowCount ?? 0) > 0;
}

async function touchThread(client: TxClient, ownerId: string, threadId: string, now: Date): Promise<void> {
  await client.query('UPDATE thought_threads SET updated_at = greatest(updated_at, $3) WHERE owner_id = $1 AND id = $2', [ownerId, threadId, now]);
}

/** Thought Threads, items and context sources over `db`. */
export function postgresThreadStore(db: Database): ThreadStore {
  return {
    async listThreads(ownerId, page) {
      const p = new Params();
      const where = `t.owner_id = ${p.add(ownerId)}${afterPosition(p, page.after, 't')}`;
      const rows = await db.query<ThreadRow>(
        `SELECT ${THREAD_COLUMNS} FROM thought_threads t WHERE ${where}
         ORDER BY t.created_at DESC, t.id DESC LIMIT ${p.add(page.limit)}`,
        p.values,
      );
      return rows.map(toThread);
    },

    async getThread(ownerId, id) {
      const [row] = await db.query<ThreadRow>(`SELECT ${THREAD_COLUMNS} FROM thought_threads t WHERE t.owner_id = $1 AND t.id = $2`, [ownerId, id]);
      if (!row) return null;
      const items = await db.query<ItemRow>(
        `SELECT ${ITEM_COLUMNS} FROM thread_items WHERE owner_id = $1 AND thread_id = $2 ORDER BY created_at, seq`,
        [ownerId, id],
      );
      const sources = await db.query<SourceRow>(`${SOURCE_SELECT} WHERE s.owner_id = $1 AND s.thread_id = $2 ORDER BY s.added_at, s.seq`, [ownerId, id]);
      return { thread: toThread(row), items: items.map(toItem), contextSources: sources.map(toSource) };
    },

    async createThread(input) {
      const [row] = await db.query<ThreadRow>(
        `INSERT INTO thought_threads AS t (id, owner_id, title, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)
         RETURNING t.id, t.owner_id, t.title, t.created_at, t.updated_at, 0 AS item_count`,
        [input.id, input.ownerId, input.title, input.createdAt],
      );
      return toThread(row!);
    },

    async addThreadItem(input) {
      return db.transaction(async (client) => {
        if (!(await lockThread(client, input.ownerId, input.threadId))) return { missing: 'thread' as const };
        if (input.recordingId !== null) {
          const rec = await client.query('SELECT 1 FROM recordings WHERE owner_id = $1 AND id = $2', [input.ownerId, input.recordingId]);
          if (rec.rowCount === 0) return { missing: 'recording' as const };
        }
        const { rows } = await client.query<ItemRow>(
          `INSERT INTO thread_items (id, owner_id, thread_id, kind, text, recording_id, created_at, passages_indexed)
           VALUES ($1, $2, $3, $4, $5, $6, $7, true) RETURNING ${ITEM_COLUMNS}`,
          [input.id, input.ownerId, input.threadId, input.kind, input.text, input.recordingId, input.createdAt],
        );
        await appendItemPassages(client, await threadOwner(client, input.ownerId, input.threadId), input.id, input.text);
        await touchThread(client, input.ownerId, input.threadId, input.createdAt);
        return toItem(rows[0]!);
      });
    },

    async addContextSource(input) {
      const target = SOURCE_TARGET[input.kind];
      return db.transaction(async (client) => {
        if (!(await lockThread(client, input.ownerId, input.threadId))) return { missing: 'thread' as const };
        const ref = await client.query(`SELECT 1 FROM ${target.table} WHERE owner_id = $1 AND id = $2`, [input.ownerId, input.refId]);
        if (ref.rowCount === 0) return { missing: 'ref' as const };
        const inserted = await client.query(
          `INSERT INTO thread_context_sources (id, owner_id, thread_id, kind, ${target.column}, added_at)
           VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (thread_id, kind, ref_id) DO NOTHING`,
          [input.id, input.ownerId, input.threadId, input.kind, input.refId, input.addedAt],
        );
        if ((inserted.rowCount ?? 0) > 0) await touchThread(client, input.ownerId, input.threadId, input.addedAt);
        const { rows } = await client.query<SourceRow>(
          `${SOURCE_SELECT} WHERE s.owner_id = $1 AND s.thread_id = $2 AND s.kind = $3 AND s.ref_id = $4`,
          [input.ownerId, input.threadId, input.kind, input.refId],
        );
        return toSource(rows[0]!);
      });
    },
  };
}
