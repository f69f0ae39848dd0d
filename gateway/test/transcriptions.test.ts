/**
 * Transcription jobs end to end: POST /api/v1/transcriptions through the gateway's upload path
 * into the transcription service, the durable queue (pg-boss on the test's database: real
 * Postgres in CI, PGlite otherwise), a worker of the service, billing and the library. The job's
 * transcript must be the synchronous route's; reading, listing, cancel and events as a client
 * sees them; another user's job is not_found everywhere. Where an outcome depends on the job not
 * having finished yet, the job is held in the engine (engine-gate.ts) rather than raced. Jobs
 * whose transcript is not compared or rendered are a one-second recording.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MAX_WATCHERS_PER_USER, type MurmurError } from '@murmur/contract';
import { newRequestId, runWithContext } from '@murmur/kit';
import { transcription } from '@murmur/proto';
import { EngineGate } from './support/engine-gate';
import { recordedLog } from './support/log-lines';
import { get, startSystem, type TestSystem } from './support/system';

type Json = Record<string, any>;

/** A LibriVox sentence (7 s): for the jobs whose transcript is compared or rendered. */
const WAV = '/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav';
/** A card reader's "ten of clubs" (1 s, recognised in a third of the sentence's time): for every other job. */
const SHORT = '/usr/share/pocketsphinx/test/data/cards/001.wav';

