import * as net from 'node:net';
import * as path from 'node:path';
import { migrate, openDatabase, type Database } from '@murmur/kit';
import { describeIfReal, openTestDatabase, realPostgres, realPostgresUnavailable, type RealServer } from '@murmur/kit/testing';

const migrations = path.join(__dirname, 'fixtures', 'migrations');

describe('database (real Postgres when DATABASE_URL is set, embedded PGlite otherwise)', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase('kit', migrations);
  });
  afterAll(async () => {
    await db.close();
  });

  it('applies every migration once, into the service schema', async () => {
    const rows = await db.query<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version');
    expect(rows.map((r) => r.version)).toEqual(['001_init.sql', '002_more.sql']);
    expect(await migrate(db, migrations)).toEqual([]);
    const [where] = await db.query<{ schema: string }>(`SELECT table_schema AS schema FROM information_schema.tables WHERE table_name = 'notes'`);
    expect(where?.schema).toBe(db.schema);
  });

  it('rolls a failed transaction back', async () => {
    await expect(
      db.transaction(async (c) => {
        await c.query(`INSERT INTO notes (id, body) VALUES ('n1', 'kept?')`);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await db.query('SELECT * FROM notes')).toEqual([]);
  });

  it('commits a last statement sent with the COMMIT (commitWith)', async () => {
    const out = await db.transaction(async (c, commitWith) => {
      await c.query(`INSERT INTO notes (id, body) VALUES ('w1', 'first')`);
      commitWith({ text: `INSERT INTO notes (id, body) VALUES ('w2', 'last')` });
      return 'done';
    });
    expect(out).toBe('done');
    expect((await db.query<{ id: string }>(`SELECT id FROM notes WHERE id LIKE 'w%' ORDER BY id`)).map((r) => r.id)).toEqual(['w1', 'w2']);
    await db.query(`DELETE FROM notes WHERE id LIKE 'w%'`);
  });

  it('commits nothing when the last statement sent with the COMMIT fails, not even what came before it', async () => {
    await expect(
      db.transaction(async (c, commitWith) => {
        await c.query(`INSERT INTO notes (id, body) VALUES ('f1', 'before')`);
        commitWith({ text: `INSERT INTO notes (id, body) VALUES ('f1', 'duplicate key')` });
      }),
    ).rejects.toMatchObject({ code: '23505' });
    expect(await db.query(`SELECT * FROM notes WHERE id = 'f1'`)).toEqual([]);
    // The connection went back to the pool clean: the next transaction commits.
    await db.transaction(async (c) => void (await c.query(`INSERT INTO notes (id, body) VALUES ('f2', 'after')`)));
    expect(await db.query(`SELECT id FROM notes WHERE id = 'f2'`)).toEqual([{ id: 'f2' }]);
    await db.query(`DELETE FROM notes WHERE id = 'f2'`);
  });

  it('serves concurrent queries from several pooled connections', async () => {
    await Promise.all(Array.from({ length: 20 }, (_, i) => db.query('INSERT INTO notes (id, body) VALUES ($1, $2)', [`c${i}`, 'x'])));
    const [count] = await db.query<{ n: string }>('SELECT count(*) AS n FROM notes');
    expect(Number(count?.n)).toBe(20);
  });
});

/**
 * Between the client and the server: counts round trips, i.e. how often the client sends after
 * the server has answered (a pipelined statement goes out before the answer to the one before).
 */
async function roundTripCounter(target: URL): Promise<{ url: string; roundTrips: () => number; close: () => Promise<void> }> {
  let turns = 0;
  let last: 'client' | 'server' = 'server';
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    client.on('data', (chunk) => {
      if (last === 'server') turns++;
      last = 'client';
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      last = 'server';
      client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(target);
  proxied.hostname = '127.0.0.1';
  proxied.port = String((server.address() as net.AddressInfo).port);
  return {
    url: proxied.toString(),
    roundTrips: () => turns,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The cases only a Postgres server shows (PGlite runs one connection): DATABASE_URL, else a cluster of the test's own. */
describeIfReal(realPostgresUnavailable(), "on a real Postgres server (DATABASE_URL, else a cluster of the test's own)", () => {
  let server: RealServer | undefined;
  let url = '';
  beforeAll(async () => {
    server = await realPostgres();
    url = server.url;
  }, 60_000);
  afterAll(async () => server?.release());

  describe('replicas migrating one fresh schema at the same moment', () => {
    it('all start: the schema is created under the migration lock, not before it (real Postgres)', async () => {
      const { openDatabase } = await import('@murmur/kit');
      const { Client } = await import('pg');
      for (let round = 0; round < 5; round++) {
        const schema = `kit_race_${process.pid}_${round}_${Date.now() % 100000}`;
        const opened = await Promise.allSettled(Array.from({ length: 4 }, () => openDatabase({ schema, migrationsDir: migrations, url, poolSize: 1 })));
        const admin = new Client({ connectionString: url });
        await admin.connect();
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await admin.end();
        for (const o of opened) if (o.status === 'fulfilled') await o.value.close();
        expect(opened.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason))).toEqual([]);
      }
    });
  });

  describe('pipelined transactions on a Postgres server', () => {
    it('a read-then-write transaction is two round trips: BEGIN rides with the read, the write with COMMIT (real Postgres)', async () => {
      const counter = await roundTripCounter(new URL(url));
      const schema = `kit_pipe_${process.pid}_${Date.now() % 100000}`;
      const db = await openDatabase({ schema, migrationsDir: migrations, url: counter.url, poolSize: 1 });
      try {
        await db.query('SELECT 1'); // the connection is open and warm: only the transaction is counted
        const before = counter.roundTrips();
        await db.transaction(async (c, commitWith) => {
          const { rows } = await c.query<{ n: string }>('SELECT count(*) AS n FROM notes');
          commitWith({ text: 'INSERT INTO notes (id, body) VALUES ($1, $2)', values: [`p${rows[0]!.n}`, 'x'] });
        });
        expect(counter.roundTrips() - before).toBe(2);
        expect(await db.query('SELECT id FROM notes')).toEqual([{ id: 'p0' }]);
      } finally {
        await db.query(`DROP SCHEMA ${schema} CASCADE`).catch(() => undefined);
        await db.close();
        await counter.close();
      }
    });
  });
});
