/**
 * @murmur/library — recordings, Thought Threads, folders and knowledge bases. main.ts runs it
 * as a process; tests and the gateway's integration tests start it in-process with
 * {@link startLibraryService} on a database opened with {@link LIBRARY_MIGRATIONS_DIR}.
 */
import * as path from 'node:path';
import { commonSchema, startGrpcServer, type Clock, type Database, type Logger, type AccessControl } from '@murmur/kit';
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
}

/** A started library server: its port (useful with port 0) and how to stop it. */
export interface RunningLibraryService {
  port: number;
  stop(): Promise<void>;
}

/** Starts the LibraryService gRPC server (with health and reflection). Does not close `db`. */
export async function startLibraryService(deps: LibraryServiceDeps): Promise<RunningLibraryService> {
  const service = new LibraryService({
    store: createPostgresLibraryStore(deps.db),
    cursorSecret: deps.cursorSecret ?? commonSchema.MURMUR_CURSOR_SECRET.parse(undefined),
    ...(deps.clock ? { clock: deps.clock } : {}),
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
  const backfill = workOffBacklog(service, deps.log);
  return {
    port: server.port,
    async stop() {
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
function workOffBacklog(service: LibraryService, log: Logger): { stop(): Promise<void> } {
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
        const indexed = await service.indexBacklog(100);
        total += indexed;
        if (indexed === 0) break;
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
export type { LibraryStore } from './store';
