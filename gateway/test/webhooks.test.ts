/**
 * Webhooks of transcription jobs end to end: the whole system with a real worker, and a receiver
 * on loopback (allowed for 127.0.0.1 only; every other outbound rule as in production) whose
 * deliveries are verified by the `standardwebhooks` package — an implementation independent of
 * ours. Completed events with the job as GET shows it; a receiver failing three times gets the
 * same webhook-id four times and one success; a rotated secret and the one before both verify
 * for 24 h; the default endpoint; canceled and failed jobs' events; a round that runs out ends `failed` and the retry route starts
 * another; refusals at submission charge nothing. Server-side request forgery at delivery: host
 * names are resolved by a resolver the test controls, and a name that answers a refused address
 * at an attempt is refused then (a trap listens there); a 3xx is never followed. The retry waits
 * are shortened for the test (the production schedule is checked in webhook-schedule.test.ts).
 * The job to cancel is held in the engine (engine-gate.ts) rather than raced with a long file, and
 * jobs whose transcript nobody reads are a one-second recording.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { WEBHOOK_RETRY_LIMIT } from '@murmur/contract';
import { DEFAULT_OUTBOUND_POLICY } from '@murmur/kit';
import { EngineGate } from './support/engine-gate';
import { get, startSystem, type TestSystem } from './support/system';

type Json = Record<string, any>;

/** A LibriVox sentence (7 s): for the events whose transcript and words are looked at. */
const WAV = '/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav';
/** A card reader's "ten of clubs" (1 s, recognised in a third of the sentence's time): for every other job. */
const SHORT = '/usr/share/pocketsphinx/test/data/cards/001.wav';

interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}

