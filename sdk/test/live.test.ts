/**
 * Live transcription through the SDK (`murmur.listen.connect`, `connectLive`) against a real
 * Murmur: the gateway's GET /api/v1/listen, the transcription service's streaming pocketsphinx
 * and billing, started as the SDK's other tests start them. Real speech (a LibriVox utterance
 * from Debian's pocketsphinx-testdata) goes in from a Node stream; partials, finals with words and
 * the closing summary come out, over Node's global WebSocket (the key in `Authorization`) and over
 * `ws` (Node 20's way) with a listen token; every refusal is the SDK's typed error for its close code.
 */
import * as fs from 'node:fs';
import { WebSocket as WsWebSocket } from 'ws';
import {
  AudioTooLargeError, AuthenticationError, connectLive, EngineFailedError, InsufficientCreditsError, InternalServerError, InvalidRequestError, LiveConnectionError, Murmur, PermissionDeniedError,
  RateLimitError, ServiceUnavailableError, SpendingCapError, UnsupportedAudioError, type LiveEvent, type LiveFinal, type LiveSession,
} from '@murmur/sdk';
import { closeFailure, takesHeaders } from '../src/live';
import { wordErrorRate } from '../../services/transcription/src/wer';
import { startSystem, type TestSystem } from '../../gateway/test/support/system';

const WAV = '/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav';
const REFERENCE = 'and mister john dashwood had then leisure to consider how much there might be prudently in his power to do for them';
/** The WAV's 16 kHz mono PCM: its bytes after the 44-byte header. */
const PCM_BYTES = fs.statSync(WAV).size - 44;
const SECONDS = PCM_BYTES / 32_000;

/** Every event of the session until it ends, read while the audio is still being sent. */
async function collect(session: LiveSession): Promise<LiveEvent[]> {
  const events: LiveEvent[] = [];
  for await (const event of session) events.push(event);
  return events;
}

const finalText = (events: LiveEvent[]) =>
  events
    .filter((e): e is LiveFinal => e.type === 'final')
    .map((e) => e.text)
    .join(' ');

