/**
 * The audio store of queued jobs, one contract for each implementation: the file store under a
 * temp folder, and the S3 store against a real S3-compatible HTTP server (s3rver) started here
 * on a free port of 127.0.0.1 — the @aws-sdk/client-s3 requests, signatures and streaming are the
 * ones a bucket on AWS or MinIO receives.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { newId } from '@murmur/kit';
import { FileAudioStore, type AudioStore } from '../src/jobs/audio-store';
import { S3AudioStore } from '../src/jobs/s3-audio-store';

// s3rver has no types of its own.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const S3rver = require('s3rver') as new (opts: Record<string, unknown>) => { run(): Promise<{ address: string; port: number }>; close(): Promise<void> };

interface Subject {
  store: AudioStore;
  /** Keys stored, as the backend itself lists them (not through the store). */
  close(): Promise<void>;
}

const implementations: Array<[string, () => Promise<Subject>]> = [
  [
    'file',
    async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'murmur-audio-store-'));
      return { store: await FileAudioStore.open(dir), close: () => rm(dir, { recursive: true, force: true }) };
    },
  ],
  [
    's3 (s3rver)',
    async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'murmur-s3rver-'));
      const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, configureBuckets: [{ name: 'murmur-audio' }] });
      const { port } = await server.run();
      const store = new S3AudioStore({
        bucket: 'murmur-audio',
        endpoint: `http://127.0.0.1:${port}`,
        credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      });
      return {
        store,
        async close() {
          store.close();
          await server.close();
          await rm(dir, { recursive: true, force: true });
        },
      };
    },
  ],
];

describe.each(implementations)('the %s audio store', (_name, open) => {
  let subject: Subject;
  let scratch: string;
  beforeEach(async () => {
    subject = await open();
    scratch = await mkdtemp(path.join(os.tmpdir(), 'murmur-audio-scratch-'));
  });
  afterEach(async () => {
    await subject.close();
    await rm(scratch, { recursive: true, force: true });
  });

  async function upload(bytes: Buffer): Promise<string> {
    const file = path.join(scratch, `upload-${randomBytes(4).toString('hex')}`);
    await writeFile(file, bytes);
    return file;
  }

  it('keeps a file under its job id and gives it back byte for byte as a local file', async () => {
    const key = newId('trn');
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    await subject.store.put(key, await upload(bytes));
    const local = await subject.store.localFile(key, scratch);
    expect((await readFile(local)).equals(bytes)).toBe(true);
    const listed = await subject.store.list();
    expect(listed.map((s) => s.key)).toEqual([key]);
    expect(Math.abs(listed[0]!.storedAt.getTime() - Date.now())).toBeLessThan(60_000);
  });

  it('deletes, and deleting what is not there is no error', async () => {
    const a = newId('trn');
    const b = newId('trn');
    await subject.store.put(a, await upload(Buffer.from('a')));
    await subject.store.put(b, await upload(Buffer.from('b')));
    await subject.store.delete(a);
    await subject.store.delete(a);
    expect((await subject.store.list()).map((s) => s.key)).toEqual([b]);
    await expect(subject.store.localFile(a, scratch)).rejects.toThrow();
  });

  it('refuses a key that is not a job id (no path or object name of the caller’s choosing)', async () => {
    const file = await upload(Buffer.from('x'));
    for (const key of ['../etc/passwd', 'trn_../../x', 'rec_0123456789abcdef', '']) {
      await expect(subject.store.put(key, file)).rejects.toThrow(/not an audio key/);
      await expect(subject.store.localFile(key, scratch)).rejects.toThrow(/not an audio key/);
    }
  });
});

describe('the file audio store after a crash', () => {
  it('drops a copy cut short (a .partial file) instead of listing it', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'murmur-audio-store-'));
    try {
      const store = await FileAudioStore.open(dir);
      const key = newId('trn');
      await writeFile(path.join(dir, `${key}.partial`), 'half');
      expect(await store.list()).toEqual([]);
      expect(await readdir(dir)).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
