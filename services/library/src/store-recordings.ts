/** Postgres side of recordings and their artifacts (see store.ts for the contract). */
import type { Database } from '@murmur/kit';
import type { ArtifactFormatWord } from './kinds';
import { recordingPassages } from './passages';
import { PREVIEW_SOURCE_CHARS } from './preview';
import type { ArtifactRecord, RecordingRecord, RecordingStore } from './store';
import { replacePassages, type PassageOwner } from './store-passages';
import { afterPosition, Params, toNumber } from './store-sql';
import type { CleanSegment, CleanTranscript } from './validation';

interface RecordingRow {
  id: string;
  owner_id: string;
  title: string;
  folder_id: string | null;
  duration_seconds: number;
  created_at: Date;
  updated_at: Date;
  has_transcript: boolean;
  preview_source: string | null;
}

interface ArtifactRow {
  id: string;
  recording_id: string;
  kind: string;
  format: ArtifactFormatWord;
  content: string;
  credits_charged: string;
  created_at: Date;
  data: Record<string, unknown> | null;
}

/** The list columns: everything but the transcript itself, plus its opening for the preview. */
const RECORDING_COLUMNS = `r.id, r.owner_id, r.title, r.folder_id, r.duration_seconds, r.created_at, r.updated_at,
  r.transcript IS NOT NULL AS has_transcript, left(r.transcript, ${PREVIEW_SOURCE_CHARS}) AS preview_source`;

const ARTIFACT_COLUMNS = 'id, recording_id, kind, format, content, credits_charged, created_at, data';

function toRecording(row: RecordingRow): RecordingRecord {
  return {
    id: row.id,
    ownerId: row.owner_id,
    title: row.title,
    folderId: row.folder_id,
    durationSeconds: row.duration_seconds,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    hasTranscript: row.has_transcript,
    previewSource: row.preview_source ?? '',
  };
}

/** Where a recording's passages belong (its owner, folder and creation time, for the filters). */
function recordingOwner(row: RecordingRow): PassageOwner {
  return { ownerId: row.owner_id, source: 'recording', sourceId: row.id, folderId: row.folder_id, createdAt: row.created_at };
}

function toArtifact(row: ArtifactRow): ArtifactRecord {
  return {
    id: row.id,
    recordingId: row.recording_id,
    kind: row.kind,
    format: row.format,
    content: row.content,
    creditsCharged: toNumber(row.credits_charged),
    createdAt: row.created_at,
    data: row.data,
  };
}

