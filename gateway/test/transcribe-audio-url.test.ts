/**
 * `audio_url` end to end: the whole system (transcription with pocketsphinx) fetching real
 * speech from a file server on loopback — allowed by the on-premise switch for that address only
 * (MURMUR_AUDIO_URL_ALLOW_CIDRS=127.0.0.1/32), every other rule as in production. The same
 * transcript as an upload over POST /transcribe (JSON and multipart), POST /transcriptions and
 * the MCP tool; exactly one of the audio and the link; forbidden and unreachable links refused
 * with their codes and nothing charged; an Idempotency-Key replay does not download again.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_AUDIO_URL_POLICY } from '../src/upload/fetch-audio';
import { callTool, connectMcp } from './support/mcp-client';
import { get, startSystem, type TestSystem } from './support/system';

type Json = Record<string, any>;

const WAV = '/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav';

describe('audio_url', () => {
  let sys: TestSystem;
  let files: http.Server;
  let base = '';
  const fetched: string[] = [];
  const audio = readFileSync(WAV);
  const clients: Client[] = [];
  let reference = '';

  beforeAll(async () => {
    files = http.createServer((req, res) => {
      fetched.push(req.url!);
      if (req.url!.startsWith('/speech.wav')) return void res.writeHead(200, { 'content-type': 'audio/wav' }).end(audio);
      if (req.url === '/moved') return void res.writeHead(302, { location: '/speech.wav?from=moved' }).end();
      if (req.url === '/to-metadata') return void res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    const port = (files.address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}`;
    sys = await startSystem({ ai: true, audioUrlPolicy: { ...DEFAULT_AUDIO_URL_POLICY, allowCidrs: ['127.0.0.1/32'], ports: [80, 443, port] } });
    const { key } = await sys.newUser('url-reference@example.com');
    reference = (await multipart(key, {}, true)).body.text;
    expect(reference.length).toBeGreaterThan(10);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await sys.stop();
    await new Promise<void>((resolve) => files.close(() => resolve()));
  });
  beforeEach(() => {
    fetched.length = 0;
  });

  async function json(path: string, key: string, body: Json, headers: Record<string, string> = {}) {
    const res = await fetch(`${sys.baseUrl}/api/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Json };
  }
  async function multipart(key: string, fields: Record<string, string>, withAudio: boolean, path = '/transcribe') {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    if (withAudio) form.append('audio', new Blob([audio], { type: 'audio/wav' }), 'speech.wav');
    const res = await fetch(`${sys.baseUrl}/api/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    return { status: res.status, body: (await res.json()) as Json };
  }
  const usage = async (key: string) => (await get(sys.baseUrl, '/api/v1/usage', key)).body as Json;

  it('transcribes a link as it transcribes the upload, over JSON and multipart, following a redirect', async () => {
    const { key } = await sys.newUser('url-sync@example.com');
    const viaJson = await json('/transcribe', key, { audio_url: `${base}/speech.wav?sig=s3cr3t`, language: 'en' });
    expect(viaJson.status).toBe(200);
    expect(viaJson.body).toMatchObject({ text: reference, credits_charged: 1 });
    const viaForm = await multipart(key, { language: 'en', audio_url: `${base}/moved` }, false);
    expect(viaForm.status).toBe(200);
    expect(viaForm.body.text).toBe(reference);
    expect(fetched).toEqual(['/speech.wav?sig=s3cr3t', '/moved', '/speech.wav?from=moved']);
    expect((await usage(key)).credits).toMatchObject({ monthly_remaining: 98, reserved: 0 });
  });

  it('queues a link as a job that completes with the same transcript', async () => {
    const { key } = await sys.newUser('url-job@example.com');
    const submitted = await json('/transcriptions', key, { audio_url: `${base}/speech.wav` });
    expect(submitted.status).toBe(202);
    let job = submitted.body;
    for (let i = 0; i < 600 && !['completed', 'failed', 'canceled'].includes(job.status); i++) {
      await new Promise((r) => setTimeout(r, 200));
      job = (await get(sys.baseUrl, `/api/v1/transcriptions/${submitted.body.id}`, key)).body;
    }
    expect(job).toMatchObject({ status: 'completed', text: reference, credits_charged: 1 });
  });

  it('takes exactly one of the audio and the link', async () => {
    const { key } = await sys.newUser('url-both@example.com');
    // A few bytes of audio: refused at the first of them (a whole file would be refused the same way, mid-body).
    const both = await json('/transcribe', key, { audio_url: `${base}/speech.wav`, audio_base64: audio.subarray(0, 3000).toString('base64') });
    expect(both.status).toBe(400);
    expect(both.body.error).toMatchObject({ code: 'invalid_request', param: 'audio_url' });
    const bothForm = await multipart(key, { audio_url: `${base}/speech.wav` }, true);
    expect(bothForm.status).toBe(400);
    expect(bothForm.body.error).toMatchObject({ code: 'invalid_request', param: 'audio_url' });
    const neither = await json('/transcribe', key, { language: 'en' });
    expect(neither.status).toBe(400);
    expect(neither.body.error.code).toBe('missing_audio');
    expect(fetched).toEqual([]);
    expect((await usage(key)).credits).toMatchObject({ monthly_remaining: 100, reserved: 0 });
  });

  it('refuses forbidden links (400 audio_url_forbidden) and failed downloads (422 audio_url_unreachable), charging nothing', async () => {
    const { key } = await sys.newUser('url-refused@example.com');
    const cases: Array<[string, string, number, string]> = [
      ['/transcribe', 'http://169.254.169.254/latest/meta-data/', 400, 'audio_url_forbidden'],
      // Loopback beyond the one address allowed for the file server.
      ['/transcriptions', `http://127.0.0.2:${new URL(base).port}/speech.wav`, 400, 'audio_url_forbidden'],
      ['/transcriptions', `http://[::1]:${new URL(base).port}/speech.wav`, 400, 'audio_url_forbidden'],
      ['/transcribe', `${base}/to-metadata`, 400, 'audio_url_forbidden'],
      ['/transcribe', 'http://10.0.0.1/a.wav', 400, 'audio_url_forbidden'],
      ['/transcribe', 'file:///etc/passwd', 400, 'audio_url_forbidden'],
      ['/transcriptions', `${base}/missing.wav`, 422, 'audio_url_unreachable'],
      ['/transcribe', 'not a link', 400, 'invalid_request'],
    ];
    for (const [path, url, status, code] of cases) {
      const res = await json(path, key, { audio_url: url });
      expect([url, res.status, res.body.error?.code]).toEqual([url, status, code]);
      expect(res.body.error.param).toBe('audio_url');
    }
    expect(fetched).toEqual(['/to-metadata', '/missing.wav']);
    const u = await usage(key);
    expect(u.credits).toMatchObject({ monthly_remaining: 100, reserved: 0 });
    expect(u.counters.transcriptions).toBe(0);
  });

  it('replays an Idempotency-Key for the same link without downloading it again', async () => {
    const { key } = await sys.newUser('url-idem@example.com');
    const first = await json('/transcribe', key, { audio_url: `${base}/speech.wav` }, { 'idempotency-key': 'link-1' });
    const again = await json('/transcribe', key, { audio_url: `${base}/speech.wav` }, { 'idempotency-key': 'link-1' });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(fetched).toEqual(['/speech.wav']);
    const other = await json('/transcribe', key, { audio_url: `${base}/speech.wav?v=2` }, { 'idempotency-key': 'link-1' });
    expect(other.status).toBe(409);
  });

  it('transcribes a link through the MCP tool, and refuses both or a forbidden link as tool errors', async () => {
    const { key } = await sys.newUser('url-mcp@example.com');
    const client = await connectMcp(sys.baseUrl, key);
    clients.push(client);
    const ok = await callTool(client, 'transcribe', { audio_url: `${base}/speech.wav`, language: 'en' });
    expect(ok.isError).toBe(false);
    expect(ok.data).toMatchObject({ text: reference, credits_charged: 1 });
    const both = await callTool(client, 'transcribe', { audio_url: `${base}/speech.wav`, audio_base64: audio.toString('base64') });
    expect(both.data.error).toMatchObject({ code: 'invalid_request', param: 'audio_url' });
    const neither = await callTool(client, 'transcribe', { language: 'en' });
    expect(neither.data.error).toMatchObject({ code: 'invalid_request', param: 'audio_base64' });
    const metadata = await callTool(client, 'transcribe', { audio_url: 'http://169.254.169.254/latest/meta-data/' });
    expect(metadata.data.error).toMatchObject({ code: 'audio_url_forbidden', param: 'audio_url' });
    expect(fetched).toEqual(['/speech.wav']);
    expect((await usage(key)).credits).toMatchObject({ monthly_remaining: 99, reserved: 0 });
  });
});
