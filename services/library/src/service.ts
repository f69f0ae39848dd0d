/**
 * The library's domain rules: who may see and change what, input limits, paging, and which
 * error a caller gets. Knows nothing of gRPC or Postgres: it takes the v1 request messages
 * (plain data), talks to a {@link LibraryStore}, and throws only MurmurError.
 *
 * Ownership: every call names its owner (a verified `usr_…` id from auth). An id that is
 * malformed, missing, or another owner's gets the same not_found with the same message, so
 * responses never reveal whether someone else's id exists.
 */
import { isId, MurmurError, pageSizeOf, speakerNameOf } from '@murmur/contract';
import { newId, systemClock, type Clock } from '@murmur/kit';
import type { library } from '@murmur/proto';
import { artifactFormatWord, contextSourceKindWord, threadItemKindWord, type ContextSourceKindWord } from './kinds';
import {
  artifactMessage,
  contextSourceMessage,
  folderMessage,
  knowledgeBaseMessage,
  recordingDetailMessage,
  recordingSummaryMessage,
  threadDetailMessage,
  threadItemMessage,
  threadSummaryMessage,
} from './messages';
import { filterDigest, PageCursors, type ListName, type PagePosition } from '@murmur/kit';
import { isMissing, type LibraryStore, type PageQuery } from './store';
import { SearchPages, searchFilters, searchQueryOf, sourcesOf, type SemanticSearch } from './search';
import {
  artifactContentOf,
  artifactDataOf,
  artifactKindOf,
  createdAtOf,
  creditsOf,
  dateRangeOf,
  descriptionOf,
  durationOf,
  itemTextOf,
  LIMITS,
  nameOf,
  ownerIdOf,
  queryOf,
  titleOf,
  transcriptOf,
} from './validation';

/** The kinds of row an id can name, with their prefix and the words of their not_found. */
const RESOURCES = {
  recording: { prefix: 'rec', message: 'No recording with this id. Check the id.' },
  folder: { prefix: 'fld', message: 'No folder with this id. Check the id.' },
  thread: { prefix: 'thr', message: 'No Thought Thread with this id. Check the id.' },
  knowledge_base: { prefix: 'kb', message: 'No knowledge base with this id. Check the id.' },
} as const;

type Resource = keyof typeof RESOURCES;

const SOURCE_RESOURCE: Record<ContextSourceKindWord, Resource> = {
  recording: 'recording',
  folder: 'folder',
  knowledge_base: 'knowledge_base',
};

/** The one not_found of each resource: identical for malformed, missing and foreign ids. */
function notFound(resource: Resource, param: string): MurmurError {
  return new MurmurError('not_found', RESOURCES[resource].message, { param });
}

/** Returns `id` when it has the resource's shape; a malformed id is simply not found. */
function idOf(resource: Resource, id: string, param: string): string {
  if (!isId(RESOURCES[resource].prefix, id)) throw notFound(resource, param);
  return id;
}

/** A page of a list, ready for the response. */
export interface ListPage<T> {
  items: T[];
  page: library.PageInfo;
}

export interface LibraryServiceOptions {
  store: LibraryStore;
  /** HMAC key of page cursors (MURMUR_CURSOR_SECRET); the same on every replica. */
  cursorSecret: string;
  clock?: Clock;
  /** Embeddings engine and vector index: search ranks hybrid when given. */
  semantic?: SemanticSearch;
  /** Told after every write that made passages (the embedder wakes). */
  onPassagesWritten?: () => void;
}

/** One instance per process; stateless apart from its store, clock and cursor key. */
export class LibraryService {
  private readonly store: LibraryStore;
  private readonly cursors: PageCursors;
  private readonly searches: SearchPages;
  private readonly onPassagesWritten: () => void;
  private readonly clock: Clock;

  constructor(opts: LibraryServiceOptions) {
    this.store = opts.store;
    this.cursors = new PageCursors(opts.cursorSecret);
    this.searches = new SearchPages(opts.cursorSecret, opts.semantic);
    this.onPassagesWritten = opts.onPassagesWritten ?? (() => undefined);
    this.clock = opts.clock ?? systemClock;
  }

  // ---- reads ----------------------------------------------------------------------------

