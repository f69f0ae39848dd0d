/** Search results as the public API shows them (shapes: searchResultShape, searchPageShape). */
import type { SearchRankingWord, SearchSourceType } from '@murmur/contract';
import { library } from '@murmur/proto';
import { presentList } from './present';

const SOURCE_WORDS: Record<number, SearchSourceType> = {
  [library.PassageSource.PASSAGE_SOURCE_RECORDING]: 'recording',
  [library.PassageSource.PASSAGE_SOURCE_THOUGHT_THREAD]: 'thought_thread',
  [library.PassageSource.PASSAGE_SOURCE_KNOWLEDGE_BASE]: 'knowledge_base',
};

const RANKING_WORDS: Record<number, SearchRankingWord> = {
  [library.SearchRanking.SEARCH_RANKING_TEXT]: 'text',
  [library.SearchRanking.SEARCH_RANKING_HYBRID]: 'hybrid',
};

/** Where the API serves a source (knowledge bases have no route of their own: null). */
function sourceUrl(type: SearchSourceType, id: string): string | null {
  if (type === 'recording') return `/api/v1/recordings/${id}`;
  if (type === 'thought_thread') return `/api/v1/thought-threads/${id}`;
  return null;
}

export function presentSearchResult(p: library.Passage) {
  const type = SOURCE_WORDS[p.source] ?? 'recording';
  return {
    object: 'search_result' as const,
    type,
    id: p.sourceId,
    passage_id: p.id,
    title: p.title,
    passage: p.text,
    highlights: p.highlights.map((h) => ({ offset: h.offset, length: h.length })),
    start: p.startSeconds ?? null,
    end: p.endSeconds ?? null,
    speaker: p.speaker === '' ? null : p.speaker,
    speaker_name: p.speakerName === '' ? null : p.speakerName,
    thread_item_id: p.threadItemId === '' ? null : p.threadItemId,
    score: Math.round(p.score * 1e6) / 1e6,
    created_at: p.sourceCreatedAt ? p.sourceCreatedAt.toISOString() : null,
    url: sourceUrl(type, p.sourceId),
  };
}

export function presentSearchPage(res: library.SearchPassagesResponse) {
  return { ...presentList(res.passages.map(presentSearchResult), res.page), ranking: RANKING_WORDS[res.ranking] ?? 'text' };
}
