/**
 * An owner's whole library as plain, ordered values, and what it must be after a seed: two
 * snapshots are equal only when the library holds exactly the plan — every item once, nothing
 * missing, nothing twice. Read over the library's gRPC API (as the admin), so it works against an
 * in-process harness and against `npm start`'s processes alike.
 */
import { MAX_PAGE_LIMIT } from '@murmur/contract';
import { type PromiseClient } from '@murmur/kit';
import { library } from '@murmur/proto';
import { seedRecordingId, type SeedOptions, type SeedPlan } from '@murmur/app';

type LibraryClient = PromiseClient<library.LibraryServiceClient>;

export interface LibrarySnapshot {
  folders: string[];
  knowledgeBases: string[];
  recordings: string[];
  threads: string[];
}

const at = (d: Date | undefined) => d?.toISOString() ?? '-';
const itemKind = (kind: string) => `THREAD_ITEM_KIND_${kind.toUpperCase()}`;
const sourceKind = (kind: string) => `CONTEXT_SOURCE_KIND_${kind.toUpperCase()}`;
const formatOf = (format: string) => `ARTIFACT_FORMAT_${format.toUpperCase()}`;
const sorted = (xs: string[]) => [...xs].sort();

/** Every row of a list RPC, following its cursors. */
async function all<T>(fetch: (page: library.PageRequest) => Promise<{ rows: T[]; page: library.PageInfo | undefined }>): Promise<T[]> {
  const rows: T[] = [];
  let cursor = '';
  for (;;) {
    const res = await fetch({ limit: MAX_PAGE_LIMIT, cursor });
    rows.push(...res.rows);
    if (!res.page?.hasMore) return rows;
    cursor = res.page.nextCursor;
  }
}

/** What the library holds for `ownerId`. */
export async function librarySnapshot(client: LibraryClient, ownerId: string): Promise<LibrarySnapshot> {
  const folders = await all((page) => client.listFolders({ ownerId, page }).then((r) => ({ rows: r.folders, page: r.page })));
  const folderName = new Map(folders.map((f) => [f.id, f.name]));
  const kbs = await all((page) => client.listKnowledgeBases({ ownerId, page }).then((r) => ({ rows: r.knowledgeBases, page: r.page })));
  const listed = await all((page) =>
    client.listRecordings({ ownerId, page, query: '', folderId: '', createdAfter: undefined, createdBefore: undefined }).then((r) => ({ rows: r.recordings, page: r.page })),
  );
  const recordings = await Promise.all(listed.map(async (r) => (await client.getRecording({ ownerId, recordingId: r.id })).recording!));
  const threadList = await all((page) => client.listThoughtThreads({ ownerId, page }).then((r) => ({ rows: r.threads, page: r.page })));
  const threads = await Promise.all(threadList.map(async (t) => (await client.getThoughtThread({ ownerId, threadId: t.id })).thread!));
  return {
    folders: sorted(folders.map((f) => [f.name, at(f.createdAt), f.recordingCount].join(' | '))),
    knowledgeBases: sorted(kbs.map((kb) => [kb.name, kb.description, at(kb.createdAt), kb.recordingCount].join(' | '))),
    recordings: sorted(
      recordings.map((r) =>
        [r.id, r.title, at(r.createdAt), folderName.get(r.folderId) ?? '-', r.durationSeconds, r.transcript?.text ?? '-', r.transcript?.segments.length ?? 0, ...r.artifacts.map((a) => `${a.kind}/${library.ArtifactFormat[a.format]}/${a.content}`)].join(' | '),
      ),
    ),
    threads: sorted(
      threads.map((t) =>
        [
          t.title,
          at(t.createdAt),
          ...t.items.map((i) => `${library.ThreadItemKind[i.kind]}:${i.recordingId || '-'}:${i.text}`),
          ...sorted(t.contextSources.map((s) => `${library.ContextSourceKind[s.kind]}:${s.title}`)),
        ].join(' | '),
      ),
    ),
  };
}

/** What the library must hold for `ownerId` once `plan` (built from `opts`) is seeded into an empty one. */
export function plannedSnapshot(plan: SeedPlan, ownerId: string, opts: SeedOptions): LibrarySnapshot {
  const recordingId = (key: string) => seedRecordingId(ownerId, opts, key);
  const nameOf = new Map<string, string>([
    ...plan.folders.map((f) => [f.key, f.name] as const),
    ...plan.knowledgeBases.map((kb) => [kb.key, kb.name] as const),
    ...plan.recordings.map((r) => [r.key, r.title] as const),
  ]);
  return {
    folders: sorted(plan.folders.map((f) => [f.name, at(f.createdAt), plan.recordings.filter((r) => r.folderKey === f.key).length].join(' | '))),
    knowledgeBases: sorted(plan.knowledgeBases.map((kb) => [kb.name, kb.description, at(kb.createdAt), new Set(kb.recordingKeys).size].join(' | '))),
    recordings: sorted(
      plan.recordings.map((r) =>
        [recordingId(r.key), r.title, at(r.createdAt), r.folderKey ? nameOf.get(r.folderKey) : '-', r.durationSeconds, r.text, r.segments.length, ...r.artifacts.map((a) => `${a.kind}/${formatOf(a.format)}/${a.content}`)].join(' | '),
      ),
    ),
    threads: sorted(
      plan.threads.map((t) =>
        [
          t.title,
          at(t.createdAt),
          ...t.items.map((i) => `${itemKind(i.kind)}:${i.recordingKey ? recordingId(i.recordingKey) : '-'}:${i.text}`),
          // A source added twice is one source.
          ...sorted([...new Set(t.contextSources.map((s) => `${sourceKind(s.kind)}:${nameOf.get(s.refKey)}`))]),
        ].join(' | '),
      ),
    ),
  };
}
