/**
 * Postgres side of passages (see migrations/004_passages.sql): writing a source's passages inside
 * the transaction of its row, and ranking them for a query with highlights. Ranking is Postgres
 * full text: websearch_to_tsquery (words, "phrases", OR, -excluded), ts_rank_cd normalised to
 * 0–1 (rank / (rank + 1)), ts_headline over the whole passage for the highlights.
 */
import type { SearchSourceType } from '@murmur/contract';
import { newId, type Database } from '@murmur/kit';
import { textPassages, type PassageCut } from './passages';
import { Params, type TxClient } from './store-sql';

/** A source's place, copied onto its passages for the filters. */
export interface PassageOwner {
  ownerId: string;
  source: SearchSourceType;
  sourceId: string;
  folderId: string | null;
  createdAt: Date;
}

/**
 * Replaces every passage of a source with `cuts` (numbered from 0). Runs on the caller's
 * transaction client, so the passages commit or roll back with the row they come from.
 */
export async function replacePassages(client: TxClient, owner: PassageOwner, cuts: readonly PassageCut[]): Promise<void> {
  await client.query('DELETE FROM passages WHERE owner_id = $1 AND source_id = $2', [owner.ownerId, owner.sourceId]);
  await insertPassages(client, owner, cuts, 0, null);
}

/** Appends a thread item's passages after the thread's last one (the thread row is locked by the caller). */
export async function appendItemPassages(client: TxClient, owner: PassageOwner, itemId: string, text: string): Promise<void> {
  const cuts = textPassages(text);
  if (cuts.length === 0) return;
  const { rows } = await client.query<{ next: number }>('SELECT coalesce(max(ordinal) + 1, 0)::int AS next FROM passages WHERE owner_id = $1 AND source_id = $2', [
    owner.ownerId,
    owner.sourceId,
  ]);
  await insertPassages(client, owner, cuts, rows[0]!.next, itemId);
}

async function insertPassages(client: TxClient, owner: PassageOwner, cuts: readonly PassageCut[], firstOrdinal: number, itemId: string | null): Promise<void> {
  if (cuts.length === 0) return;
  // One statement for any number of passages: columns as arrays, unnested side by side.
  await client.query(
    `INSERT INTO passages (id, owner_id, source, source_id, ordinal, thread_item_id, folder_id, source_created_at, text, start_seconds, end_seconds, speaker)
     SELECT u.id, $1, $2, $3, u.ordinal, $4, $5, $6::timestamptz, u.text, u.start_seconds, u.end_seconds, u.speaker
     FROM unnest($7::text[], $8::int[], $9::text[], $10::float8[], $11::float8[], $12::text[]) AS u(id, ordinal, text, start_seconds, end_seconds, speaker)`,
    [
      owner.ownerId,
      owner.source,
      owner.sourceId,
      itemId,
      owner.folderId,
      owner.createdAt,
      cuts.map(() => newId('psg')),
      cuts.map((_, i) => firstOrdinal + i),
      cuts.map((c) => c.text),
      cuts.map((c) => c.start),
      cuts.map((c) => c.end),
      cuts.map((c) => c.speaker),
    ],
  );
}

/** What a search may be narrowed by (all optional; together they AND). */
export interface PassageFilter {
  query: string;
  /** Empty or absent: every source. */
  sources?: readonly SearchSourceType[];
  folderId?: string;
  recordingId?: string;
  /** The source's creation time, strictly after / before. */
  createdAfter?: Date;
  createdBefore?: Date;
}

/** Where a ranked page ends: the last passage served. The next page starts strictly after it. */
export interface RankPosition {
  score: number;
  id: string;
}

export interface PassageHit {
  id: string;
  source: SearchSourceType;
  sourceId: string;
  threadItemId: string | null;
  title: string;
  text: string;
  /** [offset, length] in code points of `text`. */
  highlights: Array<[number, number]>;
  start: number | null;
  end: number | null;
  speaker: string | null;
  speakerName: string;
  score: number;
  sourceCreatedAt: Date;
}

/** A page of hits, or why the query cannot match anything. */
export type PassageSearch = { hits: PassageHit[] } | { refused: 'no_terms' | 'only_excluded' };