  async listRecordings(req: library.ListRecordingsRequest): Promise<ListPage<library.Recording>> {
    const ownerId = ownerIdOf(req.ownerId);
    const limit = pageSizeOf(req.page?.limit, 'limit', { zeroMeansDefault: true });
    const query = queryOf(req.query);
    // A folder filter names a folder like any other id: malformed, missing and another user's
    // all answer not_found (as transcribe's folder_id does), never a quietly empty list.
    const folderId = req.folderId === '' ? undefined : idOf('folder', req.folderId, 'folder_id');
    const range = dateRangeOf(req.createdAfter, req.createdBefore);
    const filters = filterDigest([query, folderId, range.after?.getTime(), range.before?.getTime()]);
    const list = await this.paged(ownerId, 'recordings', req.page?.cursor, filters, limit, recordingSummaryMessage, (page) =>
      this.store.listRecordings(ownerId, { query, folderId, createdAfter: range.after, createdBefore: range.before }, page),
    );
    // Rows prove the folder is the owner's; only an empty page needs the folder looked up.
    if (folderId !== undefined && list.items.length === 0 && !(await this.store.getFolder(ownerId, folderId))) throw notFound('folder', 'folder_id');
    return list;
  }

  async getRecording(req: library.GetRecordingRequest): Promise<library.Recording> {
    const ownerId = ownerIdOf(req.ownerId);
    const id = idOf('recording', req.recordingId, 'recording_id');
    const detail = await this.store.getRecording(ownerId, id, req.includeWords);
    if (!detail) throw notFound('recording', 'recording_id');
    return recordingDetailMessage(detail);
  }

  /** Names speakers of a recording's transcript: each id must be one of its speakers; "" clears a name. */
  async setSpeakerNames(req: library.SetSpeakerNamesRequest): Promise<library.Recording> {
    const ownerId = ownerIdOf(req.ownerId);
    const id = idOf('recording', req.recordingId, 'recording_id');
    const entries = Object.entries(req.names);
    if (entries.length === 0) throw new MurmurError('invalid_request', 'names must name at least one speaker.', { param: 'names' });
    const detail = await this.store.getRecording(ownerId, id);
    if (!detail) throw notFound('recording', 'recording_id');
    const speakers = detail.transcript?.speakers ?? [];
    if (speakers.length === 0) {
      throw new MurmurError('invalid_request', 'This recording has no speakers to name: transcribe it with `diarize: true` to find them.', { param: 'names' });
    }
    const names = new Map<string, string>();
    for (const [speaker, name] of entries) {
      if (!speakers.some((s) => s.id === speaker)) {
        throw new MurmurError('invalid_request', `The recording has no speaker "${speaker.slice(0, 10)}"; its speakers are ${speakers.map((s) => s.id).join(', ')}.`, { param: `names.${speaker.slice(0, 10)}` });
      }
      names.set(speaker, speakerNameOf(name, `names.${speaker}`));
    }
    const renamed = speakers.map((s) => ({ id: s.id, name: names.has(s.id) ? names.get(s.id)! : s.name }));
    const updated = await this.store.setSpeakers(ownerId, id, renamed, this.clock.now());
    if (!updated) throw notFound('recording', 'recording_id');
    return recordingDetailMessage({ ...detail, recording: updated, transcript: detail.transcript ? { ...detail.transcript, speakers: renamed } : null });
  }

  async listThoughtThreads(req: library.ListThoughtThreadsRequest): Promise<ListPage<library.ThoughtThread>> {
    const ownerId = ownerIdOf(req.ownerId);
    const limit = pageSizeOf(req.page?.limit, 'limit', { zeroMeansDefault: true });
    return this.paged(ownerId, 'thought_threads', req.page?.cursor, filterDigest([]), limit, threadSummaryMessage, (page) => this.store.listThreads(ownerId, page));
  }

  async getThoughtThread(req: library.GetThoughtThreadRequest): Promise<library.ThoughtThread> {
    const ownerId = ownerIdOf(req.ownerId);
    const id = idOf('thread', req.threadId, 'thread_id');
    const detail = await this.store.getThread(ownerId, id);
    if (!detail) throw notFound('thread', 'thread_id');
    return threadDetailMessage(detail);
  }

