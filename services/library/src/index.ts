/**
 * @murmur/library — recordings, Thought Threads, folders and knowledge bases. main.ts runs it
 * as a process; tests and the gateway's integration tests start it in-process with
 * {@link startLibraryService} on a database opened with {@link LIBRARY_MIGRATIONS_DIR}.
 */
import * as path from 'node:path';
import { commonSchema, startGrpcServer, untracedUnlessInCall, type Clock, type Database, type Logger, type AccessControl } from '@murmur/kit';
import { startEmbedder, type Embedder } from './embeddings/embedder';
import type { EmbeddingsEngine } from './embeddings/engine';
import { pgvectorAvailable, pgvectorIndex } from './embeddings/pgvector-index';
import { arrayVectorIndex, type VectorIndex } from './embeddings/vector-index';
import { libraryHandlers } from './server';
import { LibraryService } from './service';
import { createPostgresLibraryStore } from './store-postgres';

/** The library's SQL migrations, for openDatabase / openTestDatabase('library', …). */
export const LIBRARY_MIGRATIONS_DIR = path.resolve(__dirname, '../migrations');

/** Largest request the library accepts: a 5,000,000-character transcript plus its segments. */
export const LIBRARY_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** What the library needs from its host process (main.ts or a test). */
export interface LibraryServiceDeps {
  /** Who may call this service: its workload's access control (kit access/), checked on every RPC. */
  access: AccessControl;
  /** Opened with schema "library" (or a test schema) and {@link LIBRARY_MIGRATIONS_DIR}. */
  db: Database;
  log: Logger;
  /** "host:port"; port 0 picks a free one. */
  address: string;
  clock?: Clock;
  /** MURMUR_CURSOR_SECRET; defaults to the development secret of the shared config. */
  cursorSecret?: string;
  /** An embeddings engine (MURMUR_EMBEDDINGS_URL): passages get vectors and search ranks hybrid. */
  embeddings?: EmbeddingsEngine;
  /** Where vectors live (MURMUR_VECTOR_INDEX): `auto` takes pgvector where the server has it, else arrays. */
  vectorIndex?: 'auto' | 'array' | 'pgvector';
}

/** A started library server: its port (useful with port 0) and how to stop it. */
export interface RunningLibraryService {
  port: number;
  /** The embedder, when an embeddings engine is configured (tests wait for `idle()`). */
  embedder?: Embedder;
  /** Which vector index this process uses, when an embeddings engine is configured. */
  vectorIndex?: 'array' | 'pgvector';
  stop(): Promise<void>;
}

/** The vector index a deployment gets: pgvector where the server has it (or where asked), else arrays. */
async function chooseVectorIndex(db: Database, wanted: 'auto' | 'array' | 'pgvector'): Promise<VectorIndex> {
  if (wanted === 'array') return arrayVectorIndex(db);
  if (wanted === 'pgvector' || (await pgvectorAvailable(db))) return pgvectorIndex(db);
  return arrayVectorIndex(db);
}

/** Starts the LibraryService gRPC server (with health and reflection). Does not close `db`. */
export async function startLibraryService(deps: LibraryServiceDeps): Promise<RunningLibraryService> {
  let embedder: Embedder | undefined;
  let index: VectorIndex | undefined;
  if (deps.embeddings) {
    index = await chooseVectorIndex(deps.db, deps.vectorIndex ?? 'auto');
    embedder = startEmbedder(deps.embeddings, index, deps.log);
    deps.log.info({ model: deps.embeddings.model, index: index.kind }, 'embeddings on: search ranks passages by text and vectors');
  }
  const service = new LibraryService({
    store: createPostgresLibraryStore(deps.db),
    cursorSecret: deps.cursorSecret ?? commonSchema.MURMUR_CURSOR_SECRET.parse(undefined),
    ...(deps.clock ? { clock: deps.clock } : {}),
    ...(deps.embeddings && index ? { semantic: { engine: deps.embeddings, index, log: deps.log } } : {}),
    ...(embedder ? { onPassagesWritten: () => embedder!.wake() } : {}),
  });
  const server = await startGrpcServer(
    {
      name: 'library',
      access: deps.access,
      log: deps.log,
      services: [libraryHandlers(service)],
      protoFiles: ['murmur/library/v1/library.proto'],
      maxReceiveMessageBytes: LIBRARY_MAX_MESSAGE_BYTES,
    },
    deps.address,
  );
  const backfill = workOffBacklog(service, deps.log, () => embedder?.wake());
  return {
    port: server.port,
    ...(embedder ? { embedder } : {}),
    ...(index ? { vectorIndex: index.kind } : {}),
    async stop() {
      await embedder?.stop();
      await backfill.stop();
      await server.shutdown();
    },
  };
}

/**
 * Indexes the passages of rows stored before passages existed, in batches, until none are left
 * (search finds a row as soon as its batch commits). A failure is logged and retried after a
 * pause: it never stops the service, which serves everything else meanwhile.
 */
function workOffBacklog(service: LibraryService, log: Logger, onIndexed: () => void): { stop(): Promise<void> } {
  let stopped = false;
  let wake: (() => void) | undefined;
  const pause = (ms: number) => new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    wake = () => {
      clearTimeout(timer);
      resolve();
    };
  });
  const done = (async () => {
    let total = 0;
    while (!stopped) {
      try {
        // Background work: untraced (kit background-work.ts).
        const indexed = await untracedUnlessInCall(() => service.indexBacklog(100));
        total += indexed;
        if (indexed === 0) break;
        onIndexed();
      } catch (err) {
        log.warn({ err }, 'indexing the passages of older rows failed; retrying in 30 s');
        await pause(30_000);
      }
    }
    if (total > 0) log.info({ rows: total }, 'indexed the passages of older rows');
  })();
  return {
    async stop() {
      stopped = true;
      wake?.();
      await done;
    },
  };
}

export { LibraryService, type LibraryServiceOptions, type ListPage } from './service';
export { createPostgresLibraryStore } from './store-postgres';
export { EmbeddingsError, normalise, OpenAiEmbeddings, type EmbeddingsEngine, type OpenAiEmbeddingsOptions } from './embeddings/engine';
export { arrayVectorIndex, type VectorIndex } from './embeddings/vector-index';
export { reciprocalRankFusion, HYBRID_CANDIDATES, RRF_K } from './search';
export { loadLibraryConfig, libraryConfigSchema, embeddingsFromConfig, type LibraryConfig } from './config';
export type { LibraryStore } from './store';