interface HitRow {
  id: string;
  source: SearchSourceType;
  source_id: string;
  thread_item_id: string | null;
  title: string;
  text: string;
  marked: string;
  start_seconds: number | null;
  end_seconds: number | null;
  speaker: string | null;
  speakers: Array<{ id: string; name: string }> | null;
  score: number;
  source_created_at: Date;
}

/** ts_headline's markers: control characters a stored transcript never holds. */
const START = '\u0001';
const STOP = '\u0002';

/**
 * The filter's conditions on passages `p` (owner first: every query of passages starts there).
 * Shared by the text ranking and the vector indexes, so both see exactly the same passages.
 */
export function filterConditions(p: Params, ownerId: string, filter: Omit<PassageFilter, 'query'>): string {
  let where = `p.owner_id = ${p.add(ownerId)}`;
  if (filter.sources && filter.sources.length > 0) where += ` AND p.source = ANY(${p.add(filter.sources)}::text[])`;
  if (filter.folderId !== undefined) where += ` AND p.folder_id = ${p.add(filter.folderId)}`;
  if (filter.recordingId !== undefined) where += ` AND p.source_id = ${p.add(filter.recordingId)} AND p.source = 'recording'`;
  if (filter.createdAfter) where += ` AND p.source_created_at > ${p.add(filter.createdAfter)}::timestamptz`;
  if (filter.createdBefore) where += ` AND p.source_created_at < ${p.add(filter.createdBefore)}::timestamptz`;
  return where;
}

/** The columns of a hit, over a row `h` of passages with a `score`, and the query `q.q`. */
const HIT_SELECT = `SELECT h.id, h.source, h.source_id, h.thread_item_id, h.text, h.start_seconds, h.end_seconds, h.speaker, h.score, h.source_created_at,
            ts_headline('english', h.text, q.q, 'HighlightAll=true, StartSel=${START}, StopSel=${STOP}') AS marked,
            coalesce(r.title, t.title, k.name, '') AS title, r.speakers`;
const HIT_JOINS = `LEFT JOIN recordings r ON h.source = 'recording' AND r.owner_id = h.owner_id AND r.id = h.source_id
     LEFT JOIN thought_threads t ON h.source = 'thought_thread' AND t.owner_id = h.owner_id AND t.id = h.source_id
     LEFT JOIN knowledge_bases k ON h.source = 'knowledge_base' AND k.owner_id = h.owner_id AND k.id = h.source_id`;

/** Ranked passages of one owner for a query, best first, `limit` of them after `after`. */
export async function searchPassages(db: Database, ownerId: string, filter: PassageFilter, page: { after?: RankPosition; limit: number }): Promise<PassageSearch> {
  const p = new Params();
  const query = p.add(filter.query);
  const where = `${filterConditions(p, ownerId, filter)} AND p.search @@ q.q`;
  const after = page.after ? ` WHERE (h.score < ${p.add(page.after.score)}::real OR (h.score = ${p.add(page.after.score)}::real AND h.id > ${p.add(page.after.id)}::text))` : '';
  const rows = await db.query<HitRow>(
    `WITH q AS (SELECT websearch_to_tsquery('english', ${query}) AS q),
     hits AS (
       SELECT p.id, p.owner_id, p.source, p.source_id, p.thread_item_id, p.text, p.start_seconds, p.end_seconds, p.speaker, p.source_created_at,
              ts_rank_cd(p.search, q.q, 32) AS score
       FROM passages p, q WHERE ${where}
     ),
     page AS (SELECT * FROM hits h${after} ORDER BY h.score DESC, h.id LIMIT ${p.add(page.limit)})
     ${HIT_SELECT}
     FROM page h CROSS JOIN q
     ${HIT_JOINS}
     ORDER BY h.score DESC, h.id`,
    p.values,
  );
  if (rows.length === 0) {
    const refused = await queryRefusal(db, filter.query);
    if (refused) return { refused };
  }
  return { hits: rows.map(toHit) };
}

/**
 * Why a query can never match (stop words only, or only excluded words), or null when it can:
 * asked only when a search found nothing, so a query that matches costs no extra round trip.
 */
