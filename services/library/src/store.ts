/**
 * What the library service needs from storage, as one interface; its Postgres implementation is
 * store-postgres.ts (SQL split by resource into store-*.ts). Every method takes the owner and
 * every query filters by it: a row of another owner is indistinguishable from a missing one.
 * Methods report a missing row as a value ({@link Missing}), never as an exception, so the
 * service alone decides which error the caller sees.
 */
import type { PagePosition } from '@murmur/kit';
import type { ArtifactFormatWord, ContextSourceKindWord, ThreadItemKindWord } from './kinds';
import type { PassageFilter, PassageHit, PassageSearch, RankPosition } from './store-passages';
import type { CleanTranscript } from './validation';

/** Which referenced row was not found (or belongs to someone else). */
export interface Missing<R extends string> {
  missing: R;
}

/** Tells a {@link Missing} result from a found row. */
export function isMissing<T extends object, R extends string>(value: T | Missing<R>): value is Missing<R> {
  return 'missing' in value;
}

/** A keyset page request: rows strictly after `after` in (created_at DESC, id DESC) order. */
export interface PageQuery {
  after?: PagePosition;
  /** Rows to fetch (the service asks one more than it serves to learn `has_more`). */
  limit: number;
}

export interface RecordingRecord {
  id: string;
  ownerId: string;
  title: string;
  folderId: string | null;
  durationSeconds: number;
  createdAt: Date;
  updatedAt: Date;
  hasTranscript: boolean;
  /** The opening of the transcript (PREVIEW_SOURCE_CHARS), raw; "" when there is none. */
  previewSource: string;
}

export interface ArtifactRecord {
  id: string;
  recordingId: string;
  kind: string;
  format: ArtifactFormatWord;
  content: string;
  creditsCharged: number;
  createdAt: Date;
  /** The artifact as data; null for artifacts stored before it was kept. */
  data: Record<string, unknown> | null;
}

export interface RecordingDetail {
  recording: RecordingRecord;
  transcript: CleanTranscript | null;
  /** Oldest first. */
  artifacts: ArtifactRecord[];
}

export interface RecordingFilter {
  /** websearch_to_tsquery('english', …) over title and transcript. */
  query?: string;
  folderId?: string;
  /** Strictly after. */
  createdAfter?: Date;
  /** Strictly before. */
  createdBefore?: Date;
}

export interface NewRecording {
  id: string;
  ownerId: string;
  title: string;
  folderId: string | null;
  durationSeconds: number;
  transcript: CleanTranscript | null;
  createdAt: Date;
}

export interface RecordingChanges {
  title?: string;
  /** null takes the recording out of its folder. */
  folderId?: string | null;
}

export interface NewArtifact {
  id: string;
  ownerId: string;
  recordingId: string;
  kind: string;
  format: ArtifactFormatWord;
  content: string;
  creditsCharged: number;
  createdAt: Date;
  data: Record<string, unknown> | null;
}

export interface RecordingStore {
  listRecordings(ownerId: string, filter: RecordingFilter, page: PageQuery): Promise<RecordingRecord[]>;
  /** `includeWords`: read the transcript's words too (else `words` is null, `wordCount` still set). */
  getRecording(ownerId: string, id: string, includeWords?: boolean): Promise<RecordingDetail | null>;
  /** Replaces the transcript's speakers (names); null when the recording is missing. */
  setSpeakers(ownerId: string, id: string, speakers: Array<{ id: string; name: string }>, now: Date): Promise<RecordingRecord | null>;
  /**
   * Stores a new recording; with an id that exists already for the same owner, returns that one
   * unchanged (a retried save). `taken`: the id belongs to another owner.
   */
  createRecording(input: NewRecording): Promise<RecordingRecord | Missing<'folder' | 'taken'>>;
  /** Deletes one of the owner's recordings with what refers to it (artifacts, thread and KB links); false when there was none. */
  deleteRecording(ownerId: string, id: string): Promise<boolean>;
  updateRecording(ownerId: string, id: string, changes: RecordingChanges, now: Date): Promise<RecordingRecord | Missing<'recording' | 'folder'>>;
  attachTranscript(ownerId: string, id: string, transcript: CleanTranscript, now: Date): Promise<RecordingRecord | null>;
  /** Stores the artifact and bumps the recording's updated_at; null when the recording is missing. */
  addArtifact(input: NewArtifact): Promise<ArtifactRecord | null>;
}

