/**
 * Writes a {@link SeedPlan} into a user's library through the library service's internal
 * RPCs, so seeded content goes through exactly the validation real content does; what is there
 * already of the plan is not written again (seed-progress.ts).
 */
import { library } from '@murmur/proto';
import type { PromiseClient } from '@murmur/kit';
import { buildSeedPlan } from './seed-content';
import { contextSourceKey, seedProgress, seedRecordingId, type SeedOptions } from './seed-progress';

type LibraryClient = PromiseClient<library.LibraryServiceClient>;

const ITEM_KIND = {
  note: library.ThreadItemKind.THREAD_ITEM_KIND_NOTE,
  recording: library.ThreadItemKind.THREAD_ITEM_KIND_RECORDING,
  question: library.ThreadItemKind.THREAD_ITEM_KIND_QUESTION,
  answer: library.ThreadItemKind.THREAD_ITEM_KIND_ANSWER,
} as const;

const SOURCE_KIND = {
  recording: library.ContextSourceKind.CONTEXT_SOURCE_KIND_RECORDING,
  folder: library.ContextSourceKind.CONTEXT_SOURCE_KIND_FOLDER,
  knowledge_base: library.ContextSourceKind.CONTEXT_SOURCE_KIND_KNOWLEDGE_BASE,
} as const;

/** What the library holds of the plan once the seed is done. */
export interface SeedResult {
  folders: number;
  knowledgeBases: number;
  recordings: number;
  artifacts: number;
  threads: number;
}

/**
 * Seeds `recordings` recordings (and folders, KBs, threads, artifacts around them) for `ownerId`.
 * Idempotent and resumable: called again with the same options (`now` and `seed` included) it
 * writes only what the library lacks of the plan (seed-progress.ts), so a seed stopped half-way
 * is completed, never duplicated. Without `now` every call plans anew (the admin CLI's `seed`
 * adds a library each time).
 */
export async function seedLibrary(client: LibraryClient, ownerId: string, options: { recordings: number; now?: Date; seed?: number }): Promise<SeedResult> {
  const opts: SeedOptions = { ...options, now: options.now ?? new Date() };
  const plan = buildSeedPlan(opts);
  const done = await seedProgress(client, ownerId, plan, opts);
  const ids = done.ids;
  for (const r of plan.recordings) ids.set(r.key, seedRecordingId(ownerId, opts, r.key));
  const idOf = (key: string): string => {
    const id = ids.get(key);
    if (!id) throw new Error(`seed plan references unknown key ${key}`);
    return id;
  };
  for (const f of plan.folders) {
    if (ids.has(f.key)) continue;
    const { folder } = await client.createFolder({ ownerId, name: f.name, createdAt: f.createdAt });
    ids.set(f.key, folder!.id);
  }
  const concurrency = 8;
  for (let i = 0; i < plan.recordings.length; i += concurrency) {
    await Promise.all(
      plan.recordings.slice(i, i + concurrency).map(async (r) => {
        const stored = done.artifactsOf.get(r.key);
        if (stored === undefined) {
          await client.createRecording({
            ownerId,
            title: r.title,
            folderId: r.folderKey ? idOf(r.folderKey) : '',
            durationSeconds: r.durationSeconds,
            createdAt: r.createdAt,
            transcript: { text: r.text, language: r.language, segments: r.segments },
            // Its stable id: made twice, it is the same recording (CreateRecording is idempotent for it).
            recordingId: idOf(r.key),
          });
        }
        for (const a of r.artifacts.slice(stored ?? 0)) {
          await client.addArtifact({
            ownerId,
            recordingId: idOf(r.key),
            kind: a.kind,
            format: a.format === 'plain' ? library.ArtifactFormat.ARTIFACT_FORMAT_PLAIN : library.ArtifactFormat.ARTIFACT_FORMAT_MARKDOWN,
            content: a.content,
            creditsCharged: 0,
            // Seeded artifacts are text only, like those stored before data was kept.
            data: undefined,
          });
        }
      }),
    );
  }
  for (const kb of plan.knowledgeBases) {
    if (!ids.has(kb.key)) {
      const { knowledgeBase } = await client.createKnowledgeBase({ ownerId, name: kb.name, description: kb.description, createdAt: kb.createdAt });
      ids.set(kb.key, knowledgeBase!.id);
    }
    // Added in plan order, one after another: the ones it holds are the first ones.
    for (const key of [...new Set(kb.recordingKeys)].slice(done.kbRecordingsOf.get(kb.key) ?? 0)) {
      await client.addKnowledgeBaseRecording({ ownerId, knowledgeBaseId: idOf(kb.key), recordingId: idOf(key) });
    }
  }
  for (const t of plan.threads) {
    const found = done.threads.get(t.key);
    const threadId = found?.id ?? (await client.createThoughtThread({ ownerId, title: t.title, createdAt: t.createdAt })).thread!.id;
    for (const item of t.items.slice(found?.itemCount ?? 0)) {
      await client.addThreadItem({
        ownerId,
        threadId,
        kind: ITEM_KIND[item.kind],
        text: item.text,
        recordingId: item.recordingKey ? idOf(item.recordingKey) : '',
      });
    }
    for (const src of t.contextSources) {
      const [kind, refId] = [SOURCE_KIND[src.kind], idOf(src.refKey)];
      if (!found?.sources.has(contextSourceKey(kind, refId))) await client.addThreadContextSource({ ownerId, threadId, kind, refId });
    }
  }
  return {
    folders: plan.folders.length,
    knowledgeBases: plan.knowledgeBases.length,
    recordings: plan.recordings.length,
    artifacts: plan.recordings.reduce((n, r) => n + r.artifacts.length, 0),
    threads: plan.threads.length,
  };
}
