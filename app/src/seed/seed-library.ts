/**
 * Writes a {@link SeedPlan} into a user's library through the library service's internal
 * RPCs, so seeded content goes through exactly the validation real content does.
 */
import { library } from '@murmur/proto';
import type { PromiseClient } from '@murmur/kit';
import { buildSeedPlan } from './seed-content';

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

export interface SeedResult {
  folders: number;
  knowledgeBases: number;
  recordings: number;
  artifacts: number;
  threads: number;
}

/** Seeds `recordings` recordings (and folders, KBs, threads, artifacts around them) for `ownerId`. */
export async function seedLibrary(client: LibraryClient, ownerId: string, opts: { recordings: number; now?: Date; seed?: number }): Promise<SeedResult> {
  const plan = buildSeedPlan({ recordings: opts.recordings, now: opts.now ?? new Date(), seed: opts.seed });
  const ids = new Map<string, string>();
  const idOf = (key: string): string => {
    const id = ids.get(key);
    if (!id) throw new Error(`seed plan references unknown key ${key}`);
    return id;
  };
  for (const f of plan.folders) {
    const { folder } = await client.createFolder({ ownerId, name: f.name, createdAt: f.createdAt });
    ids.set(f.key, folder!.id);
  }
  let artifacts = 0;
  const concurrency = 8;
  for (let i = 0; i < plan.recordings.length; i += concurrency) {
    await Promise.all(
      plan.recordings.slice(i, i + concurrency).map(async (r) => {
        const { recording } = await client.createRecording({
          ownerId,
          title: r.title,
          folderId: r.folderKey ? idOf(r.folderKey) : '',
          durationSeconds: r.durationSeconds,
          createdAt: r.createdAt,
          transcript: { text: r.text, language: r.language, segments: r.segments },
          recordingId: '',
        });
        ids.set(r.key, recording!.id);
        for (const a of r.artifacts) {
          await client.addArtifact({
            ownerId,
            recordingId: recording!.id,
            kind: a.kind,
            format: a.format === 'plain' ? library.ArtifactFormat.ARTIFACT_FORMAT_PLAIN : library.ArtifactFormat.ARTIFACT_FORMAT_MARKDOWN,
            content: a.content,
            creditsCharged: 0,
            // Seeded artifacts are text only, like those stored before data was kept.
            data: undefined,
          });
          artifacts += 1;
        }
      }),
    );
  }
  for (const kb of plan.knowledgeBases) {
    const { knowledgeBase } = await client.createKnowledgeBase({ ownerId, name: kb.name, description: kb.description, createdAt: kb.createdAt });
    ids.set(kb.key, knowledgeBase!.id);
    for (const key of kb.recordingKeys) {
      await client.addKnowledgeBaseRecording({ ownerId, knowledgeBaseId: knowledgeBase!.id, recordingId: idOf(key) });
    }
  }
  for (const t of plan.threads) {
    const { thread } = await client.createThoughtThread({ ownerId, title: t.title, createdAt: t.createdAt });
    for (const item of t.items) {
      await client.addThreadItem({
        ownerId,
        threadId: thread!.id,
        kind: ITEM_KIND[item.kind],
        text: item.text,
        recordingId: item.recordingKey ? idOf(item.recordingKey) : '',
      });
    }
    for (const src of t.contextSources) {
      await client.addThreadContextSource({ ownerId, threadId: thread!.id, kind: SOURCE_KIND[src.kind], refId: idOf(src.refKey) });
    }
  }
  return {
    folders: plan.folders.length,
    knowledgeBases: plan.knowledgeBases.length,
    recordings: plan.recordings.length,
    artifacts,
    threads: plan.threads.length,
  };
}
