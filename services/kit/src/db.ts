/**
 * Postgres for a service: a `pg` pool whose search_path is the service's own schema, and
 * forward-only SQL migrations from the service's `migrations/` folder, applied under an
 * advisory lock so replicas starting together never race. DATABASE_URL unset → embedded PGlite.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Pool, type PoolClient, type QueryResultRow } from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded-postgres';
import type { Logger } from './log';

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
}

export interface Database {
  pool: Pool;
  schema: string;
  embedded: boolean;
  /** Runs `fn` in one transaction on one connection; rolls back on throw. */
  transaction<T>(fn: (client: PoolClient) => Promise<T>): Promise<T>;
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
  const pool = new Pool({
    connectionString: url,
    // One connection to the embedded server: pglite-socket multiplexes connections onto PGlite's
    // single session message by message, so two connections' extended-protocol exchanges
    // (Parse/Bind/Execute on the unnamed statement) would interleave and corrupt each other.
    max: embedded ? 1 : opts.poolSize ?? 10,
    idleTimeoutMillis: 30_000,
    application_name: opts.schema,
    // Every connection starts in the service's own schema.
    options: embedded ? undefined : `-c search_path=${opts.schema},public`,
  });
  pool.on('error', (err) => opts.log?.error({ err: err.message }, 'idle Postgres connection failed'));

  const db: Database = {
    pool,
    schema: opts.schema,
    embedded: embedded !== undefined,
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const out = await fn(client);
        await client.query('COMMIT');
        return out;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
    async query(sql, params) {
      return (await pool.query(sql, params)).rows;
    },
    async close() {
      await pool.end();
      await embedded?.stop();
    },
  };
  try {
    await migrate(db, opts.migrationsDir, opts.log);
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
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${db.schema}`);
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [`murmur-migrate:${db.schema}`]);
    try {
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
