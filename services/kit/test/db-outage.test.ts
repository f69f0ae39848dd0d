/**
 * A Postgres of the test's own that goes away under a live pool: lost connections are retried
 * where that is safe and otherwise answered service_unavailable, never a raw pg error, and no
 * client's 'error' event goes unhandled.
 */
import * as path from 'node:path';
import { Client } from 'pg';
import { MurmurError } from '@murmur/contract';
import { openDatabase, type Database } from '@murmur/kit';
import { describeIfReal, startTestPostgres, testPostgresUnavailable, type TestPostgres } from '@murmur/kit/testing';

const migrations = path.join(__dirname, 'fixtures', 'migrations');
const why = testPostgresUnavailable();

/** Terminates (57P01) every backend of the pool that runs `like`, from a connection of its own. */
async function terminateBackends(url: string, like: string): Promise<number> {
  const admin = new Client({ connectionString: url });
  await admin.connect();
  try {
    for (let i = 0; i < 200; i++) {
      const { rows } = await admin.query<{ ok: boolean }>(
        `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = 'kit_outage' AND query LIKE $1 AND pid <> pg_backend_pid()`,
        [like],
      );
      if (rows.length > 0) return rows.length;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`no backend ran ${like}`);
  } finally {
    await admin.end();
  }
}

async function outcome<T>(p: Promise<T>): Promise<T | MurmurError> {
  return p.catch((err: unknown) => {
    if (err instanceof MurmurError) return err;
    throw err;
  });
}

describeIfReal(why, 'Postgres outages under a live pool', () => {
  let pg: TestPostgres;
  let db: Database;
  const open = (retryBudgetMs: number) => openDatabase({ schema: 'kit_outage', migrationsDir: migrations, url: pg.url, poolSize: 4, retryBudgetMs });

  beforeAll(async () => {
    pg = await startTestPostgres();
    db = await open(8_000);
  });
  afterAll(async () => {
    await db?.close();
    await pg?.drop();
  });
  beforeEach(async () => {
    await db.query('DELETE FROM notes');
  });

  it('retries a read whose connection was terminated (57P01) and answers it', async () => {
    const read = db.query<{ n: number }>('SELECT 7 AS n, pg_sleep(0.5)');
    expect(await terminateBackends(pg.url, 'SELECT 7 AS n%')).toBe(1);
    expect((await read)[0]?.n).toBe(7);
  });

  it('does not retry a write that may have reached the server: service_unavailable, not a raw pg error', async () => {
    const write = outcome(db.query(`INSERT INTO notes (id, body) SELECT 'w1', 'x' FROM pg_sleep(0.5)`));
    await terminateBackends(pg.url, 'INSERT INTO notes%');
    const err = await write;
    expect(err).toBeInstanceOf(MurmurError);
    expect((err as MurmurError).code).toBe('service_unavailable');
    expect(await db.query('SELECT id FROM notes')).toEqual([]);
  });

  it('runs a transaction again when its connection broke before COMMIT, and commits it once', async () => {
    let runs = 0;
    const tx = db.transaction(async (client) => {
      runs += 1;
      await client.query(`INSERT INTO notes (id, body) VALUES ('t1', 'once')`);
      if (runs === 1) await client.query('SELECT pg_sleep(0.5) /* tx-hold */');
      return runs;
    });
    await terminateBackends(pg.url, '%tx-hold%');
    expect(await tx).toBe(2);
    expect(await db.query('SELECT id, body FROM notes')).toEqual([{ id: 't1', body: 'once' }]);
  });

  it('survives a server that dies under a checked-out, idle transaction (no unhandled error event) and runs it again', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let runs = 0;
    let dead!: Promise<unknown>;
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    const tx = outcome(
      db.transaction(async (client) => {
        runs += 1;
        await client.query(`INSERT INTO notes (id, body) VALUES ('t2', 'held')`);
        if (runs === 1) {
          // The client sits checked out, with no query running, while its server dies: pg
          // emits 'error' on it, where pg-pool no longer listens. Seeing it here proves the
          // death was noticed before COMMIT (otherwise the outcome is rightly "unknown").
          dead = new Promise((r) => client.once('error', r));
          entered();
          await held;
        }
        return runs;
      }),
    );
    await inside;
    await pg.kill();
    await dead;
    await pg.start();
    release();
    expect(await tx).toBe(2);
    expect(await db.query('SELECT id FROM notes')).toEqual([{ id: 't2' }]);
  });

  it('answers service_unavailable within its budget while the server is down, and recovers by itself', async () => {
    const short = await open(300);
    try {
      await short.query('SELECT 1'); // a pooled, idle connection that the kill breaks
      await pg.kill();
      const started = Date.now();
      const err = await outcome(short.query('SELECT 1'));
      expect((err as MurmurError).code).toBe('service_unavailable');
      expect(Date.now() - started).toBeLessThan(5_000); // a hang guard, not a timing assertion
      const txErr = await outcome(short.transaction(async (c) => c.query('SELECT 1')));
      expect((txErr as MurmurError).code).toBe('service_unavailable');
      await pg.start();
      expect(await short.query<{ one: number }>('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      await short.close();
    }
  });

  it('rides out a restart within its budget: a read issued while the server is down is answered once it is back', async () => {
    await db.query('SELECT 1');
    await pg.kill();
    const read = db.query<{ one: number }>('SELECT 1 AS one');
    await pg.start();
    expect(await read).toEqual([{ one: 1 }]);
  });
});
