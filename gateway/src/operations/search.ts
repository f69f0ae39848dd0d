/** Passage search across the caller's recordings, threads and knowledge bases (GET /search, the `search` tool). */
import { invalidParam, SEARCH_SOURCE_TYPES, type SearchSourceType } from '@murmur/contract';
import { library } from '@murmur/proto';
import type { OperationContext } from './context';
import { pageRequest, type PageInput } from './paging';
import { presentSearchPage } from './present-search';

export interface SearchInput extends PageInput {
  /** Words, "quoted phrases", OR, -excluded (websearch syntax). Required. */
  q?: string;
  /** Comma-separated source types; absent means all. */
  type?: string;
  folder_id?: string;
  recording_id?: string;
  created_after?: Date;
  created_before?: Date;
}

const SOURCE_VALUES: Record<SearchSourceType, library.PassageSource> = {
  recording: library.PassageSource.PASSAGE_SOURCE_RECORDING,
  thought_thread: library.PassageSource.PASSAGE_SOURCE_THOUGHT_THREAD,
  knowledge_base: library.PassageSource.PASSAGE_SOURCE_KNOWLEDGE_BASE,
};

/** `type` as the RPC's sources: a comma-separated list of the contract's words, each known. */
export function searchSourcesOf(type: string | undefined): library.PassageSource[] {
  if (type === undefined) return [];
  const words = type.split(',').map((w) => w.trim());
  return words.map((word) => {
    if (!(SEARCH_SOURCE_TYPES as readonly string[]).includes(word)) {
      throw invalidParam('type', `type must be one or more of ${SEARCH_SOURCE_TYPES.join(', ')}, separated by commas.`);
    }
    return SOURCE_VALUES[word as SearchSourceType];
  });
}

export async function searchPassages(ctx: OperationContext, input: SearchInput) {
  if (input.q === undefined) throw invalidParam('q', 'q is required: pass the words to find, e.g. q=pricing page.');
  const res = await ctx.clients.library.searchPassages({
    ownerId: ctx.principal.userId,
    page: pageRequest(input),
    query: input.q,
    sources: searchSourcesOf(input.type),
    folderId: input.folder_id ?? '',
    recordingId: input.recording_id ?? '',
    createdAfter: input.created_after,
    createdBefore: input.created_before,
  });
  return presentSearchPage(res);
}
