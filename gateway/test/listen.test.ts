/**
 * GET /api/v1/listen (docs/live.md) end to end: real WebSocket clients, real speech (Debian's
 * pocketsphinx-testdata) at real-time pace through the gateway, the transcription service's
 * StreamTranscription (ffmpeg, the incremental pocketsphinx recognizer) and billing. Every refusal
 * is an `error` message with the contract's body and a close code of 4000 + its status, and no
 * stream is charged for more than the audio it sent.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { auth } from '@murmur/proto';
import { wordErrorRate } from '../../services/transcription/src/wer';
import { connectLive, pcmOfWav, type LiveClient } from './support/live-client';
import { get, startSystem, type TestSystem } from './support/system';

type Json = Record<string, any>;

const LIBRIVOX = '/usr/share/pocketsphinx/test/data/librivox';
const WAV = `${LIBRIVOX}/sense_and_sensibility_01_austen_64kb-0870.wav`;
/** A second loopback address, whose refused keys are counted apart from 127.0.0.1's. */
const OTHER = '127.0.0.2';
const REFERENCE = 'and mister john dashwood had then leisure to consider how much there might be prudently in his power to do for them';

describe('GET /api/v1/listen', () => {
  let sys: TestSystem;
  const pcm = pcmOfWav(WAV);
  const seconds = pcm.length / 32_000;

  beforeAll(async () => {
    sys = await startSystem({ ai: true, listenIdleMs: 3_000 });
  });
  afterAll(async () => {
    await sys.stop();
  });

  const usage = async (key: string) => (await get(sys.baseUrl, '/api/v1/usage', key)).body as Json;
  const finalText = (c: LiveClient) => c.messages.filter((m) => m.type === 'final').map((m) => m.text).join(' ');

  /** The error a refused stream was told, and its close. */
  async function refusal(c: LiveClient) {
    const closed = await c.closed;
    const error = c.messages.find((m) => m.type === 'error');
    return { ...closed, error: error?.error as Json | undefined };
  }

  it('streams real speech at real-time pace: open, speech_started, partials, finals with words, utterance_end, closed', async () => {
    const { key } = await sys.newUser('live-basic@example.com');
    const c = await connectLive(sys.baseUrl, { key });
    const open = await c.next('open');
    expect(open).toMatchObject({ model: expect.stringContaining('pocketsphinx'), encoding: 'linear16', sample_rate: 16000 });
    expect(open.id).toMatch(/^trn_/);
    await c.stream(pcm, { realTime: true });
    c.control('close');
    const closed = await c.next('closed');
    expect(await c.closed).toEqual({ code: 1000, reason: 'closed' });

    const types = c.messages.map((m) => m.type);
    expect(types[0]).toBe('open');
    expect(types.at(-1)).toBe('closed');
    expect(types.indexOf('speech_started')).toBeLessThan(types.indexOf('final'));
    expect(types.filter((t) => t === 'partial').length).toBeGreaterThanOrEqual(3);
    expect(types.lastIndexOf('utterance_end')).toBeGreaterThan(types.indexOf('final'));
    expect(wordErrorRate(REFERENCE, finalText(c)).wer).toBeLessThan(0.5);
    for (const f of c.messages.filter((m) => m.type === 'final')) {
      for (const w of f.words) {
        expect(w.start).toBeGreaterThanOrEqual(0);
        expect(w.end).toBeLessThanOrEqual(seconds + 0.5);
        expect(w.confidence).toBeGreaterThanOrEqual(0);
        expect(w.speaker).toBeNull();
      }
    }
    expect(closed.duration_seconds).toBeCloseTo(seconds, 1);
    expect(closed).toMatchObject({ credits_charged: 1, recording_id: null });
    const u = await usage(key);
    expect(u.credits.monthly_remaining).toBe(99);
    expect(u.counters.transcriptions).toBe(1);
    expect(u.counters.transcription_seconds).toBe(Math.ceil(seconds));
  });

  it('saves the session as a recording with its words when asked, and a dropped connection keeps its finals', async () => {
    const { key } = await sys.newUser('live-save@example.com');
    const c = await connectLive(sys.baseUrl, { key, query: { save: 'true', title: 'Live note' } });
    await c.next('open');
    await c.stream(pcm);
    c.control('close');
    const closed = await c.next('closed');
    expect(closed.recording_id).toMatch(/^rec_/);
    const rec = (await get(sys.baseUrl, `/api/v1/recordings/${closed.recording_id}?words=true`, key)).body as Json;
    expect(rec.title).toBe('Live note');
    expect(wordErrorRate(REFERENCE, finalText(c)).wer).toBeLessThan(0.5);
    expect(rec.transcript.words.map((w: Json) => w.text).join(' ')).toBe(finalText(c));

    // Dropped: the socket is cut after a finalize's final arrived; what was final is stored and charged.
    const d = await connectLive(sys.baseUrl, { key, query: { save: 'true' } });
    await d.next('open');
    await d.stream(pcm);
    d.control('finalize');
    await d.keepAliveWhile(d.next('final'));
    d.ws.terminate();
    let list: Json = { data: [] };
    for (let i = 0; i < 100 && list.data.length < 2; i++) {
      list = (await get(sys.baseUrl, '/api/v1/recordings', key)).body as Json;
      if (list.data.length < 2) await new Promise((r) => setTimeout(r, 100));
    }
    expect(list.data).toHaveLength(2);
    expect((await usage(key)).credits.monthly_remaining).toBe(98);
  });

  it('decodes Opus in WebM as a browser records it', async () => {
    const { key } = await sys.newUser('live-webm@example.com');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'murmur-live-'));
    const webm = path.join(dir, 'speech.webm');
    execFileSync('ffmpeg', ['-loglevel', 'error', '-i', WAV, '-c:a', 'libopus', '-b:a', '32k', '-f', 'webm', webm]);
    const c = await connectLive(sys.baseUrl, { key, query: { encoding: 'webm' } });
    expect((await c.next('open')).sample_rate).toBeNull();
    await c.stream(readFileSync(webm), { frameMs: 250, bytesPerSecond: 4_000 });
    c.control('close');
    await c.next('closed');
    expect(wordErrorRate(REFERENCE, finalText(c)).wer).toBeLessThan(0.6);
  });

  it('refuses binary data sent before authentication: 4401 with the reason, nothing read', async () => {
    const c = await connectLive(sys.baseUrl);
    c.send(pcm.subarray(0, 3200));
    const r = await refusal(c);
    expect(r.code).toBe(4401);
    expect(r.reason).toBe('missing_api_key');
    expect(r.error).toMatchObject({ type: 'authentication_error', code: 'missing_api_key', request_id: expect.stringMatching(/^req_/) });
    expect(c.messages.some((m) => m.type === 'open')).toBe(false);

    const bad = await connectLive(sys.baseUrl, { key: `svc_${'0'.repeat(64)}` });
    expect(await refusal(bad)).toMatchObject({ code: 4401, reason: 'invalid_api_key' });
  });

  it('opens a stream with a listen token once, as the token\'s owner; a reused, expired or doubled credential is refused', async () => {
    const a = await sys.newUser('live-token-a@example.com');
    const b = await sys.newUser('live-token-b@example.com');
    const token = async (key: string) => {
      const res = await fetch(`${sys.baseUrl}/api/v1/listen/tokens`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(201);
      return ((await res.json()) as Json).token as string;
    };
    // A's token, whoever presents it, streams for A.
    const tokenA = await token(a.key);
    const c = await connectLive(sys.baseUrl, { query: { token: tokenA } });
    await c.next('open');
    await c.stream(pcm.subarray(0, 64_000));
    c.control('close');
    await c.next('closed');
    expect((await usage(a.key)).counters.transcriptions).toBe(1);
    expect((await usage(b.key)).counters.transcriptions).toBe(0);
    // Used once: never again.
    const reused = await refusal(await connectLive(sys.baseUrl, { query: { token: tokenA } }));
    expect(reused).toMatchObject({ code: 4401, reason: 'invalid_api_key', error: { param: 'token' } });
    expect(reused.error!.message).toContain('already used');
    // B's key with A's token: which user was meant is not guessed.
    const both = await refusal(await connectLive(sys.baseUrl, { key: b.key, query: { token: await token(a.key) } }));
    expect(both).toMatchObject({ code: 4400, reason: 'invalid_request', error: { param: 'token' } });
    // Past its 60 s.
    const late = await token(a.key);
    sys.authClock.set(new Date(sys.authClock.now().getTime() + 61_000));
    expect(await refusal(await connectLive(sys.baseUrl, { query: { token: late } }))).toMatchObject({ code: 4401, reason: 'invalid_api_key' });
    expect((await usage(a.key)).counters.transcriptions).toBe(1);
  });

  it('refuses a read-only key (4403) and bad options (4400) before anything is held', async () => {
    const { user, key } = await sys.newUser('live-options@example.com');
    const readOnly = (await sys.admin.auth.createApiKey({ userId: user.id, name: 'ro', expiry: auth.KeyExpiry.KEY_EXPIRY_90_DAYS, scopes: ['read'] })).key;
    expect(await refusal(await connectLive(sys.baseUrl, { key: readOnly }))).toMatchObject({ code: 4403, reason: 'insufficient_scope' });
    const r = await refusal(await connectLive(sys.baseUrl, { key, query: { encoding: 'mp3' } }));
    expect(r).toMatchObject({ code: 4400, reason: 'invalid_request', error: { param: 'encoding' } });
    expect(await refusal(await connectLive(sys.baseUrl, { key, query: { encoding: 'webm', sample_rate: '44100' } }))).toMatchObject({ code: 4400, error: { param: 'sample_rate' } });
    expect(await refusal(await connectLive(sys.baseUrl, { key, query: { sample_rate: '4000' } }))).toMatchObject({ code: 4400, error: { param: 'sample_rate' } });
    const u = await usage(key);
    expect(u.credits.monthly_remaining).toBe(100);
  });

  it('tells a stream that declared linear16 but sends WebM what it sent (4415), charging nothing', async () => {
    const { key } = await sys.newUser('live-wrong-format@example.com');
    const c = await connectLive(sys.baseUrl, { key });
    await c.next('open');
    c.send(Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0, 0, 0, 0]));
    const r = await refusal(c);
    expect(r).toMatchObject({ code: 4415, reason: 'unsupported_audio' });
    expect(r.error!.message).toContain('WebM');
    expect((await usage(key)).credits.monthly_remaining).toBe(100);
    // Garbage declared as WebM: ffmpeg cannot decode it.
    const g = await connectLive(sys.baseUrl, { key, query: { encoding: 'webm' } });
    await g.next('open');
    g.send(Buffer.alloc(4096, 7));
    g.control('close');
    expect(await refusal(g)).toMatchObject({ code: 4415, reason: 'unsupported_audio' });
    expect((await usage(key)).credits.monthly_remaining).toBe(100);
  });

  it('closes on a frame over 128 KiB (4413) and on audio much faster than real time (4429), charging only what was received', async () => {
    const { key } = await sys.newUser('live-frames@example.com');
    const big = await connectLive(sys.baseUrl, { key });
    await big.next('open');
    big.send(Buffer.alloc(128 * 1024 + 2));
    expect(await refusal(big)).toMatchObject({ code: 4413, reason: 'audio_too_large' });
    expect((await usage(key)).credits.monthly_remaining).toBe(100);

    const fast = await connectLive(sys.baseUrl, { key });
    await fast.next('open');
    // 60 s of audio at once: past the 10 s allowance at 2× real time. Silence, which the recognizer
    // takes at once: speech would be taken only as fast as it is recognised (the socket's
    // backpressure slows the client), which on a loaded machine is not 2× real time.
    await fast.stream(Buffer.alloc(60 * 32_000), { frameMs: 1000 });
    const r = await refusal(fast);
    expect(r).toMatchObject({ code: 4429, reason: 'audio_too_fast' });
    const u = await usage(key);
    expect(u.credits.monthly_remaining).toBe(99);
    // The 10 s allowance plus twice the time it took, far from the 60 s sent.
    expect(u.counters.transcription_seconds).toBeGreaterThanOrEqual(10);
    expect(u.counters.transcription_seconds).toBeLessThan(30);
  });

  it('closes a silent stream after the idle limit (4408), and keepalives keep it open', async () => {
    const { key } = await sys.newUser('live-idle@example.com');
    const c = await connectLive(sys.baseUrl, { key });
    await c.next('open');
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 1_500));
      c.control('keepalive');
    }
    expect(c.ws.readyState).toBe(c.ws.OPEN);
    // This process (client and gateway both) stalls past the limit, as a loaded machine's can. The
    // client's keepalive was due first and waits in the socket: the gateway reads it before it judges
    // the stream idle, and does not blame the client for its own stall.
    // The stall ends in the check phase, so the next turn of the loop runs both timers before it reads.
    await new Promise<void>((resolve) =>
      setImmediate(() => {
        setTimeout(() => {
          c.control('keepalive');
          resolve();
        }, 10);
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3_300);
      }),
    );
    await new Promise((r) => setTimeout(r, 500));
    expect(c.messages.filter((m) => m.type === 'error')).toEqual([]);
    expect(c.ws.readyState).toBe(c.ws.OPEN);
    expect(await refusal(c)).toMatchObject({ code: 4408, reason: 'request_timeout' });
    expect((await usage(key)).credits.monthly_remaining).toBe(100);
  });

  it('counts the idle limit from `open`: a slow start (auth, admission, the recognizer) is not the client\'s silence', async () => {
    const { key } = await sys.newUser('live-slow-open@example.com');
    const c = await connectLive(sys.baseUrl, { key });
    // Upgraded, the stream's set-up under way: this process stalls past the limit before `open`.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3_300);
    await c.next('open');
    await c.stream(pcm.subarray(0, 32_000));
    c.control('close');
    await c.next('closed');
    expect(await c.closed).toEqual({ code: 1000, reason: 'closed' });
    expect(c.messages.filter((m) => m.type === 'error')).toEqual([]);
  });

  it('waits for a recognizer far behind after the client\'s close: the idle limit no longer counts, no final is lost', async () => {
    const { key } = await sys.newUser('live-behind@example.com');
    const c = await connectLive(sys.baseUrl, { key });
    await c.next('open');
    await c.stream(pcm.subarray(0, 3 * 32_000));
    await c.keepAliveWhile(c.next('speech_started'));
    // This test's recognizer (a child of this process) stops for longer than the 3 s idle limit.
    const [recognizer] = execFileSync('pgrep', ['-P', String(process.pid), '-f', 'ps-live'], { encoding: 'utf8' }).trim().split('\n').map(Number);
    process.kill(recognizer!, 'SIGSTOP');
    c.control('close');
    await new Promise((r) => setTimeout(r, 4_000));
    process.kill(recognizer!, 'SIGCONT');
    await c.next('closed');
    expect(await c.closed).toEqual({ code: 1000, reason: 'closed' });
    expect(c.messages.some((m) => m.type === 'final')).toBe(true);
  });

  it('refuses a user with no credits left (4402) before any audio, and a third stream at once (4429)', async () => {
    const poor = await sys.newUser('live-poor@example.com');
    await sys.admin.billing.adjustCredits({ userId: poor.user.id, monthlyCredits: 0, prepaidCredits: 0, note: 'test' });
    const r = await refusal(await connectLive(sys.baseUrl, { key: poor.key }));
    expect(r).toMatchObject({ code: 4402, reason: 'insufficient_tokens' });

    const { key } = await sys.newUser('live-concurrent@example.com');
    const a = await connectLive(sys.baseUrl, { key });
    const b = await connectLive(sys.baseUrl, { key });
    await Promise.all([a.next('open'), b.next('open')]);
    const third = await refusal(await connectLive(sys.baseUrl, { key }));
    expect(third).toMatchObject({ code: 4429, reason: 'rate_limit_exceeded' });
    expect(third.error!.message).toContain('2 live streams');
    a.control('close');
    b.control('close');
    await Promise.all([a.closed, b.closed]);
    const u = await usage(key);
    expect(u.credits.monthly_remaining).toBe(100);
    expect(u.rate_limit.remaining).toBe(7);
  });

  // From 127.0.0.2: the bound it spends is that address's, not the other tests' 127.0.0.1.
  it('counts unknown keys and tokens against the address as REST does: past 20 a minute, 4429 too_many_invalid_keys before auth is asked', async () => {
    for (let i = 0; i < 10; i++) {
      expect(await refusal(await connectLive(sys.baseUrl, { key: `svc_${i.toString(16).padStart(64, 'a')}`, localAddress: OTHER }))).toMatchObject({ code: 4401, reason: 'invalid_api_key' });
      expect(await refusal(await connectLive(sys.baseUrl, { query: { token: `lst_${'A'.repeat(42)}${i}` }, localAddress: OTHER }))).toMatchObject({ code: 4401, reason: 'invalid_api_key' });
    }
    const blocked = await refusal(await connectLive(sys.baseUrl, { key: `svc_${'b'.repeat(64)}`, localAddress: OTHER }));
    expect(blocked).toMatchObject({ code: 4429, reason: 'too_many_invalid_keys' });
    expect(blocked.error!.message).toContain('unknown or revoked API keys');
    // Another address is not blocked.
    expect(await refusal(await connectLive(sys.baseUrl, { key: `svc_${'b'.repeat(64)}` }))).toMatchObject({ code: 4401, reason: 'invalid_api_key' });
  });

  it('drains: the last finals arrive, then 1012 server_draining', async () => {
    const { key } = await sys.newUser('live-drain@example.com');
    const c = await connectLive(sys.baseUrl, { key });
    await c.next('open');
    await c.stream(pcm);
    // Every frame reached the recognizer (a partial reaches the audio's end), none of it final yet.
    await c.keepAliveWhile(c.until((m) => m.type === 'partial' && m.end > seconds - 1.5));
    expect(c.messages.some((m) => m.type === 'final')).toBe(false);
    await sys.listen.drain(10_000);
    const closed = await c.closed;
    expect(closed).toEqual({ code: 1012, reason: 'server_draining' });
    expect(c.messages.at(-1)!.type).toBe('closed');
    expect(wordErrorRate(REFERENCE, finalText(c)).wer).toBeLessThan(0.5);
  });

});
