import * as path from 'node:path';
import { migrate, type Database } from '@murmur/kit';
import { openTestDatabase } from '@murmur/kit/testing';

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

  it('serves concurrent queries from several pooled connections', async () => {
    await Promise.all(Array.from({ length: 20 }, (_, i) => db.query('INSERT INTO notes (id, body) VALUES ($1, $2)', [`c${i}`, 'x'])));
    const [count] = await db.query<{ n: string }>('SELECT count(*) AS n FROM notes');
    expect(Number(count?.n)).toBe(20);
  });
});

describe('replicas migrating one fresh schema at the same moment', () => {
  const url = process.env.DATABASE_URL;
  (url ? it : it.skip)('all start: the schema is created under the migration lock, not before it (real Postgres)', async () => {
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
