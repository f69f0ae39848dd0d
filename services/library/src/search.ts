/**
 * Passage search's rules (LibraryService.SearchPassages): the query and filters checked, the
 * ranked page cut with a signed cursor, the refusals of queries that can never match. Ranked
 * paging is keyset paging on (score DESC, id): a cursor carries the last passage's score and id,
 * signed and bound to its owner and filters like every list cursor.
 */
import { MurmurError, noSearchableWords, searchQueryOf, type SearchSourceType } from '@murmur/contract';
import { CursorCodec, filterDigest } from '@murmur/kit';
import { library } from '@murmur/proto';
import type { PassageHit, RankPosition } from './store-passages';
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
}

function isSearchCursor(value: unknown): value is SearchCursor {
  if (typeof value !== 'object' || value === null) return false;
  const c = value as Record<string, unknown>;
  return c.v === 1 && c.l === 'search' && typeof c.s === 'number' && Number.isFinite(c.s) && typeof c.i === 'string' && c.i.length <= 64 && typeof c.f === 'string';
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

export class SearchPages {
  private readonly codec: CursorCodec;

  constructor(secret: string) {
    this.codec = new CursorCodec(secret);
  }

  /** The position a cursor points after; invalid_request for one not issued to this owner for these filters. */
  positionOf(ownerId: string, cursor: string, filters: string): RankPosition | undefined {
    if (cursor === '') return undefined;
    const payload = this.codec.decode(cursor, isSearchCursor, ownerId);
    if (payload.f !== filters) {
      throw new MurmurError('invalid_request', 'The cursor was issued for another query or other filters. Repeat the first page’s query and filters unchanged, or start again without a cursor.', {
        param: 'cursor',
      });
    }
    return { score: payload.s, id: payload.i };
  }

  /** Runs a checked search and cuts one page, with the cursor after its last passage. */
  async page(store: PassageSearchStore, search: CheckedSearch): Promise<library.SearchPassagesResponse> {
    const result = await store.searchPassages(
      search.ownerId,
      {
        query: search.query,
        sources: search.sources,
        ...(search.folderId !== undefined ? { folderId: search.folderId } : {}),
        ...(search.recordingId !== undefined ? { recordingId: search.recordingId } : {}),
        ...(search.createdAfter ? { createdAfter: search.createdAfter } : {}),
        ...(search.createdBefore ? { createdBefore: search.createdBefore } : {}),
      },
      { after: search.after, limit: search.limit + 1 },
    );
    if ('refused' in result) {
      if (result.refused === 'no_terms') throw noSearchableWords('q');
      throw new MurmurError('invalid_request', 'q excludes words but asks for none that can be searched: add at least one distinctive word to find.', { param: 'q' });
    }
    const hasMore = result.hits.length > search.limit;
    const served = hasMore ? result.hits.slice(0, search.limit) : result.hits;
    const last = served[served.length - 1];
    const nextCursor = hasMore && last ? this.codec.encode({ v: 1, l: 'search', s: last.score, i: last.id, f: search.filters } satisfies SearchCursor, search.ownerId) : '';
    return { passages: served.map(passageMessage), page: { hasMore, nextCursor }, ranking: library.SearchRanking.SEARCH_RANKING_TEXT };
  }
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
