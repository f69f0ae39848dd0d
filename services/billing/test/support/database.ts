/**
 * The database of a billing test file. The billing rules that matter most are concurrency rules
 * (the account row lock, INSERT … ON CONFLICT, the CHECK constraints), and those only bite where
 * transactions run side by side: PGlite runs one at a time, so a missing FOR UPDATE passes
 * there. So these files run on a real Postgres everywhere — DATABASE_URL in CI, a cluster of the
 * file's own on a developer machine — and fall back to PGlite, with the race tests skipped and
 * the reason printed, only where neither exists.
 */
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { Client } from 'pg';
import { openDatabase, type Database } from '@murmur/kit';
import { describeIfReal, realPostgres, realPostgresUnavailable } from '@murmur/kit/testing';

const migrationsDir = path.resolve(__dirname, '../../migrations');

/** Why the race tests cannot run here, or undefined when a real Postgres can be had. */
export const racesUnavailable = realPostgresUnavailable();

/** A group of race tests: run on a real Postgres, or skipped with the reason printed. */
export function describeRaces(name: string, fn: () => void): void {
  describeIfReal(racesUnavailable === undefined ? undefined : `needs a real Postgres (PGlite runs one transaction at a time): ${racesUnavailable}`, name, fn);
}

/**
 * A fresh billing schema on the real Postgres (dropped on close, with the cluster when it is the
 * file's own), or an in-memory PGlite where no real Postgres can be had.
 */
export async function openBillingDatabase(poolSize: number): Promise<Database> {
  if (racesUnavailable) return openDatabase({ schema: 'billing', migrationsDir, poolSize });
  const server = await realPostgres();
  const schema = `billing_t${randomBytes(5).toString('hex')}`;
  const db = await openDatabase({ schema, migrationsDir, url: server.url, poolSize }).catch(async (err: unknown) => {
    await server.release();
    throw err;
  });
  const close = db.close.bind(db);
  db.close = async () => {
    await close();
    const admin = new Client({ connectionString: server.url });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
    await server.release();
  };
  return db;
}
