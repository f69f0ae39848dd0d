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
  const page = presentList(res.recordings.map(presentRecordingSummary), res.page);
  // grpc-js keeps the decoded response reachable from the finished call until a full collection,
  // so each page's rows outlived the request and were copied by every scavenge: dropping them
  // here halved what survives a scavenge under the read-path load (bench/README.md, read-path).
  res.recordings.length = 0;
  return page;
}

/** One recording; `words`: with its transcript's words (read only then: a two-hour recording holds ~20,000). */
export async function getRecording(ctx: OperationContext, id: string, options: { words?: boolean } = {}) {
  const words = options.words ?? false;
  const { recording } = await ctx.clients.library.getRecording({ ownerId: ctx.principal.userId, recordingId: id, includeWords: words });
  if (!recording) throw new Error('library returned no recording');
  return presentRecording(recording, { words });
}

/** Names the speakers of one of the caller's recordings (id → name; "" clears); answers the recording. */
export async function setSpeakerNames(ctx: OperationContext, id: string, names: Record<string, string>) {
  const { recording } = await ctx.clients.library.setSpeakerNames({ ownerId: ctx.principal.userId, recordingId: id, names });
  if (!recording) throw new Error('library returned no recording');
  return presentRecording(recording);
}