async function queryRefusal(db: Database, query: string): Promise<'no_terms' | 'only_excluded' | null> {
  const [shape] = await db.query<{ nodes: number; tree: string }>(`SELECT numnode(q) AS nodes, querytree(q) AS tree FROM websearch_to_tsquery('english', $1) AS q`, [query]);
  if (!shape || shape.nodes === 0) return 'no_terms';
  if (shape.tree === 'T') return 'only_excluded';
  return null;
}

/** The ids and text ranks of the best `limit` passages for a query (hybrid ranking's text list). */
export async function textCandidates(db: Database, ownerId: string, filter: PassageFilter, limit: number): Promise<{ ranked: Array<{ id: string; score: number }> } | { refused: 'no_terms' | 'only_excluded' }> {
  const p = new Params();
  const query = p.add(filter.query);
  const rows = await db.query<{ id: string; score: number }>(
    `WITH q AS (SELECT websearch_to_tsquery('english', ${query}) AS q)
     SELECT p.id, ts_rank_cd(p.search, q.q, 32) AS score FROM passages p, q
     WHERE ${filterConditions(p, ownerId, filter)} AND p.search @@ q.q
     ORDER BY score DESC, p.id LIMIT ${p.add(limit)}`,
    p.values,
  );
  if (rows.length === 0) {
    const refused = await queryRefusal(db, filter.query);
    if (refused) return { refused };
  }
  return { ranked: rows.map((r) => ({ id: r.id, score: Number(r.score) })) };
}

/** The owner's passages of `ids` as hits (in that order), scored as given, highlighted for `query`. */
export async function hitsByIds(db: Database, ownerId: string, ids: Array<{ id: string; score: number }>, query: string): Promise<PassageHit[]> {
  if (ids.length === 0) return [];
  const rows = await db.query<HitRow>(
    `WITH q AS (SELECT websearch_to_tsquery('english', $2) AS q),
     h AS (
       SELECT p.id, p.owner_id, p.source, p.source_id, p.thread_item_id, p.text, p.start_seconds, p.end_seconds, p.speaker, p.source_created_at, s.score
       FROM unnest($3::text[], $4::float8[]) AS s(id, score) JOIN passages p ON p.id = s.id AND p.owner_id = $1
     )
     ${HIT_SELECT}
     FROM h CROSS JOIN q
     ${HIT_JOINS}`,
    [ownerId, query, ids.map((i) => i.id), ids.map((i) => i.score)],
  );
  const byId = new Map(rows.map((r) => [r.id, toHit(r)]));
  return ids.flatMap((i) => byId.get(i.id) ?? []);
}

function toHit(row: HitRow): PassageHit {
  const speakerName = row.speaker ? (row.speakers?.find((s) => s.id === row.speaker)?.name ?? '') : '';
  return {
    id: row.id,
    source: row.source,
    sourceId: row.source_id,
    threadItemId: row.thread_item_id,
    title: row.title,
    text: row.text,
    highlights: highlightsOf(row.marked, row.text),
    start: row.start_seconds,
    end: row.end_seconds,
    speaker: row.speaker,
    speakerName,
    score: Number(row.score),
    sourceCreatedAt: row.source_created_at,
  };
}

/**
 * The [offset, length] ranges (code points) that ts_headline marked in `marked`. When the text
 * without its marks is not `text` exactly (ts_headline never changes it, but if it ever did the
 * offsets would point at the wrong characters), no highlights rather than wrong ones.
 */
export function highlightsOf(marked: string, text: string): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  let plain = '';
  let at = 0;
  let openedAt = -1;
  for (const ch of marked) {
    if (ch === START) openedAt = at;
    else if (ch === STOP) {
      if (openedAt >= 0 && at > openedAt) ranges.push([openedAt, at - openedAt]);
      openedAt = -1;
    } else {
      plain += ch;
      at += 1;
    }
  }
  return plain === text ? mergeAdjacent(ranges, text) : [];
}

/** Joins ranges separated only by spaces ("pricing page" is one highlight, not two). */
function mergeAdjacent(ranges: Array<[number, number]>, text: string): Array<[number, number]> {
  const chars = [...text];
  const out: Array<[number, number]> = [];
  for (const [offset, length] of ranges) {
    const last = out[out.length - 1];
    if (last && chars.slice(last[0] + last[1], offset).every((c) => c === ' ')) last[1] = offset + length - last[0];
    else out.push([offset, length]);
  }
  return out;
}
