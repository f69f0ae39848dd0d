/** Folders and knowledge bases: paged lists. */
import type { OperationContext } from './context';
import { pageRequest, type PageInput } from './paging';
import { presentFolder, presentKnowledgeBase, presentList } from './present';

export async function listFolders(ctx: OperationContext, input: PageInput) {
  const res = await ctx.clients.library.listFolders({ ownerId: ctx.principal.userId, page: pageRequest(input) });
  return presentList(res.folders.map(presentFolder), res.page);
}

export async function listKnowledgeBases(ctx: OperationContext, input: PageInput) {
  const res = await ctx.clients.library.listKnowledgeBases({ ownerId: ctx.principal.userId, page: pageRequest(input) });
  return presentList(res.knowledgeBases.map(presentKnowledgeBase), res.page);
}