/** Recordings and artifacts over `db` (search_path = the library schema). */
export function postgresRecordingStore(db: Database): RecordingStore {
  return {
    async listRecordings(ownerId, filter, page) {
      const p = new Params();
      let where = `r.owner_id = ${p.add(ownerId)}`;
      if (filter.folderId !== undefined) where += ` AND r.folder_id = ${p.add(filter.folderId)}`;
      if (filter.createdAfter) where += ` AND r.created_at > ${p.add(filter.createdAfter)}::timestamptz`;
      if (filter.createdBefore) where += ` AND r.created_at < ${p.add(filter.createdBefore)}::timestamptz`;
      if (filter.query !== undefined) where += ` AND r.search @@ websearch_to_tsquery('english', ${p.add(filter.query)})`;
      where += afterPosition(p, page.after, 'r');
      const rows = await db.query<RecordingRow>(
        `SELECT ${RECORDING_COLUMNS} FROM recordings r WHERE ${where}
         ORDER BY r.created_at DESC, r.id DESC LIMIT ${p.add(page.limit)}`,
        p.values,
      );
      return rows.map(toRecording);
    },

    async getRecording(ownerId, id, includeWords = false) {
      type Row = RecordingRow & { transcript: string | null; language: string; segments: CleanSegment[]; words: Uint8Array | null; word_count: number; speakers: CleanTranscript['speakers'] };
      const [row] = await db.query<Row>(
        `SELECT ${RECORDING_COLUMNS}, r.transcript, r.language, r.segments, ${includeWords ? 'r.words' : 'NULL::bytea AS words'}, r.word_count, r.speakers
         FROM recordings r WHERE r.owner_id = $1 AND r.id = $2`,
        [ownerId, id],
      );
      if (!row) return null;
      const artifacts = await db.query<ArtifactRow>(
        `SELECT ${ARTIFACT_COLUMNS} FROM artifacts WHERE owner_id = $1 AND recording_id = $2 ORDER BY created_at, seq`,
        [ownerId, id],
      );
      return {
        recording: toRecording(row),
        transcript:
          row.transcript === null
            ? null
            : { text: row.transcript, language: row.language, segments: row.segments, words: row.words, wordCount: row.word_count, speakers: row.speakers },
        artifacts: artifacts.map(toArtifact),
      };
    },

    async createRecording(input) {
      const t = input.transcript;
      return db.transaction(async (client) => {
        // One statement: the folder check and the insert cannot be split by a concurrent write.
        const { rows } = await client.query<RecordingRow>(
          `INSERT INTO recordings AS r (id, owner_id, title, folder_id, duration_seconds, created_at, updated_at, transcript, language, segments, words, word_count, speakers, passages_indexed)
           SELECT $1, $2, $3, $4::text, $5::float8, $6::timestamptz, $6::timestamptz, $7::text, $8, $9::jsonb, $10::bytea, $11::int, $12::jsonb, true
           WHERE $4::text IS NULL OR EXISTS (SELECT 1 FROM folders WHERE owner_id = $2 AND id = $4)
           ON CONFLICT (id) DO NOTHING
           RETURNING ${RECORDING_COLUMNS}`,
          [
            input.id, input.ownerId, input.title, input.folderId, input.durationSeconds, input.createdAt, t?.text ?? null, t?.language ?? '', JSON.stringify(t?.segments ?? []),
            t?.words ? Buffer.from(t.words) : null, t?.wordCount ?? 0, JSON.stringify(t?.speakers ?? []),
          ],
        );
        const row = rows[0];
        if (row) {
          if (t) await replacePassages(client, recordingOwner(row), recordingPassages(t));
          return toRecording(row);
        }
        // Not inserted: the id exists (a retried save, or another owner's) or the folder does not.
        const found = await client.query<RecordingRow & { owner_id: string }>(`SELECT ${RECORDING_COLUMNS}, r.owner_id FROM recordings AS r WHERE r.id = $1`, [input.id]);
        const existing = found.rows[0];
        if (!existing) return { missing: 'folder' as const };
        return existing.owner_id === input.ownerId ? toRecording(existing) : { missing: 'taken' as const };
      });
    },

    async deleteRecording(ownerId, id) {
      return db.transaction(async (client) => {
        const found = await client.query('SELECT 1 FROM recordings WHERE owner_id = $1 AND id = $2 FOR UPDATE', [ownerId, id]);
        if (found.rowCount === 0) return false;
        for (const table of ['artifacts', 'thread_items', 'thread_context_sources', 'knowledge_base_recordings']) {
          await client.query(`DELETE FROM ${table} WHERE owner_id = $1 AND recording_id = $2`, [ownerId, id]);
        }
        await client.query('DELETE FROM passages WHERE owner_id = $1 AND source_id = $2', [ownerId, id]);
        await client.query('DELETE FROM recordings WHERE owner_id = $1 AND id = $2', [ownerId, id]);
        return true;
      });
    },

    async updateRecording(ownerId, id, changes, now) {
      return db.transaction(async (client) => {
        const found = await client.query('SELECT 1 FROM recordings WHERE owner_id = $1 AND id = $2 FOR UPDATE', [ownerId, id]);
        if (found.rowCount === 0) return { missing: 'recording' as const };
        if (changes.folderId) {
          const folder = await client.query('SELECT 1 FROM folders WHERE owner_id = $1 AND id = $2', [ownerId, changes.folderId]);
          if (folder.rowCount === 0) return { missing: 'folder' as const };
        }
        const { rows } = await client.query<RecordingRow>(
          `UPDATE recordings AS r SET
             title = coalesce($3, r.title),
             folder_id = CASE WHEN $4::boolean THEN $5 ELSE r.folder_id END,
             updated_at = greatest(r.updated_at, $6)
           WHERE r.owner_id = $1 AND r.id = $2
           RETURNING ${RECORDING_COLUMNS}`,
          [ownerId, id, changes.title ?? null, changes.folderId !== undefined, changes.folderId ?? null, now],
        );
        // The passages' copy of the folder moves with the recording, in the same transaction.
        if (changes.folderId !== undefined) {
          await client.query('UPDATE passages SET folder_id = $3 WHERE owner_id = $1 AND source_id = $2', [ownerId, id, changes.folderId]);
        }
        return toRecording(rows[0]!);
      });
    },

    async attachTranscript(ownerId, id, transcript, now) {
      return db.transaction(async (client) => {
        const { rows } = await client.query<RecordingRow>(
          `UPDATE recordings AS r SET transcript = $3, language = $4, segments = $5::jsonb, words = $7::bytea, word_count = $8::int, speakers = $9::jsonb,
             updated_at = greatest(r.updated_at, $6), passages_indexed = true
           WHERE r.owner_id = $1 AND r.id = $2
           RETURNING ${RECORDING_COLUMNS}`,
          [ownerId, id, transcript.text, transcript.language, JSON.stringify(transcript.segments), now, transcript.words ? Buffer.from(transcript.words) : null, transcript.wordCount, JSON.stringify(transcript.speakers)],
        );
        const row = rows[0];
        if (!row) return null;
        await replacePassages(client, recordingOwner(row), recordingPassages(transcript));
        return toRecording(row);
      });
    },

    async setSpeakers(ownerId, id, speakers, now) {
      const [row] = await db.query<RecordingRow>(
        `UPDATE recordings AS r SET speakers = $3::jsonb, updated_at = greatest(r.updated_at, $4)
         WHERE r.owner_id = $1 AND r.id = $2
         RETURNING ${RECORDING_COLUMNS}`,
        [ownerId, id, JSON.stringify(speakers), now],
      );
      return row ? toRecording(row) : null;
    },

    async addArtifact(input) {
      // The bump and the insert in one statement: both happen, or (no such recording) neither.
      const [row] = await db.query<ArtifactRow>(
        `WITH rec AS (
           UPDATE recordings SET updated_at = greatest(updated_at, $8::timestamptz)
           WHERE owner_id = $2 AND id = $3
           RETURNING owner_id, id
         )
         INSERT INTO artifacts (id, owner_id, recording_id, kind, format, content, credits_charged, created_at, data)
         SELECT $1, rec.owner_id, rec.id, $4, $5, $6, $7::bigint, $8::timestamptz, $9::jsonb FROM rec
         RETURNING ${ARTIFACT_COLUMNS}`,
        [input.id, input.ownerId, input.recordingId, input.kind, input.format, input.content, input.creditsCharged, input.createdAt, input.data === null ? null : JSON.stringify(input.data)],
      );
      return row ? toArtifact(row) : null;
    },
  };
}