  async listFolders(req: library.ListFoldersRequest): Promise<ListPage<library.Folder>> {
    const ownerId = ownerIdOf(req.ownerId);
    const limit = pageSizeOf(req.page?.limit, 'limit', { zeroMeansDefault: true });
    return this.paged(ownerId, 'folders', req.page?.cursor, filterDigest([]), limit, folderMessage, (page) => this.store.listFolders(ownerId, page));
  }

  async getFolder(req: library.GetFolderRequest): Promise<library.Folder> {
    const ownerId = ownerIdOf(req.ownerId);
    const folder = await this.store.getFolder(ownerId, idOf('folder', req.folderId, 'folder_id'));
    if (!folder) throw notFound('folder', 'folder_id');
    return folderMessage(folder);
  }

  async listKnowledgeBases(req: library.ListKnowledgeBasesRequest): Promise<ListPage<library.KnowledgeBase>> {
    const ownerId = ownerIdOf(req.ownerId);
    const limit = pageSizeOf(req.page?.limit, 'limit', { zeroMeansDefault: true });
    return this.paged(ownerId, 'knowledge_bases', req.page?.cursor, filterDigest([]), limit, knowledgeBaseMessage, (page) =>
      this.store.listKnowledgeBases(ownerId, page),
    );
  }

  /**
   * The owner's passages ranked for a query. Filters name their rows like any other id: a
   * folder or recording that is malformed, missing or another owner's is not_found (checked only
   * when the page is empty: a row proves its source is the owner's).
   */
  async searchPassages(req: library.SearchPassagesRequest): Promise<library.SearchPassagesResponse> {
    const ownerId = ownerIdOf(req.ownerId);
    const limit = pageSizeOf(req.page?.limit, 'limit', { zeroMeansDefault: true });
    const query = searchQueryOf(req.query, 'q');
    const sources = sourcesOf(req.sources);
    const folderId = req.folderId === '' ? undefined : idOf('folder', req.folderId, 'folder_id');
    const recordingId = req.recordingId === '' ? undefined : idOf('recording', req.recordingId, 'recording_id');
    const range = dateRangeOf(req.createdAfter, req.createdBefore);
    const filters = searchFilters({ query, sources, folderId, recordingId, after: range.after, before: range.before });
    const position = this.searches.positionOf(ownerId, req.page?.cursor ?? '', filters);
    const page = await this.searches.page(this.store, {
      ownerId, query, sources, limit, filters,
      ...(position ? { after: position.after, mode: position.mode } : {}),
      ...(folderId !== undefined ? { folderId } : {}),
      ...(recordingId !== undefined ? { recordingId } : {}),
      ...(range.after ? { createdAfter: range.after } : {}),
      ...(range.before ? { createdBefore: range.before } : {}),
    });
    if (page.passages.length === 0) {
      if (folderId !== undefined && !(await this.store.getFolder(ownerId, folderId))) throw notFound('folder', 'folder_id');
      if (recordingId !== undefined && !(await this.store.getRecording(ownerId, recordingId))) throw notFound('recording', 'recording_id');
    }
    return page;
  }

  /** Indexes rows stored before passages existed, a batch at a time; answers how many (0: done). */
  async indexBacklog(batch = 100): Promise<number> {
    return this.store.indexBacklog(batch);
  }

  async getLibraryStats(req: library.GetLibraryStatsRequest): Promise<library.GetLibraryStatsResponse> {
    return this.store.stats(ownerIdOf(req.ownerId));
  }

  // ---- writes (internal) ----------------------------------------------------------------

  async createRecording(req: library.CreateRecordingRequest): Promise<library.Recording> {
    const ownerId = ownerIdOf(req.ownerId);
    const title = titleOf(req.title, LIMITS.recordingTitle);
    const durationSeconds = durationOf(req.durationSeconds);
    const transcript = req.transcript ? transcriptOf(req.transcript) : null;
    const createdAt = createdAtOf(req.createdAt, this.clock.now());
    const folderId = req.folderId === '' ? null : idOf('folder', req.folderId, 'folder_id');
    if (req.recordingId !== '' && !isId('rec', req.recordingId)) {
      throw new MurmurError('invalid_request', 'recording_id must be a recording id of the form rec_…, or empty for a new one.', { param: 'recording_id' });
    }
    const id = req.recordingId || newId('rec');
    const created = await this.store.createRecording({ id, ownerId, title, folderId, durationSeconds, transcript, createdAt });
    if (transcript) this.onPassagesWritten();
    if (isMissing(created)) {
      if (created.missing === 'taken') throw new MurmurError('invalid_request', 'recording_id is taken; choose another id or leave it empty.', { param: 'recording_id' });
      throw notFound('folder', 'folder_id');
    }
    return recordingSummaryMessage(created);
  }

