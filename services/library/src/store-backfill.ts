/**
 * Passages of rows stored before passages existed (migration 004 marks every old row
 * `passages_indexed = false`). The service works the backlog off in the background at start,
 * oldest first; each row is indexed in its own transaction with the row locked, so a write to it
 * meanwhile (which indexes it itself) is never overwritten with older text.
 */
import type { Database } from '@murmur/kit';
import { knowledgeBasePassages, recordingPassages } from './passages';
import { knowledgeBaseOwner } from './store-collections';
import { appendItemPassages, replacePassages } from './store-passages';
import type { TxClient } from './store-sql';
import { threadOwner } from './store-threads';
import type { CleanSegment } from './validation';

/** One kind of row with a backlog: how to find its unindexed rows and index one. */
interface Backlog {
  table: string;
  index(client: TxClient, id: string): Promise<void>;
}

const BACKLOGS: readonly Backlog[] = [
  {
    table: 'recordings',
    async index(client, id) {
      const { rows } = await client.query<{ id: string; owner_id: string; folder_id: string | null; created_at: Date; transcript: string | null; segments: CleanSegment[] }>(
        'SELECT id, owner_id, folder_id, created_at, transcript, segments FROM recordings WHERE id = $1 AND NOT passages_indexed FOR UPDATE',
        [id],
      );
      const row = rows[0];
      if (!row) return;
      if (row.transcript !== null) {
        const owner = { ownerId: row.owner_id, source: 'recording' as const, sourceId: row.id, folderId: row.folder_id, createdAt: row.created_at };
        await replacePassages(client, owner, recordingPassages({ text: row.transcript, segments: row.segments }));
      }
      await client.query('UPDATE recordings SET passages_indexed = true WHERE id = $1', [id]);
    },
  },
  {
    table: 'thread_items',
    async index(client, id) {
      const found = await client.query<{ owner_id: string; thread_id: string }>('SELECT owner_id, thread_id FROM thread_items WHERE id = $1', [id]);
      const item = found.rows[0];
      if (!item) return;
      // The thread's lock orders this append against items added to it meanwhile (their ordinals).
      await client.query('SELECT 1 FROM thought_threads WHERE owner_id = $1 AND id = $2 FOR UPDATE', [item.owner_id, item.thread_id]);
      const { rows } = await client.query<{ text: string }>('SELECT text FROM thread_items WHERE id = $1 AND NOT passages_indexed FOR UPDATE', [id]);
      if (!rows[0]) return;
      await appendItemPassages(client, await threadOwner(client, item.owner_id, item.thread_id), id, rows[0].text);
      await client.query('UPDATE thread_items SET passages_indexed = true WHERE id = $1', [id]);
    },
  },
  {
    table: 'knowledge_bases',
    async index(client, id) {
      const { rows } = await client.query<{ id: string; owner_id: string; created_at: Date; name: string; description: string }>(
        'SELECT id, owner_id, created_at, name, description FROM knowledge_bases WHERE id = $1 AND NOT passages_indexed FOR UPDATE',
        [id],
      );
      const kb = rows[0];
      if (!kb) return;
      await replacePassages(client, knowledgeBaseOwner(kb), knowledgeBasePassages(kb));
      await client.query('UPDATE knowledge_bases SET passages_indexed = true WHERE id = $1', [id]);
    },
  },
];

/** Indexes up to `limit` unindexed rows, across the kinds in order; answers how many. */
export async function indexBacklog(db: Database, limit: number): Promise<number> {
  let done = 0;
  for (const backlog of BACKLOGS) {
    if (done >= limit) break;
    const ids = await db.query<{ id: string }>(`SELECT id FROM ${backlog.table} WHERE NOT passages_indexed ORDER BY created_at LIMIT $1`, [limit - done]);
    for (const { id } of ids) {
      await db.transaction((client) => backlog.index(client, id));
      done += 1;
    }
  }
  return done;
}
