/**
 * Postgres for a service: a `pg` pool whose search_path is the service's own schema, and
 * forward-only SQL migrations from the service's `migrations/` folder, applied under an
 * advisory lock so replicas starting together never race. DATABASE_URL unset → embedded PGlite.
 *
 * A lost or refused connection (server restarting, failover) is retried where that is safe,
 * within a short budget, and otherwise surfaces as `service_unavailable` (docs/operations.md):
 * - a connection that could not be obtained: nothing was sent, any statement is retried;
 * - `query` of a read-only statement (SELECT, SHOW, VALUES, TABLE): retried;
 * - `transaction` whose connection broke before COMMIT was sent: nothing was committed, so the
 *   whole function runs again on a fresh connection;
 * - a write that may have reached the server, or a COMMIT whose answer was lost: not retried.
 *
 * On a Postgres server each connection runs in pg's pipeline mode: a statement goes out without
 * waiting for the answer to the one before. A transaction's BEGIN travels with its first
 * statement, and a last write handed to `commitWith` travels with the COMMIT, so a transaction
 * of one read and one write is two round trips instead of four. Every statement still waits for
 * the ones before it on the server, so nothing else changes.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client as PgClient, Pool, type PoolClient, type QueryConfig, type QueryResult, type QueryResultRow } from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded-postgres';
import { untracedUnlessInCall } from './background-work';
import { MurmurError } from '@murmur/contract';
import { unavailableCause } from './errors';
import type { Logger } from './log';

/**
 * pg's Client with its promise form of `query` built on pg's callback form, for the garbage it
 * leaves (issue 37). pg's own promise form assigns a fresh arrow function to `query.callback`
 * (pg/lib/client.js), and V8 allocates a function literal assigned to a property straight in the
 * old generation (a parser heuristic: "pretenure the literal so it can be added as a constant
 * function property"). That closure reaches the query, its result and every row, string and Date
 * in it, and old objects are roots to a scavenge: so every result survived the scavenges until the
 * next full collection, was copied twice and promoted (~30 KB per list call in the library, ~6 MB
 * per scavenge under load, each scavenge a ~10 ms pause; bench/README.md#read-path). Here the
 * callback is an argument, allocated young, and dies with the call. Everything else is pg's: the
 * error's stack is re-captured where the promise settles, as pg does.
 */
class YoungCallbackClient extends PgClient {
  // The overloads of pg's `query` are the base class's; this one body serves them all.
  override query(config: any, values?: any, callback?: any): any {
    if (config == null || typeof config.submit === 'function' || typeof config.callback === 'function' || typeof values === 'function' || typeof callback === 'function') {
      return super.query(config, values, callback);
    }
    // pg writes the callback into a config object; a copy keeps the caller's object unchanged.
    const statement = typeof config === 'string' ? config : { ...config };
    return new Promise<QueryResult>((resolve, reject) => {
      super.query(statement, values, (err: Error | null, result: QueryResult) => (err ? reject(err) : resolve(result)));
    }).catch((err: Error) => {
      Error.captureStackTrace(err);
      throw err;
    });
  }
}

export interface DatabaseOptions {
  /** Postgres schema owned by the service, e.g. "auth". */
  schema: string;
  migrationsDir: string;
  /** A real server; when absent an embedded PGlite is started. */
  url?: string;
  /** Folder of the embedded database; absent keeps it in memory. */
  embeddedDataDir?: string;
  poolSize?: number;
  log?: Logger;
  /**
   * How long a statement or transaction keeps retrying a lost connection before it answers
   * service_unavailable (default {@link DB_RETRY_BUDGET_MS}); well under the gRPC deadline.
   */
  retryBudgetMs?: number;
}

/** Default retry budget: a Postgres restart of a second or two is invisible to clients. */
export const DB_RETRY_BUDGET_MS = 3_000;
/** Longest wait for a connection (new or from a busy pool) before the attempt counts as failed. */
const CONNECT_TIMEOUT_MS = 2_000;
/**
 * The embedded server lives in this process and runs one transaction at a time over one
 * connection: a checkout waits for the transaction before it, however long, and never means an
 * outage. Bounded only to surface a deadlock.
 */
const EMBEDDED_CONNECT_TIMEOUT_MS = 60_000;
const READ_ONLY_STATEMENT = /^\s*(SELECT|SHOW|VALUES|TABLE)\b/i;

/**
 * Hands a transaction its last statement, to be sent right before its COMMIT: on a pipelined
 * connection both leave in one write, and the COMMIT does not wait for the statement's answer.
 * When the statement fails the transaction fails, committing nothing. Call it last, at most once.
 */
export type CommitWith = (last: QueryConfig) => void;