describe('transcription jobs', () => {
  let sys: TestSystem;
  /** Holds every recognition while closed: a job then runs but cannot finish. */
  const gate = new EngineGate();
  /** The system's log lines (the worker announces a job it stopped). */
  const recorded = recordedLog('jobs-test');
  const audio = readFileSync(WAV);
  const short = readFileSync(SHORT);
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'murmur-jobs-'));
  /** The short recording padded with silence to 13 s: 416 KB, past the 380 KB at which fields after the file were once dropped. */
  let padded: Buffer;

  beforeAll(async () => {
    sys = await startSystem({ ai: true, engine: (engine) => gate.wrap(engine), log: recorded.log });
    const file = path.join(tmp, 'padded.wav');
    execFileSync('ffmpeg', ['-v', 'error', '-i', SHORT, '-af', 'apad=whole_dur=13', '-ar', '16000', '-ac', '1', '-c:a', 'pcm_s16le', '-y', file]);
    padded = readFileSync(file);
  });
  afterAll(async () => {
    await sys.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  /** POST /transcriptions with `fields` after the file part (as `curl -F audio=@x -F save=true` sends them). */
  async function uploadThenFields(key: string, file: Buffer, fields: Record<string, string>) {
    const form = new FormData();
    form.append('audio', new Blob([file], { type: 'audio/wav' }), 'speech.wav');
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    const res = await fetch(`${sys.baseUrl}/api/v1/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    return { status: res.status, body: (await res.json()) as Json };
  }

  async function upload(path: string, key: string, fields: Record<string, string> = {}, headers: Record<string, string> = {}, file = short) {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    form.append('audio', new Blob([file], { type: 'audio/wav' }), 'speech.wav');
    const res = await fetch(`${sys.baseUrl}/api/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, ...headers }, body: form });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Json };
  }

  const call = async (method: string, path: string, key: string) => {
    const res = await fetch(`${sys.baseUrl}/api/v1${path}`, { method, headers: { authorization: `Bearer ${key}` } });
    const text = await res.text();
    let body: Json;
    try {
      body = JSON.parse(text) as Json;
    } catch {
      body = { raw: text };
    }
    return { status: res.status, headers: res.headers, body, text };
  };

  const usage = async (key: string) => (await get(sys.baseUrl, '/api/v1/usage', key)).body as Json;

  async function until(key: string, id: string, done: (job: Json) => boolean, timeoutMs = 120_000): Promise<Json> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { body } = await call('GET', `/transcriptions/${id}`, key);
      if (done(body)) return body;
      if (Date.now() > deadline) throw new Error(`job ${id} still ${body.status}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it('queues an upload (202, Location), completes it with the synchronous transcript, charges once and deletes the audio', async () => {
    const { key } = await sys.newUser('j-basic@example.com');
    const sync = await upload('/transcribe', key, { language: 'en' }, {}, audio);
    expect(sync.status).toBe(200);

    const res = await upload('/transcriptions', key, { language: 'en' }, {}, audio);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ object: 'transcription', status: 'queued', progress: 0, text: null, error: null, credits_reserved: 1 });
    expect(res.body.id).toMatch(/^trn_/);
    expect(res.headers.get('location')).toBe(`/api/v1/transcriptions/${res.body.id}`);
    expect(res.body.duration_seconds).toBeCloseTo(sync.body.duration_seconds, 1);

    const done = await until(key, res.body.id, (j) => j.status === 'completed');
    expect(done).toMatchObject({ progress: 1, language: 'en', credits_charged: 1, recording_id: null, error: null });
    expect(done.text).toBe(sync.body.text);
    expect(done.segments).toEqual(sync.body.segments);
    expect(done.model).toBe(sync.body.model);
    expect(done.processed_seconds).toBe(done.duration_seconds);
    expect(new Date(done.finished_at).getTime()).toBeGreaterThanOrEqual(new Date(done.started_at).getTime());

    const u = await usage(key);
    expect(u.credits.monthly_remaining).toBe(98);
    expect(u.counters.transcriptions).toBe(2);
    expect(readdirSync(sys.audioDir)).toEqual([]);
  });

  it('renders a completed job as text, SRT and VTT, and refuses a format before completion', async () => {
    const { key } = await sys.newUser('j-formats@example.com');
    // Held in the engine, the job cannot have finished: its transcript is not ready.
    gate.close();
    let body: Json;
    try {
      ({ body } = await upload('/transcriptions', key, {}, {}, audio));
      const early = await call('GET', `/transcriptions/${body.id}?response_format=srt`, key);
      expect([early.status, early.body.error?.code]).toEqual([409, 'transcription_not_ready']);
    } finally {
      gate.open();
    }
    const done = await until(key, body.id, (j) => j.status === 'completed');
    const text = await call('GET', `/transcriptions/${body.id}?response_format=text`, key);
    expect(text.status).toBe(200);
    expect(text.text).toBe(done.text);
    const srt = await call('GET', `/transcriptions/${body.id}?response_format=srt`, key);
    expect(srt.headers.get('content-type')).toBe('application/x-subrip; charset=utf-8');
    expect(srt.text).toMatch(/^1\n\d{2}:\d{2}:\d{2},\d{3} --> /);
    const vtt = await call('GET', `/transcriptions/${body.id}?response_format=vtt`, key);
    expect(vtt.text).toMatch(/^WEBVTT\n\n/);
  });

  it('saves the transcript as a recording when asked', async () => {
    const { key } = await sys.newUser('j-save@example.com');
    const { body } = await upload('/transcriptions', key, { save: 'true', title: 'Job reading' });
    const done = await until(key, body.id, (j) => j.status === 'completed');
    expect(done.recording_id).toMatch(/^rec_/);
    const rec = await call('GET', `/recordings/${done.recording_id}`, key);
    expect(rec.body).toMatchObject({ title: 'Job reading' });
    expect(rec.body.transcript.text).toBe(done.text);
  });

  it('applies save and title sent after a file of 380 KB or more: the recording is saved with that title', async () => {
    const { key } = await sys.newUser('j-late@example.com');
    expect(padded.length).toBeGreaterThan(380 * 1024);
    const { status, body } = await uploadThenFields(key, padded, { save: 'true', title: 'Late title' });
    expect(status).toBe(202);
    const done = await until(key, body.id, (j) => j.status === 'completed');
    expect(done.recording_id).toMatch(/^rec_/);
    expect((await call('GET', `/recordings/${done.recording_id}`, key)).body).toMatchObject({ title: 'Late title' });
    // A title after the file without save is refused (as before the file), nothing queued or charged.
    const bad = await uploadThenFields(key, padded, { title: 'No save' });
    expect([bad.status, bad.body.error?.code, bad.body.error?.param]).toEqual([400, 'invalid_request', 'title']);
    expect((await call('GET', '/transcriptions', key)).body.data).toHaveLength(1);
    expect((await usage(key)).credits).toMatchObject({ monthly_remaining: 100 - done.credits_charged, reserved: 0 });
  });

  it('refuses a webhook_url after the file while the user has no signing secret: 400 naming Settings → Developer, nothing stored, held or charged', async () => {
    const { key } = await sys.newUser('j-late-hook@example.com');
    const res = await uploadThenFields(key, padded, { webhook_url: 'https://hooks.example.com/murmur' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_request', param: 'webhook_url' });
    expect(res.body.error.message).toMatch(/signing secret in Settings → Developer/);
    expect((await call('GET', '/transcriptions', key)).body.data).toEqual([]);
    expect((await usage(key)).credits).toMatchObject({ monthly_remaining: 100, reserved: 0 });
    expect(readdirSync(sys.audioDir)).toEqual([]);
  });

  it('refuses an http:// webhook endpoint (before or after the file, and as the default endpoint): https only', async () => {
    const { key, user } = await sys.newUser('j-http-hook@example.com');
    await sys.admin.transcription.rotateWebhookSecret({ userId: user.id });
    for (const res of [await upload('/transcriptions', key, { webhook_url: 'http://hooks.example.com/murmur' }), await uploadThenFields(key, audio, { webhook_url: 'http://hooks.example.com/murmur' })]) {
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_request', param: 'webhook_url' });
      expect(res.body.error.message).toMatch(/https/);
    }
    await expect(sys.admin.transcription.setWebhookEndpoint({ userId: user.id, url: 'http://hooks.example.com/murmur' })).rejects.toMatchObject({ code: 'invalid_request', param: 'url' });
    expect((await call('GET', '/transcriptions', key)).body.data).toEqual([]);
    expect((await usage(key)).credits).toMatchObject({ monthly_remaining: 100, reserved: 0 });
  });

  it(`caps a user at ${MAX_WATCHERS_PER_USER} open event streams: one more is 429 rate_limit_exceeded with Retry-After, and a closed one frees its slot`, async () => {
    const { key } = await sys.newUser('j-watchers@example.com');
    const other = await sys.newUser('j-watchers-other@example.com');
    // Held in the engine, the job stays live for as long as the streams below take to open (and
    // no recognition runs on while they do: a long file would keep both cores busy until the cancel).
    gate.close();
    try {
      const job = (await upload('/transcriptions', key)).body;
      const open = async (k: string) => {
        const controller = new AbortController();
        const res = await fetch(`${sys.baseUrl}/api/v1/transcriptions/${job.id}/events`, { headers: { authorization: `Bearer ${k}` }, signal: controller.signal });
        return { res, close: () => controller.abort() };
      };
      const streams = [];
      for (let i = 0; i < MAX_WATCHERS_PER_USER; i++) {
        const s = await open(key);
        expect(s.res.status).toBe(200);
        streams.push(s);
      }
      const over = await open(key);
      expect(over.res.status).toBe(429);
      expect(Number(over.res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(((await over.res.json()) as Json).error).toMatchObject({ code: 'rate_limit_exceeded', type: 'rate_limit_error' });
      // Someone else's cap is their own (their request for this job is simply not_found).
      expect((await open(other.key)).res.status).toBe(404);
      // A closed stream gives its slot back.
      streams.pop()!.close();
      let again: Awaited<ReturnType<typeof open>> | undefined;
      for (let tries = 0; tries < 100 && again?.res.status !== 200; tries++) {
        again?.close();
        if (tries > 0) await new Promise((r) => setTimeout(r, 50));
        again = await open(key);
      }
      expect(again!.res.status).toBe(200);
      streams.push(again!);
      expect((await call('POST', `/transcriptions/${job.id}/cancel`, key)).status).toBe(200);
      for (const s of streams) s.close();
    } finally {
      gate.open();
    }
  });

  it('streams progress as Server-Sent Events until the job ends, and a finished job gets one final event', async () => {
    const { key } = await sys.newUser('j-events@example.com');
    const { body } = await upload('/transcriptions', key, {}, {}, audio);
    const events = await call('GET', `/transcriptions/${body.id}/events`, key);
    expect(events.status).toBe(200);
    expect(events.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const parsed = events.text
      .split('\n\n')
      .filter((block) => block.startsWith('id:'))
      .map((block) => ({ event: /event: (\w+)/.exec(block)![1], data: JSON.parse(/data: (.*)/.exec(block)![1]!) as Json }));
    expect(parsed.length).toBeGreaterThanOrEqual(1);
    expect(parsed[parsed.length - 1]!.event).toBe('completed');
    expect(parsed[parsed.length - 1]!.data.text.length).toBeGreaterThan(10);
    const progress = parsed.map((p) => p.data.progress as number);
    expect([...progress].sort((a, b) => a - b)).toEqual(progress);

    const again = await call('GET', `/transcriptions/${body.id}/events`, key);
    const blocks = again.text.split('\n\n').filter((b) => b.startsWith('id:'));
    expect(blocks).toHaveLength(1);
    expect(blocks[0]).toContain('event: completed');
  });

  it('lists the owner’s jobs newest first with a status filter and cursors', async () => {
    const { key } = await sys.newUser('j-list@example.com');
    const a = (await upload('/transcriptions', key)).body;
    const b = (await upload('/transcriptions', key)).body;
    await until(key, a.id, (j) => j.status === 'completed');
    await until(key, b.id, (j) => j.status === 'completed');
    const page1 = await call('GET', '/transcriptions?limit=1', key);
    expect(page1.body).toMatchObject({ object: 'list', has_more: true });
    expect(page1.body.data.map((j: Json) => j.id)).toEqual([b.id]);
    const page2 = await call('GET', `/transcriptions?limit=1&cursor=${encodeURIComponent(page1.body.next_cursor)}`, key);
    expect(page2.body.data.map((j: Json) => j.id)).toEqual([a.id]);
    expect((await call('GET', '/transcriptions?status=completed', key)).body.data).toHaveLength(2);
    expect((await call('GET', '/transcriptions?status=queued', key)).body.data).toHaveLength(0);
    const bad = await call('GET', '/transcriptions?status=done', key);
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('status');
  });

  it('pages jobs created within one millisecond without losing one between pages', async () => {
    const { key } = await sys.newUser('j-same-ms@example.com');
    const a = (await upload('/transcriptions', key)).body;
    const b = (await upload('/transcriptions', key)).body;
    await until(key, a.id, (j) => j.status === 'completed');
    await until(key, b.id, (j) => j.status === 'completed');
    // Microseconds apart inside one millisecond: a cursor (milliseconds) must still walk both.
    await sys.transcriptionDb!.query(`UPDATE jobs SET created_at = $2 WHERE id = $1`, [a.id, '2026-01-01T00:00:00.000300Z']);
    await sys.transcriptionDb!.query(`UPDATE jobs SET created_at = $2 WHERE id = $1`, [b.id, '2026-01-01T00:00:00.000400Z']);
    const page1 = await call('GET', '/transcriptions?limit=1', key);
    const page2 = await call('GET', `/transcriptions?limit=1&cursor=${encodeURIComponent(page1.body.next_cursor)}`, key);
    expect([...page1.body.data, ...page2.body.data].map((j: Json) => j.id).sort()).toEqual([a.id, b.id].sort());
  });

  it('cancels a running job with its credits returned, and the worker stops; a finished job is 409 transcription_not_cancelable', async () => {
    const { key } = await sys.newUser('j-cancel@example.com');
    // A running job: taken by a worker, held in the engine so it cannot finish.
    gate.close();
    let running: Json;
    try {
      running = (await upload('/transcriptions', key)).body;
      await until(key, running.id, (j) => j.status === 'processing');
      const canceled = await call('POST', `/transcriptions/${running.id}/cancel`, key);
      expect(canceled.status).toBe(200);
      expect(canceled.body).toMatchObject({ status: 'canceled', text: null });
      expect((await usage(key)).credits.monthly_remaining).toBe(100);
      const again = await call('POST', `/transcriptions/${running.id}/cancel`, key);
      expect([again.status, again.body.error?.code]).toEqual([409, 'transcription_not_cancelable']);
    } finally {
      gate.open();
    }
    // The worker that held it stops (it says so), and the job stays canceled, nothing charged.
    await recorded.line((l) => l.msg === 'transcription job stopped: canceled' && l.job_id === running.id);
    expect((await call('GET', `/transcriptions/${running.id}`, key)).body.status).toBe('canceled');
    expect((await usage(key)).credits.monthly_remaining).toBe(100);
    expect(readdirSync(sys.audioDir)).toEqual([]);

    const { body: finished } = await upload('/transcriptions', key);
    await until(key, finished.id, (j) => j.status === 'completed');
    const late = await call('POST', `/transcriptions/${finished.id}/cancel`, key);
    expect([late.status, late.body.error?.code]).toEqual([409, 'transcription_not_cancelable']);
    expect((await call('GET', `/transcriptions/${finished.id}`, key)).body.status).toBe('completed');
    expect(readdirSync(sys.audioDir)).toEqual([]);
  });

  it('keeps every job its owner’s: another user gets not_found for get, events and cancel, and never sees it listed', async () => {
    const owner = await sys.newUser('j-owner@example.com');
    const other = await sys.newUser('j-other@example.com');
    const { body } = await upload('/transcriptions', owner.key);
    for (const [method, path] of [
      ['GET', `/transcriptions/${body.id}`],
      ['GET', `/transcriptions/${body.id}/events`],
      ['POST', `/transcriptions/${body.id}/cancel`],
    ] as const) {
      const res = await call(method, path, other.key);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    expect((await call('GET', '/transcriptions', other.key)).body.data).toEqual([]);
    await until(owner.key, body.id, (j) => j.status === 'completed');
  });

  it('refuses at submission what the synchronous route refuses, with nothing queued or charged', async () => {
    const { key } = await sys.newUser('j-refuse@example.com');
    const form = new FormData();
    form.append('audio', new Blob([Buffer.from('this is not audio at all')], { type: 'audio/wav' }), 'junk.wav');
    const junk = await fetch(`${sys.baseUrl}/api/v1/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    expect(junk.status).toBe(415);
    expect(((await junk.json()) as Json).error.code).toBe('unsupported_audio');
    const format = await upload('/transcriptions', key, { response_format: 'srt' });
    expect(format.status).toBe(400);
    expect(format.body.error.param).toBe('response_format');
    const folder = await upload('/transcriptions', key, { save: 'true', folder_id: 'fld_doesnotexist000' });
    expect(folder.status).toBe(404);
    expect((await call('GET', '/transcriptions', key)).body.data).toEqual([]);
    expect((await usage(key)).credits.monthly_remaining).toBe(100);
    expect(readdirSync(sys.audioDir)).toEqual([]);
  });

  it('over gRPC too (as the gateway calls it), a folder that is not the caller’s is not_found before anything is stored or charged', async () => {
    const owner = await sys.newUser('j-grpc-owner@example.com');
    const other = await sys.newUser('j-grpc-other@example.com');
    const { folder } = await sys.admin.library.createFolder({ ownerId: owner.user.id, name: 'Mine', createdAt: undefined });
    const outcome = await runWithContext({ requestId: newRequestId(), principal: { userId: other.user.id, keyId: other.keyId } }, async () => {
      const { stream, response } = sys.clients.transcription.submitTranscription();
      stream.write({
        payload: {
          $case: 'config',
          value: transcription.SubmitTranscriptionConfig.fromPartial({ userId: other.user.id, save: true, folderId: folder!.id }),
        },
      });
      stream.write({ payload: { $case: 'audioChunk', value: audio } });
      stream.end();
      return response.then(
        () => 'accepted',
        (err: unknown) => (err as MurmurError).code,
      );
    });
    expect(outcome).toBe('not_found');
    expect((await call('GET', '/transcriptions', other.key)).body.data).toEqual([]);
    expect((await usage(other.key)).credits.monthly_remaining).toBe(100);
    expect(readdirSync(sys.audioDir)).toEqual([]);
  });

  it('over gRPC, a hostile idempotency key is invalid_request and a hostile file name only a hint: never a 500', async () => {
    const { user } = await sys.newUser('j-grpc-hostile@example.com');
    const submit = (config: Partial<transcription.SubmitTranscriptionConfig>) =>
      runWithContext({ requestId: newRequestId(), principal: { userId: user.id, keyId: 'key_test' } }, async () => {
        const { stream, response } = sys.clients.transcription.submitTranscription();
        stream.write({ payload: { $case: 'config', value: transcription.SubmitTranscriptionConfig.fromPartial({ userId: user.id, ...config }) } });
        stream.write({ payload: { $case: 'audioChunk', value: short } });
        stream.end();
        return response.then(
          (r) => r.job!.status,
          (err: unknown) => `${(err as MurmurError).code}:${(err as MurmurError).param}`,
        );
      });
    expect(await submit({ idempotencyKey: 'a\u0000b' })).toBe('invalid_request:idempotency_key');
    expect(await submit({ idempotencyKey: 'x'.repeat(256) })).toBe('invalid_request:idempotency_key');
    expect(await submit({ filename: 'a\u0000b.wav', contentType: 'audio/wav\u0000' })).toBe(transcription.JobStatus.JOB_STATUS_QUEUED);
  });

  it('over gRPC (no gateway record), a repeated idempotency key answers its job only for the same audio and options (issue #30)', async () => {
    const { user } = await sys.newUser('j-grpc-same-key@example.com');
    const submit = (config: Partial<transcription.SubmitTranscriptionConfig>, bytes: Buffer = short) =>
      runWithContext({ requestId: newRequestId(), principal: { userId: user.id, keyId: 'key_test' } }, async () => {
        const { stream, response } = sys.clients.transcription.submitTranscription();
        stream.write({ payload: { $case: 'config', value: transcription.SubmitTranscriptionConfig.fromPartial({ userId: user.id, idempotencyKey: 'same-key-1', ...config }) } });
        stream.write({ payload: { $case: 'audioChunk', value: bytes } });
        stream.end();
        return response.then(
          (r) => r.job!.id,
          (err: unknown) => `${(err as MurmurError).code}:${(err as MurmurError).param}`,
        );
      });
    const first = await submit({});
    expect(first).toMatch(/^trn_/);
    expect(await submit({})).toBe(first);
    expect(await submit({}, short.subarray(0, short.length - 3200))).toBe('idempotency_conflict:idempotency_key');
    expect(await submit({ language: 'en' })).toBe('idempotency_conflict:idempotency_key');
    const jobs = (await sys.admin.transcription.listTranscriptions(transcription.ListTranscriptionsRequest.fromPartial({ ownerId: user.id, limit: 10 }))).jobs;
    expect(jobs.map((j) => j.id)).toEqual([first]);
  });

  it('over gRPC, late_options closes the stream: its values replace the config’s; audio after it is invalid_request', async () => {
    const { user, key } = await sys.newUser('j-grpc-late@example.com');
    type Message = transcription.SubmitTranscriptionRequest;
    const send = (messages: Message[]) =>
      runWithContext({ requestId: newRequestId(), principal: { userId: user.id, keyId: 'key_test' } }, async () => {
        const { stream, response } = sys.clients.transcription.submitTranscription();
        for (const m of messages) stream.write(m);
        stream.end();
        return response.then(
          (r) => r.job!.id,
          (err: unknown) => `${(err as MurmurError).code}:${(err as MurmurError).param}`,
        );
      });
    const config: Message = { payload: { $case: 'config', value: transcription.SubmitTranscriptionConfig.fromPartial({ userId: user.id, title: 'Early' }) } };
    const chunk: Message = { payload: { $case: 'audioChunk', value: short } };
    const late: Message = { payload: { $case: 'lateOptions', value: { save: true, title: 'Late', folderId: '', webhookUrl: '', timeline: undefined } } };
    expect(await send([config, chunk, late, chunk])).toBe('invalid_request:late_options');
    // A title without save in the config is fine while late options may still bring save.
    const id = await send([config, chunk, late]);
    const done = await until(key, id, (j) => j.status === 'completed');
    expect((await call('GET', `/recordings/${done.recording_id}`, key)).body).toMatchObject({ title: 'Late' });
  });

  it('answers the same job for a repeated Idempotency-Key', async () => {
    const { key } = await sys.newUser('j-idem@example.com');
    const first = await upload('/transcriptions', key, {}, { 'idempotency-key': 'job-1' });
    const second = await upload('/transcriptions', key, {}, { 'idempotency-key': 'job-1' });
    expect(second.status).toBe(202);
    expect(second.body.id).toBe(first.body.id);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    await until(key, first.body.id, (j) => j.status === 'completed');
    expect((await call('GET', '/transcriptions', key)).body.data).toHaveLength(1);
    expect((await usage(key)).credits.monthly_remaining).toBe(99);
  });
});
