/** Starts a real library gRPC server on 127.0.0.1:0 over a test database, with a client. */
import { createClient, createLogger, newId, type Database, type PromiseClient } from '@murmur/kit';
import { createPolicyClient, ManualClock, openTestDatabase, testAccess } from '@murmur/kit/testing';
import { LIBRARY_MAX_MESSAGE_BYTES, LIBRARY_MIGRATIONS_DIR, startLibraryService } from '@murmur/library';
import { library } from '@murmur/proto';

export const CURSOR_SECRET = 'library-test-cursor-secret';

export interface Harness {
  db: Database;
  clock: ManualClock;
  client: PromiseClient<library.LibraryServiceClient>;
  stop(): Promise<void>;
}

/** `url`: the database (default DATABASE_URL, else embedded); "" forces the embedded PGlite. */
export async function startHarness(url: string | undefined = process.env.DATABASE_URL || undefined): Promise<Harness> {
  const db = await openTestDatabase('library', LIBRARY_MIGRATIONS_DIR, url);
  const clock = new ManualClock('2026-01-15T12:00:00Z');
  const running = await startLibraryService({ access: testAccess('library'), db, log: createLogger('library-test', 'silent'), address: '127.0.0.1:0', clock, cursorSecret: CURSOR_SECRET });
  const client = createPolicyClient(library.LibraryServiceClient, `127.0.0.1:${running.port}`, { deadlineMs: 30_000, maxReceiveMessageBytes: LIBRARY_MAX_MESSAGE_BYTES });
  return {
    db,
    clock,
    client,
    async stop() {
      client.close();
      await running.stop();
      await db.close();
    },
  };
}

/** A fresh owner, so tests sharing one database never see each other's rows. */
export const newOwner = (): string => newId('usr');

/** The MurmurError a call failed with: kit's, re-exported for the tests here. */
export { failure } from '@murmur/kit/testing';

export const page = (limit = 0, cursor = '') => ({ limit, cursor });
