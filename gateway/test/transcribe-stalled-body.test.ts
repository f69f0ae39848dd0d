/**
 * Issue 11 item 1: a body that stops arriving — 10 of 100 declared bytes, an upload stalled
 * mid-file, a /convert or /mcp body cut off — answers 408 `request_timeout` after the body idle timeout
 * (short here, MURMUR_BODY_IDLE_TIMEOUT_MS in production) and frees what it held: the
 * transcription call and its temp files, the gateway's spool, the Idempotency-Key (a retry is
 * not 409). A client that disconnects mid-upload frees its key the same way. Nothing is charged,
 * and normal requests keep working. Issue 30: a header section that stops half-way is 408
 * `request_timeout` too (after the server's headers timeout, short here); a client that
 * half-closes right after sending its request is answered, and its key freed.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import * as http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FORM_TYPE, SPEECH_WAV, creditsOf, feedUntil, formBody, rawPost } from './support/ai-calls';
import { buildRequest, sendRaw } from './support/raw-http';
import { startSystem, type TestSystem } from './support/system';

/**
 * Short, so the tests wait little. A body sent whole is never cut by it, even across a pause of
 * this process (body-idle-timeout.test.ts); a test that waits for a state of a stalled request
 * keeps its body arriving until that state is reached (feedUntil), so no timing decides.
 */
const IDLE_MS = 1500;

/** Resolves once `check` holds; only to wait for asynchronous cleanup, bounded to catch a leak. */
async function eventually(check: () => boolean): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return check();
}

