/**
 * Passage search's rules (LibraryService.SearchPassages): the query and filters checked, the
 * ranked page cut with a signed cursor, the refusals of queries that can never match. Ranked
 * paging is keyset paging on (score DESC, id): a cursor carries the last passage's score and id,
 * signed and bound to its owner and filters like every list cursor.
 */
import { MurmurError, noSearchableWords, searchQueryOf, type SearchSourceType } from '@murmur/contract';
import { CursorCodec, filterDigest, type Logger } from '@murmur/kit';
import { library } from '@murmur/proto';
import type { EmbeddingsEngine } from './embeddings/engine';
import type { VectorIndex } from './embeddings/vector-index';
import type { PassageFilter, PassageHit, RankPosition } from './store-passages';
import type { PassageSearchStore } from './store';

/** The proto's source values and their public words. */
const SOURCE_WORDS: ReadonlyMap<library.PassageSource, SearchSourceType> = new Map([
  [library.PassageSource.PASSAGE_SOURCE_RECORDING, 'recording'],
  [library.PassageSource.PASSAGE_SOURCE_THOUGHT_THREAD, 'thought_thread'],
  [library.PassageSource.PASSAGE_SOURCE_KNOWLEDGE_BASE, 'knowledge_base'],
]);
const SOURCE_VALUES = new Map([...SOURCE_WORDS].map(([value, word]) => [word, value]));

interface SearchCursor extends Record<string, unknown> {
  v: 1;
  l: 'search';
  /** score of the last passage served */
  s: number;
  /** id of the last passage served */
  i: string;
  /** digest of the query and filters */
  f: string;
  /** the ranking the walk began with: a walk keeps it (scores of two rankings never compare) */
  m: 'text' | 'hybrid';
}

function isSearchCursor(value: unknown): value is SearchCursor {
  if (typeof value !== 'object' || value === null) return false;
  const c = value as Record<string, unknown>;
  return (
    c.v === 1 && c.l === 'search' && typeof c.s === 'number' && Number.isFinite(c.s) && typeof c.i === 'string' && c.i.length <= 64 && typeof c.f === 'string' && (c.m === 'text' || c.m === 'hybrid')
  );
}

/** A checked search request, ready for the store. */
export interface CheckedSearch {
  ownerId: string;
  query: string;
  sources: SearchSourceType[];
  folderId?: string;
  recordingId?: string;
  createdAfter?: Date;
  createdBefore?: Date;
  limit: number;
  after?: RankPosition;
  /** The ranking of the walk a cursor continues; absent on a first page. */
  mode?: 'text' | 'hybrid';
  filters: string;
}

/** The sources a request names, each once; an unknown value is invalid_request. */
export function sourcesOf(values: readonly library.PassageSource[]): SearchSourceType[] {
  const out = new Set<SearchSourceType>();
  for (const value of values) {
    const word = SOURCE_WORDS.get(value);
    if (!word) throw new MurmurError('invalid_request', `type must be one of ${[...SOURCE_VALUES.keys()].join(', ')}.`, { param: 'type' });
    out.add(word);
  }
  return [...out].sort();
}

/** Semantic search's parts: the engine that embeds the query, and where the passages' vectors are. */
export interface SemanticSearch {
  engine: EmbeddingsEngine;
  index: VectorIndex;
  log: Logger;
}

/** How many passages each ranking contributes to a hybrid page: the deepest a hybrid search pages. */
export const HYBRID_CANDIDATES = 100;
/** Reciprocal rank fusion's constant (Cormack, Clarke & Büttcher 2009): 1 / (k + rank). */
export const RRF_K = 60;
/** The longest a query's embedding may take before the page is ranked by text alone. */
const QUERY_EMBED_TIMEOUT_MS = 3_000;

/**
 * Fuses ranked lists by reciprocal rank: each id scores the sum of 1 / (k + rank) over the lists
 * it is in (rank from 1); best first, ties by id.
 */
