/**
 * Stored records → the library.v1 messages. Lists and write echoes carry the summary of a
 * recording (preview, no transcript or artifacts); GetRecording adds both.
 */
import { library, timeline } from '@murmur/proto';
import { artifactFormatEnum, contextSourceKindEnum, threadItemKindEnum } from './kinds';
import { makePreview } from './preview';
import type {
  ArtifactRecord,
  ContextSourceRecord,
  FolderRecord,
  KnowledgeBaseRecord,
  RecordingDetail,
  RecordingRecord,
  ThreadDetail,
  ThreadItemRecord,
  ThreadRecord,
} from './store';
import type { CleanTranscript } from './validation';

/** An artifact with its format as the proto enum. */
export function artifactMessage(a: ArtifactRecord): library.Artifact {
  return {
    id: a.id,
    recordingId: a.recordingId,
    kind: a.kind,
    format: artifactFormatEnum(a.format),
    content: a.content,
    creditsCharged: a.creditsCharged,
    createdAt: a.createdAt,
    data: a.data ?? undefined,
  };
}

/** Stored segments use short keys ({start, end, text, speaker}); the contract spells them out. */
export function transcriptMessage(t: CleanTranscript): library.Transcript {
  return {
    text: t.text,
    language: t.language,
    segments: t.segments.map((s) => ({ startSeconds: s.start, endSeconds: s.end, text: s.text, ...(s.speaker ? { speaker: s.speaker } : {}) })),
    timeline:
      t.wordCount > 0 || t.speakers.length > 0
        ? { words: t.words ? timeline.Words.decode(t.words) : undefined, speakers: t.speakers, wordCount: t.wordCount }
        : undefined,
  };
}

/** A recording as lists show it: preview, no transcript, no artifacts. */
export function recordingSummaryMessage(r: RecordingRecord): library.Recording {
  return {
    id: r.id,
    ownerId: r.ownerId,
    title: r.title,
    folderId: r.folderId ?? '',
    durationSeconds: r.durationSeconds,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    transcript: undefined,
    artifacts: [],
    preview: makePreview(r.previewSource),
  };
}

/** A recording with its transcript (when transcribed) and artifacts, oldest first. */
export function recordingDetailMessage(d: RecordingDetail): library.Recording {
  return {
    ...recordingSummaryMessage(d.recording),
    transcript: d.transcript ? transcriptMessage(d.transcript) : undefined,
    artifacts: d.artifacts.map(artifactMessage),
  };
}

/** recording_id is "" (not absent) on items that are not RECORDING items, as proto3 strings are. */
export function threadItemMessage(i: ThreadItemRecord): library.ThreadItem {
  return { id: i.id, kind: threadItemKindEnum(i.kind), text: i.text, recordingId: i.recordingId ?? '', createdAt: i.createdAt };
}

/** A context source under the current title of what it points at. */
export function contextSourceMessage(s: ContextSourceRecord): library.ContextSource {
  return { id: s.id, kind: contextSourceKindEnum(s.kind), refId: s.refId, title: s.title, addedAt: s.addedAt };
}

/** A thread as lists show it: counts, no items or sources. */
export function threadSummaryMessage(t: ThreadRecord): library.ThoughtThread {
  return {
    id: t.id,
    ownerId: t.ownerId,
    title: t.title,
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
    itemCount: t.itemCount,
    items: [],
    contextSources: [],
  };
}

/** A thread with its items and context sources, both oldest first. */
export function threadDetailMessage(d: ThreadDetail): library.ThoughtThread {
  return { ...threadSummaryMessage(d.thread), items: d.items.map(threadItemMessage), contextSources: d.contextSources.map(contextSourceMessage) };
}

/** A folder with how many recordings it holds. */
export function folderMessage(f: FolderRecord): library.Folder {
  return { id: f.id, ownerId: f.ownerId, name: f.name, recordingCount: f.recordingCount, createdAt: f.createdAt, updatedAt: f.updatedAt };
}

/** A knowledge base with how many recordings it holds. */
export function knowledgeBaseMessage(k: KnowledgeBaseRecord): library.KnowledgeBase {
  return {
    id: k.id,
    ownerId: k.ownerId,
    name: k.name,
    description: k.description,
    recordingCount: k.recordingCount,
    createdAt: k.createdAt,
    updatedAt: k.updatedAt,
  };
}