export interface Database {
  pool: Pool;
  schema: string;
  embedded: boolean;
  /**
   * Runs `fn` in one transaction on one connection; rolls back on throw. When the connection
   * breaks before COMMIT is sent, `fn` runs again on a new connection: keep its effects inside
   * the database (anything else it does may happen twice).
   */
  transaction<T>(fn: (client: PoolClient, commitWith: CommitWith) => Promise<T>): Promise<T>;
  query<R extends QueryResultRow>(sql: string, params?: unknown[]): Promise<R[]>;
  close(): Promise<void>;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  if (!SCHEMA_NAME.test(opts.schema)) throw new Error(`invalid schema name ${opts.schema}`);
  let embedded: EmbeddedPostgres | undefined;
  let url = opts.url;
  if (!url) {
    embedded = await startEmbeddedPostgres(opts.embeddedDataDir, `${opts.schema}, public`);
    url = embedded.url;
    opts.log?.info({ data_dir: opts.embeddedDataDir ?? 'memory' }, 'DATABASE_URL unset: using embedded Postgres (PGlite)');
  }
  const pipelined = !embedded;
  const pool = new Pool({
    // pg's Client, its promise-returning query leaving less garbage (YoungCallbackClient).
    Client: YoungCallbackClient,
    connectionString: url,
    // One connection to the embedded server: pglite-socket multiplexes connections onto PGlite's
    // single session message by message, so two connections' extended-protocol exchanges
    // (Parse/Bind/Execute on the unnamed statement) would interleave and corrupt each other.
    max: embedded ? 1 : opts.poolSize ?? 10,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: embedded ? EMBEDDED_CONNECT_TIMEOUT_MS : CONNECT_TIMEOUT_MS,
    keepAlive: true,
    application_name: opts.schema,
    // Every connection starts in the service's own schema.
    options: embedded ? undefined : `-c search_path=${opts.schema},public`,
    // Statements go out without waiting for the previous answer (the module comment); not to
    // the embedded server, whose socket bridge takes one exchange at a time.
    pipeline: pipelined,
  });
  // pg-pool emits 'error' for an idle client whose server went away (restart, failover) and
  // drops that client; the next checkout connects afresh. An outage, not a bug: a warning.
  pool.on('error', (err) => opts.log?.warn({ cause: unavailableCause(err) ?? err.message }, 'idle Postgres connection lost; the pool reconnects on next use'));
  const retry = retrier(opts.retryBudgetMs ?? DB_RETRY_BUDGET_MS, opts.log);

