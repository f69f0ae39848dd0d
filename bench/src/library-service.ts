/**
 * The library service in the bench process, as its tests start it (startLibraryService over
 * gRPC on 127.0.0.1:0), on a schema of its own that is dropped when it stops: the search
 * benchmarks load and query the real service without the rest of the topology. Postgres is
 * BENCH_DATABASE_URL, else DATABASE_URL, else the local server (the embedded PGlite when `url`
 * is "", for tests).
 */
import { randomBytes } from 'node:crypto';
import { createLogger, openDatabase, type Database, type PromiseClient } from '@murmur/kit';
import { createPolicyClient, testAccess } from '@murmur/kit/testing';
import { LIBRARY_MAX_MESSAGE_BYTES, LIBRARY_MIGRATIONS_DIR, startLibraryService } from '@murmur/library';
import { library } from '@murmur/proto';
import { redactUrl } from './benchmark';
import { describe } from './stack';

const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/** The Postgres the search benchmarks use when the caller names none. */
export const benchDatabaseUrl = (): string => process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL || DEFAULT_URL;

export interface BenchLibrary {
  /** The service's own database handle (wrap its methods before the first call to observe its SQL). */
  db: Database;
  client: PromiseClient<library.LibraryServiceClient>;
  schema: string;
  /** Redacted, for results; "embedded" for PGlite. */
  database: string;
  /** Stops the service and drops its schema. */
  stop(): Promise<void>;
}

export interface BenchLibraryOptions {
  /** The schema's name starts with it (a random suffix follows). */
  schemaPrefix: string;
  /** Open this schema, kept by an earlier run (its name must start with the prefix), instead of a new one. */
  reuse?: string;
  /** Postgres URL; "" for the embedded PGlite; default {@link benchDatabaseUrl}. */
  url?: string;
  poolSize?: number;
  /** Per-call deadline of the client (a bulk load's large calls need more than the default). */
  deadlineMs?: number;
  /** Keep the schema when stopping (for looking at the data afterwards). */
  keep?: boolean;
  /** Called with the database before the service starts, e.g. to wrap `db.query`. */
  beforeStart?: (db: Database) => void;
}

/** Opens a fresh schema (the library's migrations applied) and starts the service on it. */
export async function startBenchLibrary(opts: BenchLibraryOptions): Promise<BenchLibrary> {
  const url = opts.url ?? benchDatabaseUrl();
  if (opts.reuse !== undefined && !new RegExp(`^${opts.schemaPrefix}_[0-9a-f]{8}$`).test(opts.reuse)) {
    throw new Error(`${opts.reuse} is not a schema this benchmark made (${opts.schemaPrefix}_<8 hex digits>)`);
  }
  const schema = opts.reuse ?? `${opts.schemaPrefix}_${randomBytes(4).toString('hex')}`;
  const log = createLogger('library-bench', 'warn');
  let db: Database;
  try {
    db = await openDatabase({ schema, migrationsDir: LIBRARY_MIGRATIONS_DIR, url: url || undefined, poolSize: opts.poolSize ?? 10, log });
  } catch (err) {
    throw new Error(`Postgres is unreachable at ${redactUrl(url)}: ${describe(err)}. Start Postgres, or set BENCH_DATABASE_URL.`);
  }
  opts.beforeStart?.(db);
  const dropSchema = async () => {
    if (!opts.keep) await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
  };
  let running: Awaited<ReturnType<typeof startLibraryService>>;
  try {
    running = await startLibraryService({ access: testAccess('library'), db, log, address: '127.0.0.1:0' });
  } catch (err) {
    await dropSchema();
    await db.close();
    throw err;
  }
  const client = createPolicyClient(library.LibraryServiceClient, `127.0.0.1:${running.port}`, {
    deadlineMs: opts.deadlineMs ?? 60_000,
    maxReceiveMessageBytes: LIBRARY_MAX_MESSAGE_BYTES,
  });
  return {
    db,
    client,
    schema,
    database: url ? redactUrl(url) : 'embedded',
    async stop() {
      client.close();
      await running.stop();
      await dropSchema();
      await db.close();
    },
  };
}
