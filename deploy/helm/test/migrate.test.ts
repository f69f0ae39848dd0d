/**
 * deploy/docker/migrate.js, the chart's migration Job, run as the Job runs it (a child process
 * with DATABASE_URL) against a database of its own: the real Postgres when DATABASE_URL is set
 * (CI), an embedded PGlite otherwise.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '@murmur/kit';

const run = promisify(execFile);
const REPO = path.resolve(__dirname, '..', '..', '..');
const SCRIPT = path.join(REPO, 'deploy/docker/migrate.js');

let url = '';
let cleanup: () => Promise<void> = async () => undefined;

beforeAll(async () => {
  const server = process.env.DATABASE_URL;
  if (server) {
    const name = `murmur_migrate_${randomBytes(4).toString('hex')}`;
    const admin = new Client({ connectionString: server });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const u = new URL(server);
    u.pathname = `/${name}`;
    url = u.toString();
    cleanup = async () => {
      const a = new Client({ connectionString: server });
      await a.connect();
      await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.end();
    };
  } else {
    const embedded: EmbeddedPostgres = await startEmbeddedPostgres();
    url = embedded.url;
    cleanup = () => embedded.stop();
  }
}, 60_000);

afterAll(() => cleanup());

const migrate = (env: NodeJS.ProcessEnv) => run(process.execPath, [SCRIPT], { cwd: REPO, env: { PATH: process.env.PATH, LOG_LEVEL: 'info', ...env } });

async function applied(): Promise<Record<string, string[]>> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    const out: Record<string, string[]> = {};
    for (const schema of ['auth', 'billing', 'library']) {
      out[schema] = (await c.query<{ version: string }>(`SELECT version FROM ${schema}.schema_migrations ORDER BY version`)).rows.map((r) => r.version);
    }
    return out;
  } finally {
    await c.end();
  }
}

const migrationFiles = (svc: string) => fs.readdirSync(path.join(REPO, 'services', svc, 'migrations')).filter((f) => /^\d+_.+\.sql$/.test(f)).sort();

describe('migrate.js (the migration Job)', () => {
  it('applies every service schema, then does nothing on a second run', async () => {
    const first = await migrate({ DATABASE_URL: url });
    expect(first.stdout).toMatch(/"msg":"migrations done"/);
    const expected = { auth: migrationFiles('auth'), billing: migrationFiles('billing'), library: migrationFiles('library') };
    expect(await applied()).toEqual(expected);
    const second = await migrate({ DATABASE_URL: url });
    expect(second.stdout).not.toMatch(/applied migration/);
    expect(await applied()).toEqual(expected);
  }, 60_000);

  it('refuses to run without DATABASE_URL, exiting non-zero', async () => {
    await expect(migrate({})).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('DATABASE_URL is not set') });
  });

  it('fails the Job, naming the file, when a migration fails', async () => {
    // migrate.js migrates the services/*/migrations beside it: a copy beside a broken one.
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'murmur-migrate-'));
    try {
      fs.mkdirSync(path.join(root, 'deploy/docker'), { recursive: true });
      fs.copyFileSync(SCRIPT, path.join(root, 'deploy/docker/migrate.js'));
      fs.mkdirSync(path.join(root, 'services/broken/migrations'), { recursive: true });
      fs.writeFileSync(path.join(root, 'services/broken/migrations/001_init.sql'), 'CREATE TABLE t (id int);\nSELECT no_such_column FROM t;\n');
      const failed = run(process.execPath, [path.join(root, 'deploy/docker/migrate.js')], {
        env: { PATH: process.env.PATH, NODE_PATH: path.join(REPO, 'node_modules'), DATABASE_URL: url },
      });
      await expect(failed).rejects.toMatchObject({ code: 1, stderr: expect.stringMatching(/migrate failed: migration 001_init\.sql failed/) });
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);
});
