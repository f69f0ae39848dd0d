/**
 * A first `npm start` killed while it seeds the demo library (issue 31 item 5), with the real
 * launcher and its processes: the library is frozen (SIGSTOP) once the seed has begun and before
 * it has ended, and the whole process group is killed, as a crash would. Nothing may have
 * announced "Murmur is up" or printed a key. The next start must finish the first start: exactly
 * the planned demo library (nothing missing, nothing twice), and a printed key that works, while a
 * key an interrupted start minted and never showed is revoked.
 *
 * On an empty embedded store (the README's quick start); on a fresh database of DATABASE_URL's
 * server when it is set.
 */
import { closeServiceClients, createServiceClients, type ServiceClients } from '@murmur/kit';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { admin, adminIdentity, buildSeedPlan } from '@murmur/app';
import { librarySnapshot, plannedSnapshot } from '../../app/test/support/seed-snapshot';
import { FIRST_START_MARK_FILE } from '../src/first-start-mark';
import { DEMO_EMAIL, DEMO_RECORDINGS, QUICK_START_KEY_NAME } from '../src/first-run';
import { eventually } from './support/eventually';
import { launcherEnv, startLauncher, type LauncherRun } from './support/launcher-process';
import { assertNoSecretsLogged, processLines } from './support/log-secrets';

const LIBRARY_SCRIPT = 'services/library/dist/main.js';
const KEY = /MURMUR_API_KEY=(svc_[0-9a-f]{64})/;

/** A new, empty database on the server of `url`, dropped by `drop`. */
async function freshDatabase(url: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `murmur_first_start_${randomBytes(5).toString('hex')}`;
  const run = async (sql: string) => {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await run(`CREATE DATABASE ${name}`);
  const own = new URL(url);
  own.pathname = `/${name}`;
  return { url: own.toString(), drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

describe('a first start killed during seeding, then started again', () => {
  let dataDir: string;
  let database: { url: string; drop(): Promise<void> } | undefined;
  let env: Awaited<ReturnType<typeof launcherEnv>>;
  let clients: ServiceClients | undefined;
  let first: LauncherRun | undefined;
  let second: LauncherRun | undefined;
  let unshownKey: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'murmur-first-start-'));
    if (process.env.DATABASE_URL) database = await freshDatabase(process.env.DATABASE_URL);
    env = await launcherEnv(dataDir, database ? { DATABASE_URL: database.url, REDIS_URL: process.env.REDIS_URL ?? '' } : {});
    first = startLauncher(env);
    // The admin CLI's view beside `npm start`: the app's admin key from the store the launcher
    // makes before it says which stores it uses.
    await first.printed('Murmur: ');
    clients = createServiceClients(env, { deadlineMs: 10_000, identity: adminIdentity({ MURMUR_DATA_DIR: dataDir }) });
    const c = clients;
    // Recordings but no thread yet (threads come last): the seed has begun and not ended.
    await eventually(
      async () => {
        const user = await admin.userByEmail(c, DEMO_EMAIL);
        return c.library.getLibraryStats({ ownerId: user.id });
      },
      (s) => s.recordings > 0 && s.thoughtThreads === 0,
      'the demo seed under way',
      120_000,
      20,
    );
    process.kill(first.pidOf(LIBRARY_SCRIPT), 'SIGSTOP');
    // What a start killed between minting its key and printing it leaves behind: a key nobody saw.
    unshownKey = (await admin.createKey(c, DEMO_EMAIL, '90', QUICK_START_KEY_NAME)).key;
    await first.signal('SIGKILL');

    second = startLauncher(env);
    await second.printed('Press Ctrl-C to stop.');
  }, 300_000);

  afterAll(async () => {
    if (clients) closeServiceClients(clients);
    await first?.signal('SIGKILL');
    await second?.signal('SIGTERM');
    await database?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
    // What the processes logged, both starts: no key, token or secret (the launcher's own lines to its user aside).
    assertNoSecretsLogged(processLines(`${first?.output() ?? ''}\n${second?.output() ?? ''}`));
  });

  const me = (key: string) => fetch(`http://127.0.0.1:${env.PORT}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } });

  it('the killed start announced nothing and printed no key', () => {
    expect(first!.output()).not.toContain('Murmur is up');
    expect(first!.output()).not.toMatch(KEY);
  });

  it('the next start finishes the first start: "Murmur is up", then a key that works', async () => {
    const out = second!.output();
    expect(out.match(/Murmur is up/g)).toHaveLength(1);
    expect(out).not.toContain('already has users');
    const printed = KEY.exec(out);
    expect(printed).not.toBeNull();
    expect(out.indexOf('Murmur is up')).toBeLessThan(printed!.index);
    const res = await me(printed![1]!);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ email: DEMO_EMAIL, plan: { id: 'pro' } });
    expect(fs.existsSync(path.join(dataDir, FIRST_START_MARK_FILE))).toBe(false);
  });

  it('revokes the key the interrupted start never showed, leaving the printed one alone', async () => {
    expect((await me(unshownKey)).status).toBe(401);
    const active = (await admin.listKeys(clients!, DEMO_EMAIL)).filter((k) => !k.revokedAt);
    expect(active.map((k) => k.name)).toEqual([QUICK_START_KEY_NAME]);
  });

  it('holds exactly the planned demo library: nothing missing, nothing twice', async () => {
    const user = await admin.userByEmail(clients!, DEMO_EMAIL);
    const opts = { recordings: DEMO_RECORDINGS, now: user.createdAt! };
    expect(await librarySnapshot(clients!.library, user.id)).toEqual(plannedSnapshot(buildSeedPlan(opts), user.id, opts));
  });
});
