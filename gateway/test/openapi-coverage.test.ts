/**
 * The answers the other integration tests rarely provoke, sent through the checked test gateway
 * (support/system.ts holds every response to the OpenAPI document): every documented operation
 * at least once, HEAD and OPTIONS, the unknown-path and other-method fallbacks, and the 503 of an
 * AI call whose engine is down (this system runs without transcription and conversion).
 */
import { seedLibrary } from '@murmur/app';
import { get, startSystem, type TestSystem } from './support/system';

describe('responses the document describes', () => {
  let sys: TestSystem;
  let key: string;

  beforeAll(async () => {
    sys = await startSystem();
    const u = await sys.newUser('coverage@example.com');
    key = u.key;
    await seedLibrary(sys.admin.library, u.user.id, { recordings: 3, seed: 7 });
  });
  afterAll(async () => {
    await sys.stop();
  });

  const api = (path: string) => get(sys.baseUrl, `/api/v1${path}`, key);
  const send = (method: string, path: string, init: RequestInit = {}) =>
    fetch(`${sys.baseUrl}/api/v1${path}`, { method, ...init, headers: { authorization: `Bearer ${key}`, ...(init.headers as Record<string, string>) } });

  it('answers every read operation', async () => {
    const recording = (await api('/recordings?limit=1')).body.data[0].id as string;
    const thread = (await api('/thought-threads?limit=1')).body.data[0].id as string;
    for (const path of ['/me', '/usage', `/recordings/${recording}`, `/thought-threads/${thread}`, '/folders', '/knowledge-bases', '/search?q=meeting', '/openapi.json']) {
      expect([path, (await api(path)).status]).toEqual([path, 200]);
    }
    const filtered = await api('/recordings?limit=2&q=the&created_after=2020-01-01&created_before=2100-01-01T00:00:00Z');
    expect(filtered.status).toBe(200);
  });

  it('answers HEAD on a read route like GET, without a body', async () => {
    const res = await send('HEAD', '/me');
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
  });

  it('answers OPTIONS and other methods with 405 and Allow', async () => {
    expect((await send('OPTIONS', '/recordings')).status).toBe(405);
    const res = await send('PUT', '/transcribe');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });

  it('answers unknown paths under /api/v1 with 404, before authentication', async () => {
    expect((await get(sys.baseUrl, '/api/v1')).status).toBe(404);
    expect((await get(sys.baseUrl, '/api/v1/recordings/a/b')).status).toBe(404);
  });

  it('answers an AI call whose engine is down with 503 service_unavailable', async () => {
    const convert = await send('POST', '/convert', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ transcript: 'We met and agreed on the budget.', kind: 'summary' }) });
    expect(convert.status).toBe(503);
    expect(((await convert.json()) as { error: { code: string } }).error.code).toBe('service_unavailable');
    const form = new FormData();
    form.append('audio', new Blob([Buffer.alloc(3200)], { type: 'audio/wav' }), 'a.wav');
    const transcribe = await send('POST', '/transcribe', { body: form });
    expect(transcribe.status).toBe(503);
  });
});