describe('live transcription through the SDK', () => {
  let sys: TestSystem;

  beforeAll(async () => {
    sys = await startSystem({ ai: true });
  });
  afterAll(async () => {
    await sys?.stop();
  });

  it('streams real speech from a Node stream over the global WebSocket with the key: partials, finals with words, then the summary', async () => {
    expect(typeof globalThis.WebSocket).toBe('function'); // Node 22+, as the repository's scripts run
    const { key } = await sys.newUser('sdk-live@example.com');
    const murmur = new Murmur({ apiKey: key, baseUrl: sys.baseUrl });
    const session = await murmur.listen.connect({ language: 'en' });
    expect(session.id).toMatch(/^trn_/);
    expect(session.opened).toMatchObject({ type: 'open', encoding: 'linear16', sample_rate: 16000, model: expect.stringContaining('pocketsphinx') });
    const reading = collect(session);
    const sent = await session.pipe(fs.createReadStream(WAV, { start: 44 }));
    expect(sent).toBe(PCM_BYTES);
    const summary = await session.close();
    const events = await reading;

    const types = events.map((e) => e.type);
    expect(types.at(-1)).toBe('closed');
    expect(types.indexOf('speech_started')).toBeLessThan(types.indexOf('final'));
    expect(types).toContain('partial');
    expect(wordErrorRate(REFERENCE, finalText(events)).wer).toBeLessThan(0.5);
    const words = events.filter((e): e is LiveFinal => e.type === 'final').flatMap((f) => f.words);
    expect(words.length).toBeGreaterThan(10);
    for (const w of words) expect(w).toEqual({ text: expect.any(String), start: expect.any(Number), end: expect.any(Number), confidence: expect.any(Number), speaker: null });
    expect(summary).toEqual(events.at(-1));
    expect(summary).toMatchObject({ type: 'closed', credits_charged: 1, recording_id: null });
    expect(summary.duration_seconds).toBeCloseTo(SECONDS, 1);
    expect(await session.done).toBe(summary);
    expect((await murmur.usage()).counters.transcriptions).toBe(1);
    expect(() => session.send(new Uint8Array(2))).toThrow(/closing or closed/);
  });

  it('on Node 20’s ws with a listen token (as where headers cannot be sent): events by callback, and the session saved with its words', async () => {
    const { key } = await sys.newUser('sdk-live-token@example.com');
    const murmur = new Murmur({ apiKey: key, baseUrl: sys.baseUrl });
    const session = await murmur.listen.connect({ webSocket: WsWebSocket, auth: 'token', save: true, title: 'Live from the SDK' });
    const finals: LiveFinal[] = [];
    let partials = 0;
    session.on('final', (f) => finals.push(f));
    session.on('partial', () => partials++);
    // In frames of a tenth of a second, as a microphone would send them.
    const pcm = fs.readFileSync(WAV).subarray(44);
    for (let at = 0; at < pcm.length; at += 3_200) session.send(pcm.subarray(at, at + 3_200));
    const summary = await session.close();
    expect(partials).toBeGreaterThan(0);
    expect(wordErrorRate(REFERENCE, finals.map((f) => f.text).join(' ')).wer).toBeLessThan(0.5);
    expect(summary.recording_id).toMatch(/^rec_/);
    const recording = await murmur.recordings.get(summary.recording_id!, { words: true });
    expect(recording.title).toBe('Live from the SDK');
    expect(recording.transcript!.words!.map((w) => w.text)).toEqual(finals.flatMap((f) => f.words.map((w) => w.text)));
    // The token it used opened this stream only; the usage is the key owner's.
    expect((await murmur.usage()).counters.transcriptions).toBe(1);
  });

  it('connects from a listen token alone, as a browser page does, and a used token is an AuthenticationError (4401)', async () => {
    const { key } = await sys.newUser('sdk-live-page@example.com');
    const server = new Murmur({ apiKey: key, baseUrl: sys.baseUrl });
    const { token } = await server.listen.createToken();
    const session = await connectLive({ baseUrl: sys.baseUrl, token, webSocket: WsWebSocket });
    await session.pipe([fs.readFileSync(WAV).subarray(44, 44 + 64_000)]);
    expect((await session.close()).credits_charged).toBe(1);

    const reused = await connectLive({ url: server.listenUrl({ token }), webSocket: WsWebSocket }).catch((e: unknown) => e);
    expect(reused).toBeInstanceOf(AuthenticationError);
    expect(reused).toMatchObject({ status: 401, code: 'invalid_api_key', param: 'token', requestId: expect.stringMatching(/^req_/) });
    expect((reused as Error).message).toContain('already used');
  });

  it('opens from the stream URL a server made with a token, and closes at once with nothing sent: a summary of nothing', async () => {
    const { key } = await sys.newUser('sdk-live-url@example.com');
    const server = new Murmur({ apiKey: key, baseUrl: sys.baseUrl });
    const url = server.listen.url({ token: (await server.listen.createToken()).token });
    expect(url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/api\/v1\/listen\?token=lst_/);
    const session = await connectLive({ url });
    expect(await session.close()).toEqual({ type: 'closed', duration_seconds: 0, credits_charged: 0, recording_id: null });
  });

  it('is refused with the typed error of its close code: no credits (4402), a bad option (4400), a bad key (4401)', async () => {
    const poor = await sys.newUser('sdk-live-poor@example.com');
    await sys.admin.billing.adjustCredits({ userId: poor.user.id, monthlyCredits: 0, prepaidCredits: 0, note: 'test' });
    const broke = await new Murmur({ apiKey: poor.key, baseUrl: sys.baseUrl }).listen.connect().catch((e: unknown) => e);
    expect(broke).toBeInstanceOf(InsufficientCreditsError);
    expect(broke).toMatchObject({ status: 402, code: 'insufficient_tokens', requestId: expect.stringMatching(/^req_/) });

    const { key } = await sys.newUser('sdk-live-refused@example.com');
    const badRate = await new Murmur({ apiKey: key, baseUrl: sys.baseUrl }).listen.connect({ sample_rate: 4000 }).catch((e: unknown) => e);
    expect(badRate).toBeInstanceOf(InvalidRequestError);
    expect(badRate).toMatchObject({ code: 'invalid_request', param: 'sample_rate' });
    const badKey = await new Murmur({ apiKey: `svc_${'0'.repeat(64)}`, baseUrl: sys.baseUrl }).listen.connect({ webSocket: WsWebSocket }).catch((e: unknown) => e);
    expect(badKey).toBeInstanceOf(AuthenticationError);
    expect((await new Murmur({ apiKey: key, baseUrl: sys.baseUrl }).usage()).credits.monthly_remaining).toBe(100);
  });

  it('fails a session the server ends (audio that is not the declared encoding: 4415) with the typed error, for the iterator, done and close()', async () => {
    const { key } = await sys.newUser('sdk-live-webm@example.com');
    const session = await new Murmur({ apiKey: key, baseUrl: sys.baseUrl }).listen.connect();
    const errors: Error[] = [];
    session.on('error', (e) => errors.push(e));
    const reading = collect(session).catch((e: unknown) => e);
    // WebM's magic bytes on a linear16 stream.
    session.send(new Uint8Array([0x1a, 0x45, 0xdf, 0xa3, 0, 0, 0, 0]));
    const failure = await session.done.catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(UnsupportedAudioError);
    expect(failure).toMatchObject({ status: 415, code: 'unsupported_audio' });
    expect(await reading).toBe(failure);
    expect(errors).toEqual([failure]);
    await expect(session.close()).rejects.toBe(failure);
    expect(() => session.send(new Uint8Array(2))).toThrow(failure as Error);
  });

  it('aborts at once: done fails with the abort reason, and nothing more is sent', async () => {
    const { key } = await sys.newUser('sdk-live-abort@example.com');
    const controller = new AbortController();
    const session = await new Murmur({ apiKey: key, baseUrl: sys.baseUrl }).listen.connect({ signal: controller.signal });
    session.send(fs.readFileSync(WAV).subarray(44, 44 + 32_000));
    const reason = new Error('the user left');
    controller.abort(reason);
    await expect(session.done).rejects.toBe(reason);
    expect(() => session.send(new Uint8Array(2))).toThrow(reason);
  });
});

