/**
 * POST /api/v1/transcribe end to end with real speech (Debian's pocketsphinx-testdata) through
 * the gateway's streaming parsers, the transcription service (ffmpeg + pocketsphinx) and billing:
 * multipart and base64, every response format, save, every refusal, idempotency, and an upload
 * past 500 MB refused while it streams. Recognition and renderings are checked on a LibriVox
 * sentence; where any speech will do, a one-second recording is sent (a third of the CPU).
 */
import * as http from 'node:http';
import { readFileSync } from 'node:fs';
import { wordErrorRate } from '../../services/transcription/src/wer';
import { retainedMemory } from './support/retained-memory';
import { get, startSystem, type TestSystem } from './support/system';

type Json = Record<string, any>;



const WAV = '/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav';
/** A card reader's "ten of clubs" (1 s, recognised in a third of the sentence's time): where any speech will do. */
const SHORT = '/usr/share/pocketsphinx/test/data/cards/001.wav';
const REFERENCE = 'and mister john dashwood had then leisure to consider how much there might be prudently in his power to do for them';

describe('POST /api/v1/transcribe', () => {
  let sys: TestSystem;
  const audio = readFileSync(WAV);
  const short = readFileSync(SHORT);

  beforeAll(async () => {
    sys = await startSystem({ ai: true });
  });
  afterAll(async () => {
    await sys.stop();
  });

  async function multipart(key: string, fields: Record<string, string>, file: Buffer | null, headers: Record<string, string> = {}) {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    if (file) form.append('audio', new Blob([file], { type: 'audio/wav' }), 'speech.wav');
    const res = await fetch(`${sys.baseUrl}/api/v1/transcribe`, { method: 'POST', headers: { authorization: `Bearer ${key}`, ...headers }, body: form });
    const text = await res.text();
    let body: Json = {};
    try {
      body = JSON.parse(text) as Json;
    } catch {
      body = { raw: text };
    }
    return { status: res.status, headers: res.headers, body, text };
  }

  async function json(key: string, payload: Json) {
    const res = await fetch(`${sys.baseUrl}/api/v1/transcribe`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(payload),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Json };
  }

  const usage = async (key: string) => (await get(sys.baseUrl, '/api/v1/usage', key)).body as Json;

  it('transcribes a multipart upload with timed segments and charges by duration', async () => {
    const { key } = await sys.newUser('t-multipart@example.com');
    const res = await multipart(key, { language: 'en' }, audio);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'transcription', language: 'en', credits_charged: 1, recording_id: null });
    expect(res.body.id).toMatch(/^trn_/);
    expect(res.body.model).toContain('pocketsphinx');
    expect(res.body.duration_seconds).toBeGreaterThan(5);
    expect(wordErrorRate(REFERENCE, res.body.text).wer).toBeLessThan(0.5);
    let last = 0;
    for (const s of res.body.segments) {
      expect(s.start).toBeGreaterThanOrEqual(last);
      expect(s.end).toBeGreaterThanOrEqual(s.start);
      last = s.end;
    }
    expect(res.headers.get('ratelimit-remaining')).toBe('9');
    const u = await usage(key);
    expect(u.credits.monthly_remaining).toBe(99);
    expect(u.counters.transcriptions).toBe(1);
  });

  it('gives the same transcript for the same audio sent as base64 JSON (a data URL too)', async () => {
    const { key } = await sys.newUser('t-base64@example.com');
    const a = await json(key, { audio_base64: short.toString('base64') });
    const b = await json(key, { language: 'en', audio_base64: `data:audio/wav;base64,${short.toString('base64')}` });
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(b.body.text).toBe(a.body.text);
  });

  it.each([
    ['text', 'text/plain; charset=utf-8', (t: string) => expect(t.length).toBeGreaterThan(10)],
    ['srt', 'application/x-subrip; charset=utf-8', (t: string) => expect(t).toMatch(/^1\n\d{2}:\d{2}:\d{2},\d{3} --> \d{2}:\d{2}:\d{2},\d{3}\n/)],
    ['vtt', 'text/vtt; charset=utf-8', (t: string) => expect(t).toMatch(/^WEBVTT\n\n\d{2}:\d{2}:\d{2}\.\d{3} --> /)],
  ])('renders response_format=%s', async (format, type, check) => {
    const { key } = await sys.newUser(`t-${format}@example.com`);
    const res = await multipart(key, { response_format: format }, audio);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(type);
    expect(res.headers.get('x-transcription-id')).toMatch(/^trn_/);
    expect(res.headers.get('x-credits-charged')).toBe('1');
    check(res.text);
  });

  it('saves the transcript as a recording in a folder, and refuses another user’s folder before charging', async () => {
    const owner = await sys.newUser('t-save@example.com');
    const other = await sys.newUser('t-save-other@example.com');
    const { folder } = await sys.admin.library.createFolder({ ownerId: owner.user.id, name: 'Dictation', createdAt: undefined });
    const res = await multipart(owner.key, { save: 'true', title: 'Card reading', folder_id: folder!.id }, short);
    expect(res.body.error).toBeUndefined();
    expect(res.status).toBe(200);
    expect(res.body.recording_id).toMatch(/^rec_/);
    const rec = await get(sys.baseUrl, `/api/v1/recordings/${res.body.recording_id}`, owner.key);
    expect(rec.body).toMatchObject({ title: 'Card reading', folder_id: folder!.id });
    expect(rec.body.transcript.text).toBe(res.body.text);

    const foreign = await multipart(other.key, { save: 'true', folder_id: folder!.id }, short);
    expect(foreign.status).toBe(404);
    expect((await usage(other.key)).credits.monthly_remaining).toBe(100);
  });

  type Send = (key: string) => Promise<{ status: number; body: Json }>;
  const refusals: Array<[string, Send, number, string, string | null]> = [
    ['no audio part', (k) => multipart(k, { language: 'en' }, null), 400, 'missing_audio', 'audio'],
    ['an empty JSON body', (k) => json(k, {}), 400, 'missing_audio', 'audio_base64'],
    ['undecodable bytes', (k) => multipart(k, {}, Buffer.from('this is not audio at all, just text. '.repeat(100))), 415, 'unsupported_audio', 'audio'],
    ['invalid base64', (k) => json(k, { audio_base64: '***not base64***' }), 400, 'invalid_request', 'audio_base64'],
    ['an unknown response_format', (k) => multipart(k, { response_format: 'pdf' }, audio), 400, 'invalid_request', 'response_format'],
    ['a bad language', (k) => multipart(k, { language: 'english please' }, audio), 400, 'invalid_request', 'language'],
    ['a title without save', (k) => multipart(k, { title: 'x' }, audio), 400, 'invalid_request', 'title'],
  ];

  it.each(refusals)('refuses %s without charging', async (_name, send, status, code, param) => {
    const { key } = await sys.newUser(`t-bad-${Math.random().toString(36).slice(2)}@example.com`);
    const res = await send(key);
    expect(res.status).toBe(status);
    expect(res.body.error).toMatchObject({ code, param });
    const u = await usage(key);
    expect(u.credits.monthly_remaining).toBe(100);
    expect(u.credits.reserved).toBe(0);
  });

  it('replays a transcription for the same Idempotency-Key and audio, and refuses other audio under that key', async () => {
    const { key } = await sys.newUser('t-idem@example.com');
    const first = await multipart(key, {}, short, { 'idempotency-key': 'upload-1' });
    const again = await multipart(key, {}, short, { 'idempotency-key': 'upload-1' });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    const other = await multipart(key, {}, Buffer.concat([short, Buffer.alloc(3200)]), { 'idempotency-key': 'upload-1' });
    expect(other.status).toBe(409);
    expect((await usage(key)).counters.transcriptions).toBe(1);
  });

  it('refuses an upload past 500 MB with 413 while it streams, without the memory of this process growing with it', async () => {
    const { key } = await sys.newUser('t-huge@example.com');
    // The client would send 2 GB; the answer must come once a little over 500 MB went through.
    const limit = 2_000_000_000;
    const chunk = Buffer.alloc(1024 * 1024, 7);
    const boundary = 'murmurboundary';
    const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="audio"; filename="big.wav"\r\nContent-Type: audio/wav\r\n\r\n`);
    const url = new URL(`${sys.baseUrl}/api/v1/transcribe`);
    // Client, gateway and transcription service all run in this process, so holding the upload
    // anywhere would retain hundreds of MB.
    // Samples of (bytes sent so far, retained memory). The first ones carry one-off costs (code
    // compiled on first use, buffers and channels warmed up); from 100 MB sent onwards, holding
    // the upload anywhere would add what was sent since, hundreds of MB.
    // One sample every 50 MB sent (a forced collection each, so a handful in all: collecting on a
    // timer instead slowed the upload past the test's limit on a busy machine).
    const samples: Array<{ sent: number; retained: number }> = [];
    let sent = 0;
    let answered = false;
    const SAMPLE_EVERY = 50 * 1024 * 1024;
    const sample = () => samples.push({ sent, retained: retainedMemory() });
    const { status, body, sentAtAnswer } = await new Promise<{ status: number; body: string; sentAtAnswer: number }>((resolve, reject) => {
      const req = http.request(
        { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}` } },
        (res) => {
          answered = true;
          sample();
          const at = sent;
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () => {
            resolve({ status: res.statusCode ?? 0, body: text, sentAtAnswer: at });
            req.destroy();
          });
        },
      );
      req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'EPIPE' || err.code === 'ECONNRESET' ? undefined : reject(err)));
      req.write(head);
      const pump = () => {
        while (!answered && sent < limit) {
          sent += chunk.length;
          if (sent % SAMPLE_EVERY < chunk.length) sample();
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
      };
      pump();
    });
    expect(status).toBe(413);
    expect(JSON.parse(body).error.code).toBe('audio_too_large');
    expect(sentAtAnswer).toBeGreaterThan(500_000_000);
    expect(sentAtAnswer).toBeLessThan(600_000_000);
    const baseline = samples.find((s) => s.sent >= 100_000_000);
    expect(baseline).toBeDefined();
    const later = samples.filter((s) => s.sent > baseline!.sent);
    expect(later.length).toBeGreaterThan(2);
    // The median sample, not the largest: what is in flight between client, gateway and service at
    // one instant can spike by tens of MB on a busy machine (seen: 25–70 MB here, 100 MB once in
    // CI), then drains. Holding the upload would lift every later sample, the median by hundreds of MB.
    const retainedLater = later.map((s) => s.retained).sort((a, b) => a - b);
    const growth = retainedLater[Math.floor(retainedLater.length / 2)]! - baseline!.retained;
    // Streaming keeps a bounded window in flight; holding even a quarter of the rest would not fit.
    const limitBytes = (sentAtAnswer - baseline!.sent) / 4;
    if (growth >= limitBytes) {
      const mb = samples.map((s) => [Math.round(s.sent / 1e6), Math.round(s.retained / 1e6)]);
      throw new Error(`retained memory grew ${Math.round(growth / 1e6)} MB ≥ ${Math.round(limitBytes / 1e6)} MB; samples [MB sent, MB retained]: ${JSON.stringify(mb)}`);
    }
    expect((await usage(key)).credits.monthly_remaining).toBe(100);
    // 500 MB through client, gateway and service in one process: ~25 s on a loaded 2-core machine;
    // beside another heavy test file it has needed more than jest's default minute.
  }, 180_000);


});