describe('a request body that stops arriving', () => {
  let sys: TestSystem;
  let key: string;
  let userId: string;
  const speech = readFileSync(SPEECH_WAV);
  // The gateway's spool and the transcription service's upload files go here, so a leak shows.
  const tmp = mkdtempSync(path.join(tmpdir(), 'murmur-stall-test-'));
  const leftovers = () => readdirSync(tmp);

  beforeAll(async () => {
    sys = await startSystem({ ai: true, bodyIdleTimeoutMs: IDLE_MS, headersTimeoutMs: IDLE_MS, tmpDir: tmp });
    const u = await sys.newUser('stalled@example.com');
    key = u.key;
    userId = u.user.id;
  });
  afterAll(async () => {
    await sys.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  const expectTimeout = (res: { status: number; headers: http.IncomingHttpHeaders; body: any }) => {
    expect(res.status).toBe(408);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'request_timeout', param: null });
    expect(res.headers.connection).toBe('close');
  };

  it('answers 408 when 10 of 100 declared bytes arrive, and frees the Idempotency-Key', async () => {
    const before = await creditsOf(sys, userId);
    const headers = { 'content-type': 'application/json', 'content-length': '100', 'idempotency-key': 'stall-json-1' };
    expectTimeout(await rawPost(sys.baseUrl, '/api/v1/transcribe', key, headers, ['{"language"'], { stall: true }));
    const body = JSON.stringify({ audio_base64: speech.toString('base64') });
    const retry = await rawPost(sys.baseUrl, '/api/v1/transcribe', key, { ...headers, 'content-length': String(body.length) }, [body]);
    expect(retry.status).toBe(200);
    const after = await creditsOf(sys, userId);
    expect(after.creditsUsed).toBe(before.creditsUsed + retry.body.credits_charged);
  });

  it('answers 408 for a multipart upload stalled mid-file and removes every temp file it made', async () => {
    const before = await creditsOf(sys, userId);
    const head = formBody([{ name: 'response_format', value: 'text' }, { name: 'audio', file: speech }], true);
    // The upload keeps arriving until it holds the service's upload file and the gateway's spool (no language yet), then stalls…
    const answer = rawPost(sys.baseUrl, '/api/v1/transcribe', key, { 'content-type': FORM_TYPE, 'idempotency-key': 'stall-form-1' }, [head.subarray(0, 60_000)], {
      feed: { bytes: head.subarray(60_000, head.length - 1_000), until: () => leftovers().length >= 2 },
    });
    expect(await eventually(() => leftovers().length >= 2)).toBe(true);
    expectTimeout(await answer);
    // …and frees both.
    expect(await eventually(() => leftovers().length === 0)).toBe(true);
    expect(await creditsOf(sys, userId)).toEqual(before);
    const retry = await rawPost(sys.baseUrl, '/api/v1/transcribe', key, { 'content-type': FORM_TYPE, 'idempotency-key': 'stall-form-1' }, [head]);
    expect(retry.status).toBe(200);
    expect(retry.headers['content-type']).toContain('text/plain');
    expect(await eventually(() => leftovers().length === 0)).toBe(true);
  });

  it('answers 408 for a /convert body that stops arriving', async () => {
    const before = await creditsOf(sys, userId);
    const headers = { 'content-type': 'application/json', 'content-length': '200' };
    expectTimeout(await rawPost(sys.baseUrl, '/api/v1/convert', key, headers, ['{"kind":"summary","transcript":"We met'], { stall: true }));
    expect(await creditsOf(sys, userId)).toEqual(before);
  });

  it('answers 408 for a /mcp body that stops arriving, and still serves /mcp after', async () => {
    const before = await creditsOf(sys, userId);
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': '300' };
    expectTimeout(await rawPost(sys.baseUrl, '/mcp', key, headers, ['{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"transcribe","arguments":{"audio_base64":"UklG'], { stall: true }));
    expect(await creditsOf(sys, userId)).toEqual(before);
    const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    const ok = await rawPost(sys.baseUrl, '/mcp', key, { ...headers, 'content-length': String(list.length) }, [list]);
    expect(ok.status).toBe(200);
  });

  it('frees the Idempotency-Key of a client that disconnects mid-upload: the retry is not 409', async () => {
    const before = await creditsOf(sys, userId);
    const body = formBody([{ name: 'audio', file: speech }]);
    const headers = { authorization: `Bearer ${key}`, 'content-type': FORM_TYPE, 'idempotency-key': 'gone-1', 'content-length': String(body.length) };
    const req = http.request(`${sys.baseUrl}/api/v1/transcribe`, { method: 'POST', headers, agent: false });
    req.on('error', () => {});
    await new Promise<void>((resolve) => req.write(body.subarray(0, 50_000), () => resolve()));
    // The upload keeps arriving until the gateway is reading it (the transcription call has started spooling).
    await feedUntil(req, body.subarray(50_000, body.length - 1_000), () => leftovers().length > 0);
    req.destroy();
    expect(await eventually(() => leftovers().length === 0)).toBe(true);
    const retry = await rawPost(sys.baseUrl, '/api/v1/transcribe', key, { 'content-type': FORM_TYPE, 'idempotency-key': 'gone-1' }, [body]);
    expect(retry.status).toBe(200);
    const after = await creditsOf(sys, userId);
    expect(after.creditsUsed).toBe(before.creditsUsed + retry.body.credits_charged);
  });

  it('answers 408 request_timeout in the contract body when a header section stops half-way', async () => {
    const port = Number(new URL(sys.baseUrl).port);
    const res = await sendRaw(port, `POST /api/v1/transcribe HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Ty`, 20_000);
    expect(res.status).toBe(408);
    expect(res.headers.connection).toBe('close');
    expect(res.headers['x-request-id']).toMatch(/^req_/);
    expect(JSON.parse(res.body).error).toMatchObject({ type: 'invalid_request_error', code: 'request_timeout', param: null, request_id: res.headers['x-request-id'] });
  });

  it('answers a request whose client half-closed right after sending it, and frees its Idempotency-Key at once', async () => {
    // Its own user: the calls of this file would otherwise fill the 10-a-minute window.
    const own = await sys.newUser('half-closed@example.com');
    const port = Number(new URL(sys.baseUrl).port);
    const headers: Array<[string, string]> = [['Authorization', `Bearer ${own.key}`], ['Content-Type', 'application/json'], ['Idempotency-Key', 'half-closed-1']];
    const cut = await sendRaw(port, buildRequest({ method: 'POST', target: '/api/v1/transcribe', headers, body: '{"audio_base64": "AAAA' }), 20_000, { halfClose: true });
    expect(cut.status).toBe(400);
    expect(JSON.parse(cut.body).error).toMatchObject({ code: 'invalid_request', param: null });
    const body = JSON.stringify({ audio_base64: speech.toString('base64') });
    const retry = await rawPost(sys.baseUrl, '/api/v1/transcribe', own.key, { 'content-type': 'application/json', 'idempotency-key': 'half-closed-1', 'content-length': String(body.length) }, [body]);
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ object: 'transcription' });
  });

  it('lets a normal upload through whatever the timeout', async () => {
    const res = await rawPost(sys.baseUrl, '/api/v1/transcribe', key, { 'content-type': FORM_TYPE }, [formBody([{ name: 'audio', file: speech }])]);
    expect(res.status).toBe(200);
  });
});
