/**
 * Test support: a database of its own for each test file — a fresh schema on the real
 * Postgres when DATABASE_URL is set (CI), an in-memory PGlite otherwise.
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { openDatabase, type Database } from './db';

/**
 * `url` overrides DATABASE_URL (a fault test's own Postgres). `companions`: suffixes of schemas
 * a library makes beside the service's (the job queue's `_queue`), dropped with it.
 */
export async function openTestDatabase(service: string, migrationsDir: string, url = process.env.DATABASE_URL || undefined, companions: string[] = []): Promise<Database> {
  const schema = url ? `${service}_t${randomBytes(5).toString('hex')}` : service;
  const db = await openDatabase({ schema, migrationsDir, url, poolSize: 4 });
  const close = db.close.bind(db);
  db.close = async () => {
    await close();
    if (url) {
      const admin = new Client({ connectionString: url });
      await admin.connect();
      for (const name of [schema, ...companions.map((suffix) => `${schema}${suffix}`)]) await admin.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
      await admin.end();
    }
  };
  return db;
}