describe('close codes', () => {
  it('are the typed error of the contract code before them (4000 + its status), or a connection error', () => {
    const body = (code: string) => ({ type: 'x', code, message: `m ${code}`, param: null, request_id: 'req_1' });
    const cases: Array<[number, string, Function, string]> = [
      [4400, 'invalid_request', InvalidRequestError, 'invalid_request'],
      [4401, 'invalid_api_key', AuthenticationError, 'invalid_api_key'],
      [4402, 'insufficient_tokens', InsufficientCreditsError, 'insufficient_tokens'],
      [4402, 'spending_cap_reached', SpendingCapError, 'spending_cap_reached'],
      [4403, 'insufficient_scope', PermissionDeniedError, 'insufficient_scope'],
      [4413, 'audio_too_large', AudioTooLargeError, 'audio_too_large'],
      [4415, 'unsupported_audio', UnsupportedAudioError, 'unsupported_audio'],
      [4429, 'audio_too_fast', RateLimitError, 'audio_too_fast'],
      [4502, 'transcription_failed', EngineFailedError, 'transcription_failed'],
      [4503, 'service_unavailable', ServiceUnavailableError, 'service_unavailable'],
      [4500, 'internal_error', InternalServerError, 'internal_error'],
    ];
    for (const [code, reason, type, errorCode] of cases) {
      const err = closeFailure(code, reason, body(reason), 'h');
      expect([code, reason, err instanceof type, (err as { code?: string }).code, (err as { status?: number }).status]).toEqual([code, reason, true, errorCode, code - 4000]);
    }
    // No error message before the close (a proxy cut it off): the reason is the code.
    expect(closeFailure(4408, 'request_timeout', undefined, 'h')).toMatchObject({ status: 408, code: 'request_timeout' });
    expect(closeFailure(1000, 'closed', undefined, 'h')).toBeUndefined();
    for (const [code, reason] of [[1012, 'server_draining'], [1006, ''], [1009, '']] as const) {
      const err = closeFailure(code, reason, undefined, 'h');
      expect(err).toBeInstanceOf(LiveConnectionError);
      expect(err).toMatchObject({ closeCode: code, reason });
    }
    expect(closeFailure(1012, 'server_draining', undefined, 'h')!.message).toMatch(/every final was sent\. Open a new stream/);
  });

  it('put the key in a header only where the WebSocket can send one', () => {
    expect(takesHeaders(WsWebSocket)).toBe(true);
    expect(takesHeaders(globalThis.WebSocket as never)).toBe(true);
    class BrowserLike {}
    expect(takesHeaders(BrowserLike as never)).toBe(false);
  });
});