export function reciprocalRankFusion(lists: ReadonlyArray<ReadonlyArray<string>>, k = RRF_K): Array<{ id: string; score: number }> {
  const scores = new Map<string, number>();
  for (const list of lists) list.forEach((id, i) => scores.set(id, (scores.get(id) ?? 0) + 1 / (k + i + 1)));
  return [...scores].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

export class SearchPages {
  private readonly codec: CursorCodec;

  constructor(
    secret: string,
    private readonly semantic?: SemanticSearch,
  ) {
    this.codec = new CursorCodec(secret);
  }

  /** Where a cursor points after, and the ranking of its walk; invalid_request for one not issued to this owner for these filters. */
  positionOf(ownerId: string, cursor: string, filters: string): { after: RankPosition; mode: 'text' | 'hybrid' } | undefined {
    if (cursor === '') return undefined;
    const payload = this.codec.decode(cursor, isSearchCursor, ownerId);
    if (payload.f !== filters) {
      throw new MurmurError('invalid_request', 'The cursor was issued for another query or other filters. Repeat the first page’s query and filters unchanged, or start again without a cursor.', {
        param: 'cursor',
      });
    }
    return { after: { score: payload.s, id: payload.i }, mode: payload.m };
  }

  /**
   * Runs a checked search and cuts one page, with the cursor after its last passage: ranked by
   * text, or — with an embeddings engine, when the query's vector comes in time — by text and
   * vectors fused (the response says which).
   */
  async page(store: PassageSearchStore, search: CheckedSearch): Promise<library.SearchPassagesResponse> {
    const filter = filterOf(search);
    if (this.semantic && search.mode !== 'text') {
      const hybrid = await this.hybridPage(store, search, filter, this.semantic);
      if (hybrid) return hybrid;
      // A hybrid walk cannot go on by text: its scores are of another scale.
      if (search.mode === 'hybrid') throw new MurmurError('service_unavailable', 'The embeddings engine did not answer, so this page of a hybrid search cannot be ranked. Retry shortly, or start again without a cursor.');
    } else if (search.mode === 'hybrid') {
      throw new MurmurError('invalid_request', 'The cursor belongs to a hybrid search, and embeddings are not configured any more. Start again without a cursor.', { param: 'cursor' });
    }
    const result = await store.searchPassages(search.ownerId, filter, { after: search.after, limit: search.limit + 1 });
    if ('refused' in result) throw refusal(result.refused);
    return this.cut(search, result.hits, library.SearchRanking.SEARCH_RANKING_TEXT);
  }

  /** A hybrid page, or undefined when the query could not be embedded (the caller ranks by text). */
  private async hybridPage(store: PassageSearchStore, search: CheckedSearch, filter: PassageFilter, semantic: SemanticSearch): Promise<library.SearchPassagesResponse | undefined> {
    const [text, vector] = await Promise.all([
      store.textCandidates(search.ownerId, filter, HYBRID_CANDIDATES),
      semantic.engine.embed([search.query], AbortSignal.timeout(QUERY_EMBED_TIMEOUT_MS)).then(
        ([v]) => v,
        (err: unknown) => {
          semantic.log.warn({ err: (err as Error).message }, 'the query could not be embedded; ranking by text alone');
          return undefined;
        },
      ),
    ]);
    if ('refused' in text) throw refusal(text.refused);
    if (!vector) return undefined;
    const near = await semantic.index.nearest(search.ownerId, filter, semantic.engine.model, vector, HYBRID_CANDIDATES);
    const fused = reciprocalRankFusion([text.ranked.map((r) => r.id), near.map((n) => n.id)]);
    const after = search.after;
    const rest = after ? fused.filter((f) => f.score < after.score || (f.score === after.score && f.id > after.id)) : fused;
    const hits = await store.hitsByIds(search.ownerId, rest.slice(0, search.limit + 1), search.query);
    return this.cut(search, hits, library.SearchRanking.SEARCH_RANKING_HYBRID);
  }

  /** One page of `hits` (fetched one longer than the page to learn whether more follow). */
  private cut(search: CheckedSearch, hits: PassageHit[], ranking: library.SearchRanking): library.SearchPassagesResponse {
    const hasMore = hits.length > search.limit;
    const served = hasMore ? hits.slice(0, search.limit) : hits;
    const last = served[served.length - 1];
    const m = ranking === library.SearchRanking.SEARCH_RANKING_HYBRID ? 'hybrid' : 'text';
    const nextCursor = hasMore && last ? this.codec.encode({ v: 1, l: 'search', s: last.score, i: last.id, f: search.filters, m } satisfies SearchCursor, search.ownerId) : '';
    return { passages: served.map(passageMessage), page: { hasMore, nextCursor }, ranking };
  }
}

function filterOf(search: CheckedSearch): PassageFilter {
  return {
    query: search.query,
    sources: search.sources,
    ...(search.folderId !== undefined ? { folderId: search.folderId } : {}),
    ...(search.recordingId !== undefined ? { recordingId: search.recordingId } : {}),
    ...(search.createdAfter ? { createdAfter: search.createdAfter } : {}),
    ...(search.createdBefore ? { createdBefore: search.createdBefore } : {}),
  };
}

function refusal(reason: 'no_terms' | 'only_excluded'): MurmurError {
  if (reason === 'no_terms') return noSearchableWords('q');
  return new MurmurError('invalid_request', 'q excludes words but asks for none that can be searched: add at least one distinctive word to find.', { param: 'q' });
}

/** The digest a search cursor is bound to: the query and every filter. */
export function searchFilters(parts: { query: string; sources: string[]; folderId?: string; recordingId?: string; after?: Date; before?: Date }): string {
  return filterDigest([parts.query, parts.sources.join(','), parts.folderId, parts.recordingId, parts.after?.getTime(), parts.before?.getTime()]);
}

function passageMessage(hit: PassageHit): library.Passage {
  return {
    id: hit.id,
    source: SOURCE_VALUES.get(hit.source)!,
    sourceId: hit.sourceId,
    title: hit.title,
    text: hit.text,
    highlights: hit.highlights.map(([offset, length]) => ({ offset, length })),
    ...(hit.start !== null ? { startSeconds: hit.start } : {}),
    ...(hit.end !== null ? { endSeconds: hit.end } : {}),
    speaker: hit.speaker ?? '',
    speakerName: hit.speakerName,
    score: hit.score,
    sourceCreatedAt: hit.sourceCreatedAt,
    threadItemId: hit.threadItemId ?? '',
  };
}

export { searchQueryOf };
