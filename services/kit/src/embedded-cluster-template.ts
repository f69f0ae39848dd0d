/**
 * A new embedded Postgres cluster without initdb. PGlite runs initdb for every new cluster:
 * ~4 s of CPU on this 2-core machine, and `npm start` makes four at once (auth, billing,
 * library, transcription), as does every test that starts the system on embedded defaults.
 * Unpacking a dump of a fresh cluster takes ~1.3 s. So the first fresh cluster is dumped
 * (PGlite's `dumpDataDir`) to a cache file of this user's, one per PGlite version, and every
 * later new cluster starts from it (`loadDataDir`).
 *
 * A cache, never a source of truth: a file that cannot be read, written or loaded is ignored
 * (and a bad one removed), and the cluster is made by initdb as before. It holds an empty
 * cluster only — no schema, no rows, nothing of any user.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PGlite } from '@electric-sql/pglite';

function pgliteVersion(): string {
  // The package's exports do not include package.json; it sits one folder above its entry.
  const entry = require.resolve('@electric-sql/pglite');
  const pkg = JSON.parse(fs.readFileSync(path.join(path.dirname(entry), '..', 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

/** Where the template lives: `$XDG_CACHE_HOME/murmur` (default `~/.cache/murmur`), named by PGlite's version. */
export function clusterTemplateFile(): string {
  const cacheHome = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(cacheHome, 'murmur', `pglite-${pgliteVersion()}-fresh-cluster.tar.gz`);
}

function readTemplate(file: string): Blob | undefined {
  try {
    return new Blob([fs.readFileSync(file)]);
  } catch {
    return undefined;
  }
}

/** Writes the dump of `db`, a cluster nothing has been written to yet; whole or not at all (rename). */
async function saveTemplate(db: PGlite, file: string): Promise<void> {
  try {
    const dump = Buffer.from(await (await db.dumpDataDir('gzip')).arrayBuffer());
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const partial = `${file}.${process.pid}.partial`;
    fs.writeFileSync(partial, dump, { mode: 0o600 });
    fs.renameSync(partial, file);
  } catch {
    // Only a cache: the next new cluster runs initdb again.
  }
}

/** True when `dataDir` (undefined: in memory) holds no cluster yet. */
function isNew(dataDir: string | undefined): boolean {
  return dataDir === undefined || !fs.existsSync(path.join(dataDir, 'PG_VERSION'));
}

/**
 * Opens the cluster at `dataDir` (undefined: in memory). A new one starts from the template
 * when there is one, and otherwise becomes the template.
 */
export async function createCluster(dataDir: string | undefined): Promise<PGlite> {
  if (!isNew(dataDir)) return PGlite.create(dataDir);
  const file = clusterTemplateFile();
  const template = readTemplate(file);
  if (template) {
    try {
      return await PGlite.create(dataDir, { loadDataDir: template });
    } catch {
      fs.rmSync(file, { force: true }); // unreadable: made afresh below
    }
  }
  const db = await PGlite.create(dataDir);
  await saveTemplate(db, file);
  return db;
}

/**
 * Makes the template now if there is none (one initdb), so that several services starting
 * together each unpack it instead of each running initdb. True when it was made.
 */
export async function prepareClusterTemplate(): Promise<boolean> {
  const file = clusterTemplateFile();
  if (fs.existsSync(file)) return false;
  const db = await PGlite.create();
  try {
    await saveTemplate(db, file);
  } finally {
    await db.close();
  }
  return fs.existsSync(file);
}
