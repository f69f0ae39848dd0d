/**
 * The Postgres implementation of {@link LibraryStore}: one object over the per-resource stores
 * (store-recordings.ts, store-threads.ts, store-collections.ts). It lives apart from store.ts so
 * the imports run one way — store-postgres.ts → store-*.ts → store.ts — and never in a circle.
 */
import type { Database } from '@murmur/kit';
import type { LibraryStore } from './store';
import { indexBacklog } from './store-backfill';
import { postgresCollectionStore } from './store-collections';
import { hitsByIds, searchPassages, textCandidates } from './store-passages';
import { postgresRecordingStore } from './store-recordings';
import { postgresThreadStore } from './store-threads';

/** The Postgres implementation over a database opened with the library migrations. */
export function createPostgresLibraryStore(db: Database): LibraryStore {
  return {
    ...postgresRecordingStore(db),
    ...postgresThreadStore(db),
    ...postgresCollectionStore(db),
    searchPassages: (ownerId, filter, page) => searchPassages(db, ownerId, filter, page),
    textCandidates: (ownerId, filter, limit) => textCandidates(db, ownerId, filter, limit),
    hitsByIds: (ownerId, ids, query) => hitsByIds(db, ownerId, ids, query),
    indexBacklog: (limit) => indexBacklog(db, limit),
  };
}
