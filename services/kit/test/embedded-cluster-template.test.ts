import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { clusterTemplateFile, prepareClusterTemplate } from '@murmur/kit';
import { createCluster } from '../src/embedded-cluster-template';

const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

describe('new embedded clusters start from a cached empty one (embedded-cluster-template.ts)', () => {
  let scratch: string;
  const previous = process.env.XDG_CACHE_HOME;
  beforeEach(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'murmur-cluster-template-'));
    process.env.XDG_CACHE_HOME = path.join(scratch, 'cache');
  });
  afterEach(() => {
    if (previous === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = previous;
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  const tables = async (db: PGlite) => (await db.query<{ name: string }>(`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'`)).rows.map((r) => r.name);

  it('the first new cluster becomes the template, in the user cache, named by the PGlite version', async () => {
    const file = clusterTemplateFile();
    expect(file.startsWith(path.join(scratch, 'cache', 'murmur', 'pglite-'))).toBe(true);
    const db = await createCluster(undefined);
    await db.close();
    expect(fs.readFileSync(file).subarray(0, 2)).toEqual(GZIP_MAGIC);
    expect(await prepareClusterTemplate()).toBe(false); // there already
  });

  it('a later new cluster, in memory or in a folder, is unpacked from the template', async () => {
    // A template with a marker in it, which only a cluster made from it can have.
    const marked = await PGlite.create();
    await marked.exec('CREATE TABLE made_from_template (id int)');
    const file = clusterTemplateFile();
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, Buffer.from(await (await marked.dumpDataDir('gzip')).arrayBuffer()));
    await marked.close();

    const inMemory = await createCluster(undefined);
    expect(await tables(inMemory)).toEqual(['made_from_template']);
    await inMemory.close();

    const folder = path.join(scratch, 'billing');
    const onDisk = await createCluster(folder);
    await onDisk.exec('CREATE TABLE own (id int)');
    await onDisk.close();
    expect(fs.existsSync(path.join(folder, 'PG_VERSION'))).toBe(true);

    // An existing cluster is opened as it is, never replaced by the template.
    fs.writeFileSync(file, 'not a cluster');
    const reopened = await createCluster(folder);
    expect((await tables(reopened)).sort()).toEqual(['made_from_template', 'own']);
    await reopened.close();
  });

  it('an unreadable template is ignored and replaced: the cluster is made by initdb as before', async () => {
    const file = clusterTemplateFile();
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, 'not a cluster');
    const db = await createCluster(undefined);
    expect((await db.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await db.close();
    expect(fs.readFileSync(file).subarray(0, 2)).toEqual(GZIP_MAGIC);
  });
});