  /** Deletes one of the owner's recordings and what refers to it; false when there was none (or the id is malformed). */
  async deleteRecording(req: library.DeleteRecordingRequest): Promise<boolean> {
    const ownerId = ownerIdOf(req.ownerId);
    if (!isId('rec', req.recordingId)) return false;
    return this.store.deleteRecording(ownerId, req.recordingId);
  }

  async updateRecording(req: library.UpdateRecordingRequest): Promise<library.Recording> {
    const ownerId = ownerIdOf(req.ownerId);
    const title = req.title === undefined ? undefined : titleOf(req.title, LIMITS.recordingTitle);
    const id = idOf('recording', req.recordingId, 'recording_id');
    let folderId: string | null | undefined;
    if (req.folderId !== undefined) folderId = req.folderId === '' ? null : idOf('folder', req.folderId, 'folder_id');
    const changes = { ...(title !== undefined ? { title } : {}), ...(folderId !== undefined ? { folderId } : {}) };
    if (Object.keys(changes).length === 0) {
      // Nothing to change: answer like GetRecording's summary without touching updated_at.
      const current = await this.store.getRecording(ownerId, id);
      if (!current) throw notFound('recording', 'recording_id');
      return recordingSummaryMessage(current.recording);
    }
    const updated = await this.store.updateRecording(ownerId, id, changes, this.clock.now());
    if (isMissing(updated)) throw updated.missing === 'folder' ? notFound('folder', 'folder_id') : notFound('recording', 'recording_id');
    return recordingSummaryMessage(updated);
  }

  async attachTranscript(req: library.AttachTranscriptRequest): Promise<library.Recording> {
    const ownerId = ownerIdOf(req.ownerId);
    if (!req.transcript) throw new MurmurError('invalid_request', 'transcript is required.', { param: 'transcript' });
    const transcript = transcriptOf(req.transcript);
    const id = idOf('recording', req.recordingId, 'recording_id');
    const updated = await this.store.attachTranscript(ownerId, id, transcript, this.clock.now());
    this.onPassagesWritten();
    if (!updated) throw notFound('recording', 'recording_id');
    return recordingSummaryMessage(updated);
  }

  async addArtifact(req: library.AddArtifactRequest): Promise<library.Artifact> {
    const ownerId = ownerIdOf(req.ownerId);
    const kind = artifactKindOf(req.kind);
    const format = req.format === 0 ? 'markdown' : artifactFormatWord(req.format);
    if (!format) throw new MurmurError('invalid_request', 'format must be MARKDOWN or PLAIN (unspecified means MARKDOWN).', { param: 'format' });
    const content = artifactContentOf(req.content);
    const data = artifactDataOf(req.data);
    const creditsCharged = creditsOf(req.creditsCharged);
    const recordingId = idOf('recording', req.recordingId, 'recording_id');
    const artifact = await this.store.addArtifact({
      id: newId('art'),
      ownerId,
      recordingId,
      kind,
      format,
      content,
      creditsCharged,
      createdAt: this.clock.now(),
      data,
    });
    if (!artifact) throw notFound('recording', 'recording_id');
    return artifactMessage(artifact);
  }

  async createFolder(req: library.CreateFolderRequest): Promise<library.Folder> {
    const ownerId = ownerIdOf(req.ownerId);
    const name = nameOf(req.name);
    const createdAt = createdAtOf(req.createdAt, this.clock.now());
    return folderMessage(await this.store.createFolder({ id: newId('fld'), ownerId, name, createdAt }));
  }

  async createThoughtThread(req: library.CreateThoughtThreadRequest): Promise<library.ThoughtThread> {
    const ownerId = ownerIdOf(req.ownerId);
    const title = titleOf(req.title, LIMITS.threadTitle);
    const createdAt = createdAtOf(req.createdAt, this.clock.now());
    return threadSummaryMessage(await this.store.createThread({ id: newId('thr'), ownerId, title, createdAt }));
  }