describe('webhooks', () => {
  let sys: TestSystem;
  /** Holds recognitions while closed: a job then stays live until it is canceled. */
  const gate = new EngineGate();
  let receiver: http.Server;
  let base = '';
  const received: Received[] = [];
  /** Answers by path: how many times each path has failed so far. */
  const failures = new Map<string, number>();
  let downUntilRetry = true;
  /** What each host name resolves to at this moment (the delivery's DNS); any other name does not resolve. */
  const names = new Map<string, string>();
  /** A listener on 127.0.0.2 (loopback, outside the allowed 127.0.0.1/32), on the receiver's port: what a refused address would have received. */
  let trap: http.Server;
  const trapped: string[] = [];
  let port = 0;
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'murmur-hooks-'));

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const path = req.url!;
        received.push({ path, headers: req.headers as Record<string, string>, body });
        const failed = failures.get(path) ?? 0;
        if (path.startsWith('/flaky') && failed < 3) {
          failures.set(path, failed + 1);
          return void res.writeHead(500).end('not yet');
        }
        if (path.startsWith('/down') && downUntilRetry) return void res.writeHead(503).end();
        if (path === '/redirect') return void res.writeHead(302, { location: `${base}/landed` }).end();
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    port = (receiver.address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}`;
    trap = http.createServer((req, res) => {
      trapped.push(req.url!);
      res.writeHead(204).end();
    });
    await new Promise<void>((resolve) => trap.listen(port, '127.0.0.2', resolve));
    sys = await startSystem({
      ai: true,
      engine: (engine) => gate.wrap(engine),
      // The receiver is plain http on loopback: allowed here as an operator allows it for local development (MURMUR_WEBHOOK_ALLOW_HTTP).
      jobs: {
        webhooks: {
          policy: { ...DEFAULT_OUTBOUND_POLICY, allowCidrs: ['127.0.0.1/32'], ports: [80, 443, port] },
          allowHttp: true,
          // The first retry waits (a queue entry due later is picked up then); the rest are due at
          // once, as a first attempt is, instead of each waiting out the queue's half-second poll.
          retrySeconds: [0.2, 0, 0, 0, 0, 0, 0],
          resolve: async (host) => {
            const address = names.get(host);
            if (!address) throw Object.assign(new Error(`${host} does not resolve`), { code: 'ENOTFOUND' });
            return [{ address, family: 4 }];
          },
        },
      },
    });
  });
  afterAll(async () => {
    await sys.stop();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
    await new Promise<void>((resolve) => trap.close(() => resolve()));
    rmSync(tmp, { recursive: true, force: true });
  });

  async function submit(key: string, fields: Record<string, string>, path = '/transcriptions', file = SHORT) {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    form.append('audio', new Blob([readFileSync(file)], { type: 'audio/wav' }), 'speech.wav');
    const res = await fetch(`${sys.baseUrl}/api/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    return { status: res.status, body: (await res.json()) as Json };
  }
  async function until(key: string, id: string, done: (job: Json) => boolean): Promise<Json> {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const { body } = await get(sys.baseUrl, `/api/v1/transcriptions/${id}`, key);
      if (done(body)) return body;
      if (Date.now() > deadline) throw new Error(`job ${id}: ${JSON.stringify(body.webhook)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const usage = async (key: string) => (await get(sys.baseUrl, '/api/v1/usage', key)).body as Json;
  const deliveriesTo = (path: string) => received.filter((r) => r.path === path);

  it('refuses a webhook before the user has a signing secret, on /transcribe, and to a non-public address, charging nothing', async () => {
    const { key, user } = await sys.newUser('hook-refused@example.com');
    const noSecret = await submit(key, { webhook_url: `${base}/ok` });
    expect(noSecret.status).toBe(400);
    expect(noSecret.body.error).toMatchObject({ code: 'invalid_request', param: 'webhook_url' });
    expect(noSecret.body.error.message).toMatch(/Settings → Developer/);
    await sys.admin.transcription.rotateWebhookSecret({ userId: user.id });
    const sync = await submit(key, { webhook_url: `${base}/ok` }, '/transcribe');
    expect(sync.status).toBe(400);
    expect(sync.body.error.param).toBe('webhook_url');
    for (const url of ['http://169.254.169.254/hook', 'http://[::1]/hook', 'ftp://example.com/hook', `http://example.com:8080/hook`, 'not a url']) {
      const res = await submit(key, { webhook_url: url });
      expect([url, res.status, res.body.error?.code]).toEqual([url, 400, 'invalid_request']);
    }
    expect((await usage(key)).credits).toMatchObject({ monthly_remaining: 100, reserved: 0 });
    expect(received).toEqual([]);
  });

  it('delivers transcription.completed with the job as GET shows it, signed so standardwebhooks verifies it', async () => {
    const { key, user } = await sys.newUser('hook-completed@example.com');
    const { secret } = await sys.admin.transcription.rotateWebhookSecret({ userId: user.id });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
    const { status, body } = await submit(key, { webhook_url: `${base}/ok-completed` }, '/transcriptions', WAV);
    expect(status).toBe(202);
    expect(body.webhook_url).toBe(`${base}/ok-completed`);
    const job = await until(key, body.id, (j) => j.webhook?.state === 'delivered');
    expect(job.webhook).toMatchObject({ event: 'transcription.completed', attempts: 1, last_status_code: 204, last_error: null, next_attempt_at: null });
    expect(job.webhook.id).toMatch(/^msg_/);

    const [delivery] = deliveriesTo('/ok-completed');
    expect(delivery!.headers['webhook-id']).toBe(job.webhook.id);
    expect(delivery!.headers['content-type']).toBe('application/json');
    const event = new Webhook(secret).verify(delivery!.body, delivery!.headers) as Json;
    const { webhook: _state, ...shown } = job;
    expect(event).toEqual({ type: 'transcription.completed', timestamp: job.finished_at, data: shown });
    // Tampered bodies and other secrets do not verify.
    expect(() => new Webhook(secret).verify(delivery!.body.replace('completed', 'failed'), delivery!.headers)).toThrow();
    const other = (await sys.admin.transcription.rotateWebhookSecret({ userId: (await sys.newUser('hook-other@example.com')).user.id })).secret;
    expect(() => new Webhook(other).verify(delivery!.body, delivery!.headers)).toThrow();
  });

  it('puts the words in the event of a job submitted with `words: true`, as GET ?words=true shows them', async () => {
    const { key, user } = await sys.newUser('hook-words@example.com');
    const { secret } = await sys.admin.transcription.rotateWebhookSecret({ userId: user.id });
    const { body } = await submit(key, { webhook_url: `${base}/ok-words`, words: 'true' }, '/transcriptions', WAV);
    await until(key, body.id, (j) => j.webhook?.state === 'delivered');
    const withWords = (await get(sys.baseUrl, `/api/v1/transcriptions/${body.id}?words=true`, key)).body as Json;
    const event = new Webhook(secret).verify(deliveriesTo('/ok-words')[0]!.body, deliveriesTo('/ok-words')[0]!.headers) as Json;
    expect(event.data.words.length).toBeGreaterThan(5);
    expect(event.data.words).toEqual(withWords.words);
    // Without `words` the event is the job as GET shows it, without words (the test before this one).
  });

  it('retries a receiver that fails three times: four attempts, the same webhook-id, one success', async () => {
    const { key, user } = await sys.newUser('hook-flaky@example.com');
    const { secret } = await sys.admin.transcription.rotateWebhookSecret({ userId: user.id });
    const { body } = await submit(key, { webhook_url: `${base}/flaky-1` });
    const job = await until(key, body.id, (j) => j.webhook?.state === 'delivered');
    expect(job.webhook).toMatchObject({ attempts: 4, last_status_code: 204, state: 'delivered' });
    const attempts = deliveriesTo('/flaky-1');
    expect(attempts).toHaveLength(4);
    expect(new Set(attempts.map((a) => a.headers['webhook-id']))).toEqual(new Set([job.webhook.id]));
    for (const a of attempts) expect(new Webhook(secret).verify(a.body, a.headers)).toMatchObject({ type: 'transcription.completed' });
    // Held long enough that a fifth would have come.
    await new Promise((r) => setTimeout(r, 1500));
    expect(deliveriesTo('/flaky-1')).toHaveLength(4);
  });

  it('signs with the new secret and, for 24 h after a rotation, the previous one too', async () => {
    const { key, user } = await sys.newUser('hook-rotate@example.com');
    const first = (await sys.admin.transcription.rotateWebhookSecret({ userId: user.id })).secret;
    const rotated = await sys.admin.transcription.rotateWebhookSecret({ userId: user.id });
    expect(rotated.secret).not.toBe(first);
    const until24h = rotated.settings!.previousValidUntil!.getTime() - Date.now();
    expect(until24h).toBeGreaterThan(23.9 * 3600_000);
    expect(until24h).toBeLessThanOrEqual(24 * 3600_000);
    const { settings } = await sys.admin.transcription.getWebhookSettings({ userId: user.id });
    expect(settings).toMatchObject({ hasSecret: true, secretHint: `…${rotated.secret.slice(-4)}` });
    // At rest both are sealed (AES-256-GCM under the operator's key): the table holds neither in any form.
    const rows = await sys.transcriptionDb!.query<{ secret: string; previous_secret: string }>(`SELECT secret, previous_secret FROM webhook_settings WHERE owner_id = $1`, [user.id]);
    expect(rows).toHaveLength(1);
    for (const stored of [rows[0]!.secret, rows[0]!.previous_secret]) {
      expect(stored).toMatch(/^v1:test:/);
      for (const secret of [first, rotated.secret]) {
        const raw = secret.slice('whsec_'.length);
        for (const form of [secret, raw, Buffer.from(raw, 'base64').toString('hex'), Buffer.from(raw, 'base64').toString('base64url')]) expect(stored).not.toContain(form);
      }
    }

    const { body } = await submit(key, { webhook_url: `${base}/ok-rotate` });
    await until(key, body.id, (j) => j.webhook?.state === 'delivered');
    const [delivery] = deliveriesTo('/ok-rotate');
    expect(delivery!.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(new Webhook(rotated.secret).verify(delivery!.body, delivery!.headers)).toMatchObject({ data: { id: body.id } });
    expect(new Webhook(first).verify(delivery!.body, delivery!.headers)).toMatchObject({ data: { id: body.id } });
  });

  it('applies a webhook_url sent after a file of 380 KB or more, and delivers there', async () => {
    const { key, user } = await sys.newUser('hook-late@example.com');
    const { secret } = await sys.admin.transcription.rotateWebhookSecret({ userId: user.id });
    // The short recording padded with silence to 13 s (416 KB at 16 kHz): the size is what counts here.
    const file = path.join(tmp, 'padded.wav');
    execFileSync('ffmpeg', ['-v', 'error', '-i', SHORT, '-af', 'apad=whole_dur=13', '-ar', '16000', '-ac', '1', '-c:a', 'pcm_s16le', '-y', file]);
    const audio = readFileSync(file);
    expect(audio.length).toBeGreaterThan(380 * 1024);
    const form = new FormData();
    form.append('audio', new Blob([audio], { type: 'audio/wav' }), 'speech.wav');
    form.append('webhook_url', `${base}/ok-late`);
    const res = await fetch(`${sys.baseUrl}/api/v1/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    const body = (await res.json()) as Json;
    expect([res.status, body.webhook_url]).toEqual([202, `${base}/ok-late`]);
    await until(key, body.id, (j) => j.webhook?.state === 'delivered');
    const [delivery] = deliveriesTo('/ok-late');
    expect(new Webhook(secret).verify(delivery!.body, delivery!.headers)).toMatchObject({ type: 'transcription.completed', data: { id: body.id } });
  });

  it(`caps webhook retries at ${WEBHOOK_RETRY_LIMIT.limit} per ${WEBHOOK_RETRY_LIMIT.windowSeconds} s per user: one more is 429 rate_limit_exceeded with Retry-After`, async () => {
    const { key, user } = await sys.newUser('hook-retries@example.com');
    await sys.admin.transcription.rotateWebhookSecret({ userId: user.id });
    const { body } = await submit(key, { webhook_url: `${base}/ok-retries` });
    await until(key, body.id, (j) => j.webhook?.state === 'delivered');
    const retry = (k: string) => fetch(`${sys.baseUrl}/api/v1/transcriptions/${body.id}/webhook/retry`, { method: 'POST', headers: { authorization: `Bearer ${k}` } });
    for (let i = 0; i < WEBHOOK_RETRY_LIMIT.limit; i++) expect((await retry(key)).status).toBe(200);
    const over = await retry(key);
    expect(over.status).toBe(429);
    const retryAfter = Number(over.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(WEBHOOK_RETRY_LIMIT.windowSeconds);
    expect(((await over.json()) as Json).error).toMatchObject({ code: 'rate_limit_exceeded', type: 'rate_limit_error' });
    // Another user's window is their own.
    const other = await sys.newUser('hook-retries-other@example.com');
    expect((await retry(other.key)).status).toBe(404);
  });

  it('uses the default endpoint set in the app when a job names none', async () => {
    const { key, user } = await sys.newUser('hook-default@example.com');
    await sys.admin.transcription.rotateWebhookSecret({ userId: user.id });
    const bad = sys.admin.transcription.setWebhookEndpoint({ userId: user.id, url: 'http://10.0.0.1/hook' });
    await expect(bad).rejects.toMatchObject({ code: 'invalid_request', param: 'url' });
    await sys.admin.transcription.setWebhookEndpoint({ userId: user.id, url: `${base}/ok-default` });
    const { body } = await submit(key, {});
    expect(body.webhook_url).toBe(`${base}/ok-default`);
    await until(key, body.id, (j) => j.webhook?.state === 'delivered');
    expect(deliveriesTo('/ok-default')).toHaveLength(1);
    // A job without an endpoint at all has no delivery.
    const { user: plain, key: plainKey } = await sys.newUser('hook-none@example.com');
    void plain;
    const none = await submit(plainKey, {});
    const ended = await until(plainKey, none.body.id, (j) => j.status === 'completed');
    expect(ended).toMatchObject({ webhook_url: null, webhook: null });
  });

  it('delivers transcription.canceled when a job is canceled, with nothing charged', async () => {
    const { key, user } = await sys.newUser('hook-canceled@example.com');
    const { secret } = await sys.admin.transcription.rotateWebhookSecret({ userId: user.id });
    // Held in the engine, the job cannot finish before the cancel arrives (and no recognition of a
    // long file runs on meanwhile).
    gate.close();
    let submitted: Json;
    let job: Json;
    try {
      submitted = (await submit(key, { webhook_url: `${base}/ok-canceled` })).body;
      const canceled = await fetch(`${sys.baseUrl}/api/v1/transcriptions/${submitted.id}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
      expect(canceled.status).toBe(200);
      job = await until(key, submitted.id, (j) => j.webhook?.state === 'delivered');
    } finally {
      gate.open();
    }
    expect(job.webhook).toMatchObject({ event: 'transcription.canceled', attempts: 1 });
    const [delivery] = deliveriesTo('/ok-canceled');
    const event = new Webhook(secret).verify(delivery!.body, delivery!.headers) as Json;
    expect(event).toMatchObject({ type: 'transcription.canceled', data: { id: submitted.id, status: 'canceled', text: null, credits_charged: null } });
    expect((await usage(key)).credits).toMatchObject({ monthly_remaining: 100, reserved: 0 });
  });

  it('delivers transcription.failed when the audio cannot be decoded, with the error and nothing charged', async () => {
    const { key, user } = await sys.newUser('hook-failed@example.com');
    const { secret } = await sys.admin.transcription.rotateWebhookSecret({ userId: user.id });
    // A WAV whose header states 10 s of MP3 (so submission prices and queues it) over bytes no
    // decoder can read: the worker finds no audio and the job fails for good on its first attempt.
    const fmt = Buffer.alloc(16);
    fmt.writeUInt16LE(0x55, 0); // MPEG layer 3
    fmt.writeUInt16LE(1, 2);
    fmt.writeUInt32LE(16000, 4);
    fmt.writeUInt32LE(16000, 8); // bytes a second: 160,000 bytes say 10 s
    fmt.writeUInt16LE(1, 12);
    const data = Buffer.alloc(160_000);
    const size = (n: number) => { const b = Buffer.alloc(4); b.writeUInt32LE(n); return b; };
    const wav = Buffer.concat([Buffer.from('RIFF'), size(4 + 8 + 16 + 8 + data.length), Buffer.from('WAVEfmt '), size(16), fmt, Buffer.from('data'), size(data.length), data]);
    const form = new FormData();
    form.append('webhook_url', `${base}/ok-failed`);
    form.append('audio', new Blob([wav], { type: 'audio/wav' }), 'unreadable.wav');
    const res = await fetch(`${sys.baseUrl}/api/v1/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    const submitted = (await res.json()) as Json;
    expect([res.status, submitted.duration_seconds]).toEqual([202, 10]);
    const job = await until(key, submitted.id, (j) => j.webhook?.state === 'delivered');
    expect(job).toMatchObject({ status: 'failed', error: { code: 'unsupported_audio' }, credits_charged: null });
    expect(job.webhook).toMatchObject({ event: 'transcription.failed', attempts: 1, last_status_code: 204 });
    const [delivery] = deliveriesTo('/ok-failed');
    const event = new Webhook(secret).verify(delivery!.body, delivery!.headers) as Json;
    const { webhook: _state, ...shown } = job;
    expect(event).toEqual({ type: 'transcription.failed', timestamp: job.finished_at, data: shown });
    expect((await usage(key)).credits).toMatchObject({ monthly_remaining: 100, reserved: 0 });
  });

  it('ends a round that runs out as failed, and the retry route starts another with the same webhook-id', async () => {
    const { key, user } = await sys.newUser('hook-down@example.com');
    await sys.admin.transcription.rotateWebhookSecret({ userId: user.id });
    const { body } = await submit(key, { webhook_url: `${base}/down` });
    const failed = await until(key, body.id, (j) => j.webhook?.state === 'failed');
    expect(failed.webhook).toMatchObject({ attempts: 8, last_status_code: 503, next_attempt_at: null, delivered_at: null });
    expect(failed.webhook.last_error).toMatch(/HTTP 503/);
    expect(deliveriesTo('/down')).toHaveLength(8);

    downUntilRetry = false;
    const other = await sys.newUser('hook-down-other@example.com');
    const foreign = await fetch(`${sys.baseUrl}/api/v1/transcriptions/${body.id}/webhook/retry`, { method: 'POST', headers: { authorization: `Bearer ${other.key}` } });
    expect(foreign.status).toBe(404);
    const retried = await fetch(`${sys.baseUrl}/api/v1/transcriptions/${body.id}/webhook/retry`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
    expect(retried.status).toBe(200);
    expect(((await retried.json()) as Json).webhook.state).toBe('pending');
    const delivered = await until(key, body.id, (j) => j.webhook?.state === 'delivered');
    expect(delivered.webhook).toMatchObject({ attempts: 9, last_status_code: 204 });
    expect(new Set(deliveriesTo('/down').map((d) => d.headers['webhook-id']))).toEqual(new Set([failed.webhook.id]));
  });
  it('checks the endpoint’s address at every attempt: a name that now resolves to a refused address is refused, and nothing reaches that address', async () => {
    const { key, user } = await sys.newUser('hook-rebind@example.com');
    await sys.admin.transcription.rotateWebhookSecret({ userId: user.id });
    names.set('hooks.rebind.test', '127.0.0.1');
    const { status, body } = await submit(key, { webhook_url: `http://hooks.rebind.test:${port}/rebind` });
    expect(status).toBe(202);
    await until(key, body.id, (j) => j.webhook?.state === 'delivered');
    expect(deliveriesTo('/rebind')).toHaveLength(1);
    // The name now answers a loopback address outside the allowed range, where the trap listens.
    names.set('hooks.rebind.test', '127.0.0.2');
    const retried = await fetch(`${sys.baseUrl}/api/v1/transcriptions/${body.id}/webhook/retry`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
    expect(retried.status).toBe(200);
    const failed = await until(key, body.id, (j) => j.webhook?.state !== 'pending');
    expect(failed.webhook).toMatchObject({ state: 'failed', attempts: 9, last_status_code: null });
    expect(failed.webhook.last_error).toMatch(/points to a loopback address/);
    expect(trapped).toEqual([]);
    expect(deliveriesTo('/rebind')).toHaveLength(1);
  });

  it('follows no redirect: a 3xx is a failed attempt, and the address it names gets nothing', async () => {
    const { key, user } = await sys.newUser('hook-redirect@example.com');
    await sys.admin.transcription.rotateWebhookSecret({ userId: user.id });
    const { body } = await submit(key, { webhook_url: `${base}/redirect` });
    const failed = await until(key, body.id, (j) => j.webhook !== null && j.webhook?.state !== 'pending');
    expect(failed.webhook).toMatchObject({ state: 'failed', attempts: 8, last_status_code: 302 });
    expect(failed.webhook.last_error).toMatch(/HTTP 302/);
    expect(deliveriesTo('/redirect')).toHaveLength(8);
    expect(deliveriesTo('/landed')).toEqual([]);
  });
});
