/** Recordings: list (paged, searchable, filterable) and one with transcript and artifacts. */
import type { OperationContext } from './context';
import { pageRequest, type PageInput } from './paging';
import { presentList, presentRecording, presentRecordingSummary } from './present';

export interface ListRecordingsInput extends PageInput {
  /** Full-text search over title and transcript. */
  q?: string;
  folder_id?: string;
  created_after?: Date;
  created_before?: Date;
}

export async function listRecordings(ctx: OperationContext, input: ListRecordingsInput) {
  const res = await ctx.clients.library.listRecordings({
    ownerId: ctx.principal.userId,
    page: pageRequest(input),
    query: input.q ?? '',
    folderId: input.folder_id ?? '',
    createdAfter: input.created_after,
    createdBefore: input.created_before,
  });
  return presentList(res.recordings.map(presentRecordingSummary), res.page);
}

export async function getRecording(ctx: OperationContext, id: string) {
  const { recording } = await ctx.clients.library.getRecording({ ownerId: ctx.principal.userId, recordingId: id });
  if (!recording) throw new Error('library returned no recording');
  return presentRecording(recording);
}