export interface ThreadRecord {
  id: string;
  ownerId: string;
  title: string;
  createdAt: Date;
  updatedAt: Date;
  itemCount: number;
}

export interface ThreadItemRecord {
  id: string;
  kind: ThreadItemKindWord;
  text: string;
  recordingId: string | null;
  createdAt: Date;
}

export interface ContextSourceRecord {
  id: string;
  kind: ContextSourceKindWord;
  refId: string;
  /** The current title (recording) or name (folder, knowledge base) of what it points at. */
  title: string;
  addedAt: Date;
}

export interface ThreadDetail {
  thread: ThreadRecord;
  /** Oldest first. */
  items: ThreadItemRecord[];
  /** Oldest first. */
  contextSources: ContextSourceRecord[];
}

export interface NewThreadItem {
  id: string;
  ownerId: string;
  threadId: string;
  kind: ThreadItemKindWord;
  text: string;
  recordingId: string | null;
  createdAt: Date;
}

export interface NewContextSource {
  id: string;
  ownerId: string;
  threadId: string;
  kind: ContextSourceKindWord;
  refId: string;
  addedAt: Date;
}

export interface ThreadStore {
  listThreads(ownerId: string, page: PageQuery): Promise<ThreadRecord[]>;
  getThread(ownerId: string, id: string): Promise<ThreadDetail | null>;
  createThread(input: { id: string; ownerId: string; title: string; createdAt: Date }): Promise<ThreadRecord>;
  addThreadItem(input: NewThreadItem): Promise<ThreadItemRecord | Missing<'thread' | 'recording'>>;
  /** Idempotent: the same source added twice returns the first one. */
  addContextSource(input: NewContextSource): Promise<ContextSourceRecord | Missing<'thread' | 'ref'>>;
}

export interface FolderRecord {
  id: string;
  ownerId: string;
  name: string;
  recordingCount: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface KnowledgeBaseRecord {
  id: string;
  ownerId: string;
  name: string;
  description: string;
  recordingCount: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface LibraryStats {
  recordings: number;
  thoughtThreads: number;
  folders: number;
  knowledgeBases: number;
  recordedSeconds: number;
}

export interface CollectionStore {
  listFolders(ownerId: string, page: PageQuery): Promise<FolderRecord[]>;
  getFolder(ownerId: string, id: string): Promise<FolderRecord | null>;
  createFolder(input: { id: string; ownerId: string; name: string; createdAt: Date }): Promise<FolderRecord>;
  listKnowledgeBases(ownerId: string, page: PageQuery): Promise<KnowledgeBaseRecord[]>;
  createKnowledgeBase(input: { id: string; ownerId: string; name: string; description: string; createdAt: Date }): Promise<KnowledgeBaseRecord>;
  /** Idempotent; bumps the knowledge base's updated_at only when the recording was new to it. */
  addKnowledgeBaseRecording(ownerId: string, knowledgeBaseId: string, recordingId: string, now: Date): Promise<KnowledgeBaseRecord | Missing<'knowledge_base' | 'recording'>>;
  stats(ownerId: string): Promise<LibraryStats>;
}

export interface PassageSearchStore {
  /** Ranked passages of one owner (store-passages.ts), or why the query can never match. */
  searchPassages(ownerId: string, filter: PassageFilter, page: { after?: RankPosition; limit: number }): Promise<PassageSearch>;
  /** The ids and text ranks of the best `limit` passages (hybrid ranking's text list). */
  textCandidates(ownerId: string, filter: PassageFilter, limit: number): Promise<{ ranked: Array<{ id: string; score: number }> } | { refused: 'no_terms' | 'only_excluded' }>;
  /** The owner's passages of `ids` as hits, in that order, with the scores given and highlights for `query`. */
  hitsByIds(ownerId: string, ids: Array<{ id: string; score: number }>, query: string): Promise<PassageHit[]>;
  /**
   * Writes the passages of up to `limit` rows stored before passages existed (oldest first), each
   * in its own transaction; answers how many it indexed (0: none are left).
   */
  indexBacklog(limit: number): Promise<number>;
}

/** Everything the library service stores. */
export type LibraryStore = RecordingStore & ThreadStore & CollectionStore & PassageSearchStore;
