/**
 * What of a {@link SeedPlan} an owner's library holds already, so a seed that was stopped half-way
 * (Ctrl-C or a crash during `npm start`'s first start) is completed by running it again with the
 * same options, without a duplicate. Every planned item has a stable key: a recording its id,
 * derived from the owner, the plan's options and its plan key ({@link seedRecordingId}); a folder
 * or knowledge base its name and creation time; a thread its title and creation time. Thread
 * items, artifacts and a knowledge base's recordings are written in plan order, one after another,
 * so the ones present are the plan's first ones; a thread's context sources are told apart by kind
 * and target.
 */
import { createHash } from 'node:crypto';
import type { library } from '@murmur/proto';
import { MAX_PAGE_LIMIT } from '@murmur/contract';
import { type PromiseClient } from '@murmur/kit';
import type { SeedPlan } from './seed-content';

type LibraryClient = PromiseClient<library.LibraryServiceClient>;

/** The options a plan was built from: the same ones give the same plan, item for item. */
export interface SeedOptions {
  recordings: number;
  now: Date;
  seed?: number;
}

/** The planned items the library holds, by plan key. */
export interface SeedProgress {
  /** Folder and knowledge-base ids. */
  ids: Map<string, string>;
  /** Recordings present, with how many of their planned artifacts are stored. */
  artifactsOf: Map<string, number>;
  /** Knowledge bases present, with how many recordings they gather. */
  kbRecordingsOf: Map<string, number>;
  /** Threads present: their id, how many of their planned items they hold, their sources (`kind:ref id`). */
  threads: Map<string, { id: string; itemCount: number; sources: Set<string> }>;
}

/**
 * The id of a planned recording: the same owner, options and plan key always name the same
 * recording, so CreateRecording (idempotent for a caller-chosen id) never makes it twice.
 */
export function seedRecordingId(ownerId: string, opts: SeedOptions, key: string): string {
  const plan = `${opts.seed ?? 'default'}/${opts.recordings}/${opts.now.toISOString()}`;
  return `rec_${createHash('sha256').update(`${ownerId}\n${plan}\n${key}`).digest('hex').slice(0, 32)}`;
}

/** How {@link SeedProgress} names a thread's context source. */
export const contextSourceKey = (kind: library.ContextSourceKind, refId: string): string => `${kind}:${refId}`;

/** Reads what the library holds of `plan` for `ownerId`; one call for an empty library. */
export async function seedProgress(client: LibraryClient, ownerId: string, plan: SeedPlan, opts: SeedOptions): Promise<SeedProgress> {
  const progress: SeedProgress = { ids: new Map(), artifactsOf: new Map(), kbRecordingsOf: new Map(), threads: new Map() };
  const stats = await client.getLibraryStats({ ownerId });
  if (stats.recordings + stats.folders + stats.knowledgeBases + stats.thoughtThreads === 0) return progress;

  const named = (name: string, at: Date | undefined) => `${name}\n${at?.getTime()}`;
  const folders = await everyPage((page) => client.listFolders({ ownerId, page }).then((r) => ({ rows: r.folders, page: r.page })));
  const folderIds = new Map(folders.map((f) => [named(f.name, f.createdAt), f.id]));
  for (const f of plan.folders) {
    const id = folderIds.get(named(f.name, f.createdAt));
    if (id) progress.ids.set(f.key, id);
  }

  const kbs = await everyPage((page) => client.listKnowledgeBases({ ownerId, page }).then((r) => ({ rows: r.knowledgeBases, page: r.page })));
  const kbOf = new Map(kbs.map((kb) => [named(kb.name, kb.createdAt), kb]));
  for (const kb of plan.knowledgeBases) {
    const found = kbOf.get(named(kb.name, kb.createdAt));
    if (found) {
      progress.ids.set(kb.key, found.id);
      progress.kbRecordingsOf.set(kb.key, found.recordingCount);
    }
  }

  const threads = await everyPage((page) => client.listThoughtThreads({ ownerId, page }).then((r) => ({ rows: r.threads, page: r.page })));
  const threadOf = new Map(threads.map((t) => [named(t.title, t.createdAt), t]));
  for (const t of plan.threads) {
    const found = threadOf.get(named(t.title, t.createdAt));
    if (!found) continue;
    const { thread } = await client.getThoughtThread({ ownerId, threadId: found.id });
    const sources = new Set((thread?.contextSources ?? []).map((c) => contextSourceKey(c.kind, c.refId)));
    progress.threads.set(t.key, { id: found.id, itemCount: thread?.items.length ?? 0, sources });
  }

  // Only the plan's time span: the owner's other recordings are not read.
  const times = plan.recordings.map((r) => r.createdAt.getTime());
  if (times.length === 0) return progress;
  const range = { createdAfter: new Date(Math.min(...times) - 1), createdBefore: new Date(Math.max(...times) + 1) };
  const present = new Set(
    (await everyPage((page) => client.listRecordings({ ownerId, page, query: '', folderId: '', ...range }).then((r) => ({ rows: r.recordings, page: r.page })))).map((r) => r.id),
  );
  for (const r of plan.recordings) {
    const id = seedRecordingId(ownerId, opts, r.key);
    if (!present.has(id)) continue;
    const { recording } = await client.getRecording({ ownerId, recordingId: id, includeWords: false });
    progress.artifactsOf.set(r.key, recording?.artifacts.length ?? 0);
  }
  return progress;
}

/** Every row of a list RPC, following its cursors. */
async function everyPage<T>(fetch: (page: library.PageRequest) => Promise<{ rows: T[]; page: library.PageInfo | undefined }>): Promise<T[]> {
  const rows: T[] = [];
  let cursor = '';
  for (;;) {
    const res = await fetch({ limit: MAX_PAGE_LIMIT, cursor });
    rows.push(...res.rows);
    if (!res.page?.hasMore) return rows;
    cursor = res.page.nextCursor;
  }
}
