/**
 * New embedded clusters start from a cached empty one (embedded-cluster-template.ts). Each step
 * runs in a Node.js process of its own on the built kit, as a service would: PGlite inside a
 * long jest run is several times slower than in a fresh process (its WASM memory on top of the
 * run's heap).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);
const TEMPLATE_MODULE = path.resolve(__dirname, '../dist/embedded-cluster-template.js');

describe('new embedded clusters start from a cached empty one (embedded-cluster-template.ts)', () => {
  let scratch: string;
  let cache: string;
  beforeEach(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'murmur-cluster-template-'));
    cache = path.join(scratch, 'cache');
  });
  afterEach(() => fs.rmSync(scratch, { recursive: true, force: true }));

  /** Runs `body` (an async function body with `t`, the module, and `PGlite` in scope) in a fresh process; returns what it returns. */
  function inProcess<T>(body: string): T {
    const script = `
      const t = require(${JSON.stringify(TEMPLATE_MODULE)});
      const { PGlite } = require('@electric-sql/pglite');
      const tables = async (db) => (await db.query("SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")).rows.map((r) => r.name);
      (async () => { ${body} })().then((out) => process.stdout.write(JSON.stringify(out ?? null)), (err) => { console.error(err); process.exit(1); });`;
    const out = execFileSync(process.execPath, ['-e', script], { env: { ...process.env, XDG_CACHE_HOME: cache }, cwd: path.resolve(__dirname, '..'), encoding: 'utf8' });
    return JSON.parse(out) as T;
  }

  const templateFile = () => inProcess<string>('return t.clusterTemplateFile();');

  it('lives in the user cache, named by the PGlite version; the launcher makes it once', () => {
    const file = templateFile();
    expect(file.startsWith(path.join(cache, 'murmur', 'pglite-'))).toBe(true);
    expect(inProcess<boolean[]>('return [await t.prepareClusterTemplate(), await t.prepareClusterTemplate()];')).toEqual([true, false]);
    expect(fs.readFileSync(file).subarray(0, 2)).toEqual(GZIP_MAGIC);
  });

  it('a new cluster, in memory or in a folder, is unpacked from it; an existing cluster is opened as it is', () => {
    const file = templateFile();
    const folder = path.join(scratch, 'billing');
    // A template with a marker in it, which only a cluster made from it can have.
    const made = inProcess<{ inMemory: string[]; onDisk: string[] }>(`
      const marked = await PGlite.create();
      await marked.exec('CREATE TABLE made_from_template (id int)');
      require('node:fs').mkdirSync(require('node:path').dirname(${JSON.stringify(file)}), { recursive: true });
      require('node:fs').writeFileSync(${JSON.stringify(file)}, Buffer.from(await (await marked.dumpDataDir('gzip')).arrayBuffer()));
      await marked.close();
      const inMemory = await t.createCluster(undefined);
      const memoryTables = await tables(inMemory);
      await inMemory.close();
      const onDisk = await t.createCluster(${JSON.stringify(folder)});
      await onDisk.exec('CREATE TABLE own (id int)');
      const diskTables = await tables(onDisk);
      await onDisk.close();
      return { inMemory: memoryTables, onDisk: diskTables };`);
    expect(made).toEqual({ inMemory: ['made_from_template'], onDisk: ['made_from_template', 'own'] });
    expect(fs.existsSync(path.join(folder, 'PG_VERSION'))).toBe(true);

    fs.writeFileSync(file, 'not a cluster'); // never read for a folder that holds a cluster
    const reopened = inProcess<string[]>(`const db = await t.createCluster(${JSON.stringify(folder)}); const names = await tables(db); await db.close(); return names;`);
    expect(reopened).toEqual(['made_from_template', 'own']);
  });

  it('an unreadable template is ignored and replaced: the cluster is made by initdb as before', () => {
    const file = templateFile();
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, 'not a cluster');
    const answer = inProcess<unknown[]>(`const db = await t.createCluster(undefined); const { rows } = await db.query('SELECT 1 AS one'); await db.close(); return rows;`);
    expect(answer).toEqual([{ one: 1 }]);
    expect(fs.readFileSync(file).subarray(0, 2)).toEqual(GZIP_MAGIC);
  });
});
