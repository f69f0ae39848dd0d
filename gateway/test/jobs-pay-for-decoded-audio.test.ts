/**
 * Transcription jobs are paid for by the audio they decode, not by what a file's header claims,
 * and a job never keeps its transcript without its charge (issue #30, items 1, 3 and 5), end to
 * end: POST /api/v1/transcriptions through the gateway, the durable queue, the worker, billing
 * and the library, all real.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { LibraryPort } from '@murmur/transcription';
import { get, startSystem, type TestSystem } from './support/system';

type Json = Record<string, any>;

const SPEECH_WAV = '/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav';

/** WebM (Opus) of `seconds` of silence whose Segment Info states a duration of `statedMs` instead (EBML Duration, 8-byte float). */
function webmClaiming(seconds: number, statedMs: number, dir: string): Buffer {
  const file = path.join(dir, `silence-${seconds}.webm`);
  execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'anullsrc=r=16000:cl=mono', '-t', String(seconds), '-c:a', 'libopus', '-y', file]);
  const data = readFileSync(file);
  const at = data.indexOf(Buffer.from([0x44, 0x89, 0x88]));
  if (at < 0) throw new Error('no 8-byte Duration element in the WebM header');
  data.writeDoubleBE(statedMs, at + 3);
  return data;
}

/** A gate in front of one library call: closed, the call waits until it opens. */
class Gate {
  private armed = false;
  private open!: () => void;
  private opened = Promise.resolve();
  entered = Promise.resolve();
  private enter!: () => void;

  arm(): void {
    this.armed = true;
    this.opened = new Promise((r) => (this.open = r));
    this.entered = new Promise((r) => (this.enter = r));
  }

  async pass(): Promise<void> {
    if (!this.armed) return;
    this.armed = false;
    this.enter();
    await this.opened;
  }

  release(): void {
    this.open?.();
  }
}

describe('transcription jobs pay for the audio they decode', () => {
  let sys: TestSystem;
  let dir: string;
  const gate = new Gate();

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'murmur-jobs-paid-'));
    sys = await startSystem({
      ai: true,
      jobLibrary: (library): LibraryPort => ({
        getFolder: (req, o) => library.getFolder(req, o),
        deleteRecording: (req, o) => library.deleteRecording(req, o),
        createRecording: async (req, o) => {
          await gate.pass();
          return library.createRecording(req, o);
        },
      }),
    });
  });
  afterAll(async () => {
    gate.release();
    await sys?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function submit(key: string, audio: Buffer, filename: string, fields: Record<string, string> = {}) {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    form.append('audio', new Blob([audio]), filename);
    const res = await fetch(`${sys.baseUrl}/api/v1/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    return { status: res.status, body: (await res.json()) as Json };
  }

  async function until(key: string, id: string, done: (job: Json) => boolean): Promise<Json> {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const { body } = await get(sys.baseUrl, `/api/v1/transcriptions/${id}`, key);
      if (done(body as Json)) return body as Json;
      if (Date.now() > deadline) throw new Error(`job ${id} still ${(body as Json).status}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  const ended = (j: Json) => !['queued', 'processing'].includes(j.status);
  const usage = async (key: string) => {
    const u = (await get(sys.baseUrl, '/api/v1/usage', key)).body as Json;
    return { credits_used: u.counters.credits_used, credits_reserved: u.credits.reserved };
  };
  const recordings = async (key: string) => ((await get(sys.baseUrl, '/api/v1/recordings', key)).body as Json).data as Json[];

  it('charges a WebM whose header claims 1 s by the 125 s it decodes to (3 credits, not 1)', async () => {
    const { key } = await sys.newUser('paid-lie@example.com');
    const res = await submit(key, webmClaiming(125, 1_000, dir), 'lie.webm');
    expect(res.status).toBe(202);
    // Held on the header's word at submission …
    expect(res.body).toMatchObject({ credits_reserved: 1 });
    expect(res.body.duration_seconds).toBeCloseTo(1, 1);
    // … charged by what the worker decoded.
    const done = await until(key, res.body.id, ended);
    expect(done).toMatchObject({ status: 'completed', credits_charged: 3, error: null });
    expect(done.duration_seconds).toBeCloseTo(125, 0);
    expect(await usage(key)).toMatchObject({ credits_used: 3, credits_reserved: 0 });
  });

  it('fails a job whose decoded audio runs past what its owner can pay for: insufficient_tokens, nothing charged, nothing saved', async () => {
    const { key, user } = await sys.newUser('paid-short@example.com');
    await sys.admin.billing.adjustCredits({ userId: user.id, monthlyCredits: 2, note: 'two credits' });
    const res = await submit(key, webmClaiming(185, 1_000, dir), 'long.webm', { save: 'true' });
    expect(res.status).toBe(202);
    const done = await until(key, res.body.id, ended);
    expect(done).toMatchObject({ status: 'failed', text: null, recording_id: null, error: { code: 'insufficient_tokens' } });
    expect(await usage(key)).toMatchObject({ credits_used: 0, credits_reserved: 0 });
    expect(await recordings(key)).toEqual([]);
  });

  it('keeps no transcript without its charge when a cancel lands while the job stores its recording', async () => {
    const { key } = await sys.newUser('paid-cancel@example.com');
    gate.arm();
    const res = await submit(key, readFileSync(SPEECH_WAV), 'speech.wav', { save: 'true', language: 'en' });
    expect(res.status).toBe(202);
    // The worker has recognised everything and is storing the recording: cancel now.
    await gate.entered;
    const cancel = fetch(`${sys.baseUrl}/api/v1/transcriptions/${res.body.id}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
    // The cancel waits for the job's end step (the same lock) or, on code without one, answers at once.
    await Promise.race([cancel, new Promise((r) => setTimeout(r, 2_000))]);
    gate.release();
    const answer = await cancel;
    const job = await until(key, res.body.id, ended);
    const saved = await recordings(key);
    const used = (await usage(key)).credits_used;
    // Either the job completed first (charged, recording kept, cancel refused) or the cancel won
    // (nothing charged, nothing kept): never a recording without its charge.
    if (job.status === 'completed') {
      expect(answer.status).toBe(409);
      expect({ used, saved: saved.map((r) => r.id) }).toEqual({ used: job.credits_charged, saved: [job.recording_id] });
    } else {
      expect(job.status).toBe('canceled');
      expect({ used, saved }).toEqual({ used: 0, saved: [] });
    }
    expect(used).toBeGreaterThan(0);
  });
});