  const db: Database = {
    pool,
    schema: opts.schema,
    embedded: embedded !== undefined,
    transaction: (fn) => retry('transaction', (attempt) => attempt(pool, async (client) => {
      let committing = false;
      let last: QueryConfig | undefined;
      const commitWith: CommitWith = (statement) => (last = statement);
      try {
        let out: Awaited<ReturnType<typeof fn>>;
        if (pipelined) {
          // BEGIN leaves in one write with the statements fn sends before its first await (the
          // lock, as a rule); a lost connection fails those too.
          const sent = holdWrites(client);
          const begin = client.query('BEGIN');
          begin.catch(() => undefined);
          let running: ReturnType<typeof fn>;
          try {
            running = fn(client, commitWith);
          } finally {
            sent();
          }
          out = await running;
          await begin;
        } else {
          await client.query('BEGIN');
          out = await fn(client, commitWith);
          if (last) await client.query(last);
        }
        // From here the COMMIT may reach the server, and with it a pipelined last statement.
        committing = true;
        if (pipelined && last) {
          const sent = holdWrites(client);
          const statement = client.query(last);
          const commit = client.query('COMMIT');
          sent();
          statement.catch(() => undefined);
          commit.catch(() => undefined);
          // Failed, it aborted the transaction: the server answers the COMMIT with a ROLLBACK.
          await statement;
          await commit;
        } else {
          await client.query('COMMIT');
        }
        return out;
      } catch (err) {
        if (committing && unavailableCause(err) !== undefined && !neverSent(err)) throw new CommitOutcomeUnknown(err);
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    })),
    query: (sql, params) =>
      retry(READ_ONLY_STATEMENT.test(sql) ? 'read' : 'write', (attempt) =>
        attempt(pool, async (client) => (await client.query(sql, params)).rows),
      ),
    async close() {
      await pool.end();
      await embedded?.stop();
    },
  };
  try {
    // Start-up work, no one's call: it starts no trace of its own (background-work.ts).
    await untracedUnlessInCall(() => migrate(db, opts.migrationsDir, opts.log));
  } catch (err) {
    await db.close();
    throw err;
  }
  return db;
}

/** Applies the `NNN_name.sql` files of `dir` not yet recorded in `<schema>.schema_migrations`. */
export async function migrate(db: Database, dir: string, log?: Logger): Promise<string[]> {
  const files = fs.readdirSync(dir).filter((f) => /^\d+_.+\.sql$/.test(f)).sort();
  const client = await db.pool.connect();
  const applied: string[] = [];
  try {
    // The lock first: two replicas' CREATE SCHEMA IF NOT EXISTS at the same moment race on the
    // catalog's unique index (seen as a start-up crash when two transcription replicas started
    // on a fresh database).
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [`murmur-migrate:${db.schema}`]);
    try {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${db.schema}`);
      await client.query(`SET search_path TO ${db.schema}, public`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      const done = new Set((await client.query<{ version: string }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
      for (const file of files) {
        if (done.has(file)) continue;
        const sql = fs.readFileSync(path.join(dir, file), 'utf8');
        await client.query('BEGIN');
        try {
          await client.query(sql);
          await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [file]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK');
          throw new Error(`migration ${file} failed: ${(err as Error).message}`);
        }
        applied.push(file);
        log?.info({ migration: file, schema: db.schema }, 'applied migration');
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [`murmur-migrate:${db.schema}`]);
    }
  } finally {
    client.release();
  }
  return applied;
}

/**
 * Holds back a connection's socket writes until the returned function is called, so that the
 * statements sent meanwhile leave in one write (one system call on each side of the socket).
 * pg corks the socket around each statement's messages; the cork here is the outer one.
 */
function holdWrites(client: PoolClient): () => void {
  const stream = (client as unknown as { connection?: { stream?: { cork?: () => void; uncork?: () => void } } }).connection?.stream;
  if (typeof stream?.cork !== 'function' || typeof stream.uncork !== 'function') return () => undefined;
  stream.cork();
  return () => stream.uncork!();
}

/** The answer to a COMMIT was lost with its connection: it may or may not have been applied. */
class CommitOutcomeUnknown extends Error {
  constructor(readonly lost: unknown) {
    super('the connection was lost while committing');
    this.name = 'CommitOutcomeUnknown';
  }
}

/** A failure to get a connection: nothing reached the server, so any statement may be retried. */
class NotSent extends Error {
  constructor(readonly lost: unknown) {
    super('no connection to the database');
    this.name = 'NotSent';
  }
}

/** pg refuses a statement on a client it already knows is broken: the statement never left. */
function neverSent(err: unknown): boolean {
  return err instanceof Error && /^Client (has encountered a connection error|was closed) and is not queryable$/.test(err.message);
}

type Attempt = <T>(pool: Pool, use: (client: PoolClient) => Promise<T>) => Promise<T>;

/**
 * One try on one pooled connection. The client's own 'error' event (emitted when its server
 * dies while it is checked out, where pg-pool listens no longer) is caught here, and a client
 * that failed that way is destroyed instead of going back to the pool.
 */
const attemptOnce: Attempt = async (pool, use) => {
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw unavailableCause(err) !== undefined ? new NotSent(err) : err;
  }
  let broken: Error | undefined;
  const onError = (err: Error) => (broken = err);
  client.on('error', onError);
  try {
    return await use(client);
  } catch (err) {
    if (unavailableCause(err) !== undefined || err instanceof CommitOutcomeUnknown) broken ??= err as Error;
    throw err;
  } finally {
    client.release(broken);
    client.removeListener('error', onError);
  }
};

type RetryKind = 'read' | 'write' | 'transaction';

/**
 * Runs an attempt again while its failure is a lost connection and a retry is safe for its
 * kind (see the module comment), with exponential backoff inside `budgetMs`; what is left is
 * service_unavailable.
 */
function retrier(budgetMs: number, log?: Logger) {
  return async <T>(kind: RetryKind, run: (attempt: Attempt) => Promise<T>): Promise<T> => {
    const deadline = Date.now() + budgetMs;
    for (let tries = 0; ; tries++) {
      try {
        return await run(attemptOnce);
      } catch (err) {
        if (err instanceof CommitOutcomeUnknown) {
          log?.warn({ cause: unavailableCause(err.lost) }, 'Postgres connection lost during COMMIT; outcome unknown');
          throw new MurmurError(
            'service_unavailable',
            'The database connection was lost while saving; the change may not have been saved. Retry in a few seconds.',
          );
        }
        const lost = err instanceof NotSent ? err.lost : err;
        const cause = unavailableCause(lost);
        if (cause === undefined) throw err;
        const safe = err instanceof NotSent || neverSent(err) || kind !== 'write';
        const delay = Math.min(25 * 2 ** tries, 500);
        if (!safe || Date.now() + delay >= deadline) {
          log?.warn({ cause, kind, tries: tries + 1 }, 'Postgres unavailable; answered service_unavailable');
          throw new MurmurError('service_unavailable');
        }
        await sleep(delay);
      }
    }
  };
}
