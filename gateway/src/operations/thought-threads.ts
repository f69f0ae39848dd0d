/** Thought Threads: list (paged) and one with its items and context sources. */
import type { OperationContext } from './context';
import { pageRequest, type PageInput } from './paging';
import { presentList, presentThread, presentThreadSummary } from './present';

export async function listThoughtThreads(ctx: OperationContext, input: PageInput) {
  const res = await ctx.clients.library.listThoughtThreads({ ownerId: ctx.principal.userId, page: pageRequest(input) });
  return presentList(res.threads.map(presentThreadSummary), res.page);
}

export async function getThoughtThread(ctx: OperationContext, id: string) {
  const { thread } = await ctx.clients.library.getThoughtThread({ ownerId: ctx.principal.userId, threadId: id });
  if (!thread) throw new Error('library returned no thread');
  return presentThread(thread);
}
