/**
 * A transcription job whose audio waits in an S3-compatible bucket (MURMUR_AUDIO_STORE=s3): a
 * real S3 HTTP server (s3rver) started here on 127.0.0.1, the whole system in-process. The job
 * completes with the synchronous transcript and its object is deleted; a canceled job's too.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { S3AudioStore } from '@murmur/transcription';
import { get, startSystem, type TestSystem } from './support/system';

// s3rver has no types of its own.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const S3rver = require('s3rver') as new (opts: Record<string, unknown>) => { run(): Promise<{ port: number }>; close(): Promise<void> };

type Json = Record<string, any>;
const WAV = '/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav';

describe('transcription jobs with the S3 audio store', () => {
  let sys: TestSystem;
  let server: InstanceType<typeof S3rver>;
  let dir: string;
  let store: S3AudioStore;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'murmur-s3rver-'));
    server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, configureBuckets: [{ name: 'jobs' }] });
    const { port } = await server.run();
    store = new S3AudioStore({ bucket: 'jobs', endpoint: `http://127.0.0.1:${port}`, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
    sys = await startSystem({ ai: true, jobs: { audio: store } });
  });
  afterAll(async () => {
    await sys?.stop();
    store?.close();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function submit(key: string): Promise<Json> {
    const form = new FormData();
    form.append('audio', new Blob([await readFile(WAV)], { type: 'audio/wav' }), 'speech.wav');
    const res = await fetch(`${sys.baseUrl}/api/v1/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    expect(res.status).toBe(202);
    return (await res.json()) as Json;
  }

  it('runs a job from the bucket to completion, then deletes its object', async () => {
    const { key } = await sys.newUser('s3-job@example.com');
    const form = new FormData();
    form.append('audio', new Blob([await readFile(WAV)], { type: 'audio/wav' }), 'speech.wav');
    const sync = (await (await fetch(`${sys.baseUrl}/api/v1/transcribe`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form })).json()) as Json;
    const queued = await submit(key);
    let job: Json = queued;
    while (!['completed', 'failed', 'canceled'].includes(job.status)) {
      await new Promise((r) => setTimeout(r, 200));
      job = (await get(sys.baseUrl, `/api/v1/transcriptions/${queued.id}`, key)).body as Json;
    }
    expect(job).toMatchObject({ status: 'completed', credits_charged: 1 });
    expect(job.text).toBe(sync.text);
    expect(await store.list()).toEqual([]);
  });

  it('deletes a canceled job’s object', async () => {
    const { key } = await sys.newUser('s3-cancel@example.com');
    const queued = await submit(key);
    const res = await fetch(`${sys.baseUrl}/api/v1/transcriptions/${queued.id}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
    expect([200, 409]).toContain(res.status);
    // A job that completed first deletes its object too.
    for (let i = 0; i < 100 && (await store.list()).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await store.list()).toEqual([]);
  });
});