  async addThreadItem(req: library.AddThreadItemRequest): Promise<library.ThreadItem> {
    const ownerId = ownerIdOf(req.ownerId);
    const kind = threadItemKindWord(req.kind);
    if (!kind) throw new MurmurError('invalid_request', 'kind must be NOTE, RECORDING, QUESTION or ANSWER.', { param: 'kind' });
    const text = itemTextOf(req.text, kind !== 'recording');
    let recordingId: string | null = null;
    if (kind === 'recording') {
      if (req.recordingId === '') throw new MurmurError('invalid_request', 'A RECORDING item needs a recording_id.', { param: 'recording_id' });
      recordingId = req.recordingId;
    } else if (req.recordingId !== '') {
      throw new MurmurError('invalid_request', 'Only RECORDING items carry a recording_id.', { param: 'recording_id' });
    }
    const threadId = idOf('thread', req.threadId, 'thread_id');
    if (recordingId !== null) idOf('recording', recordingId, 'recording_id');
    const item = await this.store.addThreadItem({ id: newId('thi'), ownerId, threadId, kind, text, recordingId, createdAt: this.clock.now() });
    this.onPassagesWritten();
    if (isMissing(item)) throw item.missing === 'thread' ? notFound('thread', 'thread_id') : notFound('recording', 'recording_id');
    return threadItemMessage(item);
  }

  async addThreadContextSource(req: library.AddThreadContextSourceRequest): Promise<library.ContextSource> {
    const ownerId = ownerIdOf(req.ownerId);
    const kind = contextSourceKindWord(req.kind);
    if (!kind) throw new MurmurError('invalid_request', 'kind must be RECORDING, FOLDER or KNOWLEDGE_BASE.', { param: 'kind' });
    const threadId = idOf('thread', req.threadId, 'thread_id');
    const refId = idOf(SOURCE_RESOURCE[kind], req.refId, 'ref_id');
    const source = await this.store.addContextSource({ id: newId('ctx'), ownerId, threadId, kind, refId, addedAt: this.clock.now() });
    if (isMissing(source)) throw source.missing === 'thread' ? notFound('thread', 'thread_id') : notFound(SOURCE_RESOURCE[kind], 'ref_id');
    return contextSourceMessage(source);
  }

  async createKnowledgeBase(req: library.CreateKnowledgeBaseRequest): Promise<library.KnowledgeBase> {
    const ownerId = ownerIdOf(req.ownerId);
    const name = nameOf(req.name);
    const description = descriptionOf(req.description);
    const createdAt = createdAtOf(req.createdAt, this.clock.now());
    const kb = await this.store.createKnowledgeBase({ id: newId('kb'), ownerId, name, description, createdAt });
    this.onPassagesWritten();
    return knowledgeBaseMessage(kb);
  }

  async addKnowledgeBaseRecording(req: library.AddKnowledgeBaseRecordingRequest): Promise<library.KnowledgeBase> {
    const ownerId = ownerIdOf(req.ownerId);
    const kbId = idOf('knowledge_base', req.knowledgeBaseId, 'knowledge_base_id');
    const recordingId = idOf('recording', req.recordingId, 'recording_id');
    const kb = await this.store.addKnowledgeBaseRecording(ownerId, kbId, recordingId, this.clock.now());
    if (isMissing(kb)) throw kb.missing === 'knowledge_base' ? notFound('knowledge_base', 'knowledge_base_id') : notFound('recording', 'recording_id');
    return knowledgeBaseMessage(kb);
  }

  // ---- paging ---------------------------------------------------------------------------

  /** Fetches one more row than the page holds, so `has_more` needs no count query. */
  private async paged<R extends PagePosition, M>(
    ownerId: string,
    list: ListName,
    cursor: string | undefined,
    filters: string,
    limit: number,
    toMessage: (row: R) => M,
    fetch: (page: PageQuery) => Promise<R[]>,
  ): Promise<ListPage<M>> {
    const after = this.cursors.positionOf(ownerId, list, cursor, filters);
    const rows = await fetch({ ...(after ? { after } : {}), limit: limit + 1 });
    const page = this.cursors.page(ownerId, list, rows, limit, filters);
    return { items: page.rows.map(toMessage), page: { hasMore: page.hasMore, nextCursor: page.nextCursor } };
  }
}
