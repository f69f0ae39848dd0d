/**
 * The proto enums ↔ the words stored in Postgres. The database keeps readable words (not enum
 * numbers) so SQL, CHECK constraints and ad-hoc queries stay meaningful if numbering changes.
 * UNSPECIFIED and numbers this release does not know map to undefined: the caller decides
 * whether that means a default or invalid_request.
 */
import { library } from '@murmur/proto';

export type ArtifactFormatWord = 'markdown' | 'plain';
export type ThreadItemKindWord = 'note' | 'recording' | 'question' | 'answer';
export type ContextSourceKindWord = 'recording' | 'folder' | 'knowledge_base';

const ARTIFACT_FORMATS: ReadonlyArray<[library.ArtifactFormat, ArtifactFormatWord]> = [
  [library.ArtifactFormat.ARTIFACT_FORMAT_MARKDOWN, 'markdown'],
  [library.ArtifactFormat.ARTIFACT_FORMAT_PLAIN, 'plain'],
];

const THREAD_ITEM_KINDS: ReadonlyArray<[library.ThreadItemKind, ThreadItemKindWord]> = [
  [library.ThreadItemKind.THREAD_ITEM_KIND_NOTE, 'note'],
  [library.ThreadItemKind.THREAD_ITEM_KIND_RECORDING, 'recording'],
  [library.ThreadItemKind.THREAD_ITEM_KIND_QUESTION, 'question'],
  [library.ThreadItemKind.THREAD_ITEM_KIND_ANSWER, 'answer'],
];

const CONTEXT_SOURCE_KINDS: ReadonlyArray<[library.ContextSourceKind, ContextSourceKindWord]> = [
  [library.ContextSourceKind.CONTEXT_SOURCE_KIND_RECORDING, 'recording'],
  [library.ContextSourceKind.CONTEXT_SOURCE_KIND_FOLDER, 'folder'],
  [library.ContextSourceKind.CONTEXT_SOURCE_KIND_KNOWLEDGE_BASE, 'knowledge_base'],
];

function wordOf<E, W>(table: ReadonlyArray<[E, W]>, value: E): W | undefined {
  return table.find(([e]) => e === value)?.[1];
}

function enumOf<E, W>(table: ReadonlyArray<[E, W]>, word: W, fallback: E): E {
  return table.find(([, w]) => w === word)?.[0] ?? fallback;
}

export const artifactFormatWord = (v: library.ArtifactFormat): ArtifactFormatWord | undefined => wordOf(ARTIFACT_FORMATS, v);
export const artifactFormatEnum = (w: ArtifactFormatWord): library.ArtifactFormat =>
  enumOf(ARTIFACT_FORMATS, w, library.ArtifactFormat.ARTIFACT_FORMAT_UNSPECIFIED);

export const threadItemKindWord = (v: library.ThreadItemKind): ThreadItemKindWord | undefined => wordOf(THREAD_ITEM_KINDS, v);
export const threadItemKindEnum = (w: ThreadItemKindWord): library.ThreadItemKind =>
  enumOf(THREAD_ITEM_KINDS, w, library.ThreadItemKind.THREAD_ITEM_KIND_UNSPECIFIED);

export const contextSourceKindWord = (v: library.ContextSourceKind): ContextSourceKindWord | undefined => wordOf(CONTEXT_SOURCE_KINDS, v);
export const contextSourceKindEnum = (w: ContextSourceKindWord): library.ContextSourceKind =>
  enumOf(CONTEXT_SOURCE_KINDS, w, library.ContextSourceKind.CONTEXT_SOURCE_KIND_UNSPECIFIED);
