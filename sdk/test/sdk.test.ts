/**
 * The SDK against a real Murmur (issue 35): the gateway and every service started as the other
 * end-to-end tests start them (real gRPC on loopback, real Postgres and Redis when configured),
 * called through the SDK's own client. Uploads from a path, bytes and a Node stream; pagination;
 * search and ask; typed errors with request ids; jobs followed to their end; and retries that
 * meet 503 then 429 then 200 for one AI call and charge exactly once.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { seedLibrary } from '@murmur/app';
import {
  AuthenticationError, ConflictError, InsufficientCreditsError, JobEndedError, InvalidRequestError, Murmur, MurmurError, NotFoundError, RateLimitError, WebhookSignatureError, type UploadProgress,
} from '@murmur/sdk';
import { startSystem, type TestSystem } from '../../gateway/test/support/system';

const WAV = '/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav';

describe('the SDK against a running Murmur', () => {
  let sys: TestSystem;
  let key: string;
  let userId: string;
  let murmur: Murmur;

  beforeAll(async () => {
    sys = await startSystem({ ai: true });
    const made = await sys.newUser('sdk@example.com');
    key = made.key;
    userId = made.user.id;
    murmur = new Murmur({ apiKey: key, baseUrl: sys.baseUrl });
  });
  afterAll(async () => {
    await sys?.stop();
  });

  it('takes the key from MURMUR_API_KEY, and says how to get one when there is none', async () => {
    const saved = { key: process.env.MURMUR_API_KEY, url: process.env.MURMUR_BASE_URL };
    try {
      process.env.MURMUR_API_KEY = key;
      process.env.MURMUR_BASE_URL = sys.baseUrl;
      expect((await new Murmur().me()).id).toBe(userId);
      delete process.env.MURMUR_API_KEY;
      expect(() => new Murmur()).toThrow(/MURMUR_API_KEY.*Settings → Developer/);
    } finally {
      if (saved.key === undefined) delete process.env.MURMUR_API_KEY;
      else process.env.MURMUR_API_KEY = saved.key;
      if (saved.url === undefined) delete process.env.MURMUR_BASE_URL;
      else process.env.MURMUR_BASE_URL = saved.url;
    }
  });

  it('transcribes a file from its path, streamed with progress, and saves it', async () => {
    const progress: UploadProgress[] = [];
    const size = fs.statSync(WAV).size;
    const t = await murmur.transcribe({ audio: WAV, save: true, title: 'From the SDK', words: true }, { onUploadProgress: (p) => progress.push(p) });
    expect(t.object).toBe('transcription');
    expect(t.text.length).toBeGreaterThan(10);
    expect(t.recording_id).toMatch(/^rec_/);
    expect(t.credits_charged).toBeGreaterThan(0);
    expect(progress.at(-1)).toEqual({ loaded: size, total: size });
    const rec = await murmur.recordings.get(t.recording_id!);
    expect(rec.title).toBe('From the SDK');
    expect(await murmur.recordings.transcript(t.recording_id!, 'vtt')).toMatch(/^WEBVTT/);
    const captions = await murmur.transcribe({ audio: WAV, response_format: 'vtt' });
    expect(captions.content).toMatch(/^WEBVTT/);
    expect([captions.transcription_id, captions.recording_id, captions.credits_charged]).toEqual([expect.stringMatching(/^trn_/), null, t.credits_charged]);
  });

  it('transcribes bytes and a Node stream of unknown length', async () => {
    const bytes = fs.readFileSync(WAV);
    const fromBytes = await murmur.transcribe({ audio: bytes });
    const fromStream = await murmur.transcribe({ audio: fs.createReadStream(WAV) });
    expect(fromStream.text).toBe(fromBytes.text);
  });

  it('walks every page with for await, and answers the first page when awaited', async () => {
    const other = await sys.newUser('sdk-pages@example.com');
    await seedLibrary(sys.admin.library, other.user.id, { recordings: 25, seed: 5 });
    const client = new Murmur({ apiKey: other.key, baseUrl: sys.baseUrl });
    const first = await client.recordings.list({ limit: 10 });
    expect([first.data.length, first.has_more]).toEqual([10, true]);
    const all: string[] = [];
    for await (const r of client.recordings.list({ limit: 10 })) all.push(r.id);
    expect(all).toHaveLength(25);
    expect(new Set(all).size).toBe(25);
    expect(all.slice(0, 10)).toEqual(first.data.map((r) => r.id));
  });

  it('searches passages and asks the library', async () => {
    const rec = (await murmur.recordings.list({ limit: 1 })).data[0]!;
    const words = (await murmur.recordings.get(rec.id)).transcript!.text.split(/\s+/).filter((w) => w.length > 4).slice(0, 1);
    const found = await murmur.search({ q: words.join(' '), type: ['recording'] });
    expect(found.ranking).toBe('text');
    expect(found.data.map((r) => r.id)).toContain(rec.id);
    const answer = await murmur.ask({ question: `What about ${words[0]}?` });
    expect(answer.object).toBe('answer');
    expect(answer.citations.length).toBeGreaterThan(0);
  });

  it('reads the request log: its own calls, filtered and paged', async () => {
    const client = new Murmur({ apiKey: key, baseUrl: sys.baseUrl });
    await client.recordings.get('rec_00000000000000000000000000').catch(() => undefined);
    await sys.requestLog.flush();
    const refused = await client.requests.list({ status_code: '404' });
    expect(refused.data[0]).toMatchObject({ object: 'request', route: '/api/v1/recordings/{id}', status: 404, error_code: 'not_found' });
    const seen: string[] = [];
    for await (const entry of client.requests.list({ limit: 2 })) seen.push(entry.id);
    expect(seen.length).toBeGreaterThan(2);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('throws a typed error per contract code, with the request id', async () => {
    const bad = new Murmur({ apiKey: `svc_${'0'.repeat(64)}`, baseUrl: sys.baseUrl });
    const auth = await bad.me().catch((e: unknown) => e);
    expect(auth).toBeInstanceOf(AuthenticationError);
    expect((auth as AuthenticationError).requestId).toMatch(/^req_/);
    const missing = await murmur.recordings.get('rec_00000000000000000000000000').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect((missing as NotFoundError).code).toBe('not_found');
    const invalid = await murmur.search({ q: '' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(invalid).toBeInstanceOf(InvalidRequestError);
    expect((invalid as InvalidRequestError).param).toBe('q');
    const broke = await sys.newUser('sdk-broke@example.com');
    await sys.admin.billing.adjustCredits({ userId: broke.user.id, monthlyCredits: 0, note: 'test' });
    const poor = await new Murmur({ apiKey: broke.key, baseUrl: sys.baseUrl }).transcribe({ audio: WAV }).catch((e: unknown) => e);
    expect(poor).toBeInstanceOf(InsufficientCreditsError);
    expect(poor).toBeInstanceOf(MurmurError);
  });

  it('follows a job to its end over its events, and cancels one', async () => {
    const job = await murmur.transcriptions.create({ audio: WAV });
    expect(job.status).toMatch(/queued|processing/);
    const seen: string[] = [];
    const done = await murmur.transcriptions.wait(job.id, { onProgress: (j) => seen.push(j.status) });
    expect(done.status).toBe('completed');
    expect(seen.at(-1)).toBe('completed');
    expect(await murmur.transcriptions.transcript(job.id, 'srt')).toMatch(/^1\r?\n\d\d:\d\d:\d\d,\d{3} --> /);
    const listed: string[] = [];
    for await (const j of murmur.transcriptions.list({ status: 'completed' })) listed.push(j.id);
    expect(listed).toContain(job.id);
    // A job canceled at once ends canceled, and waiting for it says so (or, had it already ended, the cancel is a conflict).
    const second = await murmur.transcriptions.create({ audio: WAV });
    const canceled = await murmur.transcriptions.cancel(second.id).catch((e: unknown) => e);
    if (canceled instanceof ConflictError) expect(canceled.code).toBe('transcription_not_cancelable');
    else {
      expect((canceled as { status: string }).status).toBe('canceled');
      expect(await murmur.transcriptions.wait(second.id).catch((e: unknown) => e)).toBeInstanceOf(JobEndedError);
    }
  }, 120_000);

  it('verifies a webhook signed with Standard Webhooks, and refuses an altered one', () => {
    const secret = `whsec_${Buffer.from('a-test-secret-of-32-bytes-length!').toString('base64')}`;
    const payload = JSON.stringify({ type: 'transcription.completed', timestamp: new Date().toISOString(), data: { id: 'trn_1' } });
    const id = 'msg_1';
    const at = new Date();
    const signature = new Webhook(secret).sign(id, at, payload);
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature };
    expect(murmur.webhooks.verify(payload, headers, secret).data).toEqual({ id: 'trn_1' });
    expect(() => murmur.webhooks.verify(payload.replace('trn_1', 'trn_2'), headers, secret)).toThrow(WebhookSignatureError);
  });

  describe('retries', () => {
    /**
     * A proxy in front of the real gateway that passes every request through, but answers the
     * first two tries of each call 503 and 429 (Retry-After: 0) after the gateway did the work:
     * the worst case, a charge the client never saw.
     */
    async function flakyProxy(statuses: number[]) {
      const seen: Array<{ path: string; key: string | undefined; status: number }> = [];
      const server = http.createServer(async (req, res) => {
        const chunks: Buffer[] = [];
        for await (const c of req) chunks.push(c as Buffer);
        const upstream = await fetch(`${sys.baseUrl}${req.url}`, {
          method: req.method,
          headers: Object.fromEntries(Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k)).map(([k, v]) => [k, String(v)])),
          ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
        });
        const body = Buffer.from(await upstream.arrayBuffer());
        const status = statuses.shift();
        seen.push({ path: req.url ?? '', key: req.headers['idempotency-key'] as string | undefined, status: status ?? upstream.status });
        if (status !== undefined) {
          res.writeHead(status, { 'content-type': 'application/json', 'retry-after': '0' });
          res.end(JSON.stringify({ error: { type: 'api_error', code: status === 429 ? 'rate_limit_exceeded' : 'service_unavailable', message: 'try again', param: null, request_id: 'req_proxy0001' } }));
          return;
        }
        const headers: Record<string, string> = {};
        upstream.headers.forEach((v, k) => {
          if (k !== 'content-length' && k !== 'transfer-encoding' && k !== 'content-encoding') headers[k] = v;
        });
        res.writeHead(upstream.status, headers).end(body);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, close: () => new Promise<void>((r) => server.close(() => r())) };
    }

    it('meets 503, then 429, then 200 for one AI call with one Idempotency-Key, and is charged once', async () => {
      const user = await sys.newUser('sdk-retries@example.com');
      const proxy = await flakyProxy([503, 429]);
      try {
        const client = new Murmur({ apiKey: user.key, baseUrl: proxy.url });
        const before = await new Murmur({ apiKey: user.key, baseUrl: sys.baseUrl }).usage();
        const artifact = await client.convert({ transcript: 'Dana sends the budget on Friday. We agreed to hire two engineers.', kind: 'summary' });
        expect(artifact.object).toBe('artifact');
        expect(proxy.seen.map((s) => s.status)).toEqual([503, 429, 200]);
        const keys = new Set(proxy.seen.map((s) => s.key));
        expect(keys.size).toBe(1);
        expect([...keys][0]).toMatch(/^[0-9a-f-]{36}$/);
        const after = await new Murmur({ apiKey: user.key, baseUrl: sys.baseUrl }).usage();
        expect(after.counters.credits_used - before.counters.credits_used).toBe(artifact.credits_charged);
        expect(after.counters.conversions - before.counters.conversions).toBe(1);
      } finally {
        await proxy.close();
      }
    });

    it('gives up after its retries with the typed error, and never retries another 4xx', async () => {
      const proxy = await flakyProxy([429, 429, 429]);
      try {
        const err = await new Murmur({ apiKey: key, baseUrl: proxy.url, maxRetries: 2 }).usage().catch((e: unknown) => e);
        expect(err).toBeInstanceOf(RateLimitError);
        expect(proxy.seen).toHaveLength(3);
      } finally {
        await proxy.close();
      }
      const proxy400 = await flakyProxy([]);
      try {
        await new Murmur({ apiKey: key, baseUrl: proxy400.url }).search({ q: '"unclosed' }).then(undefined, () => undefined);
        expect(proxy400.seen).toHaveLength(1);
      } finally {
        await proxy400.close();
      }
    });
  });
});
