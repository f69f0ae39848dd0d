/**
 * The request log end to end (issue 36, docs/request-log.md): real REST and MCP calls through
 * the checked test gateway land in auth's log as entries of their owner — route template, tool,
 * status, error code, latency, key id and hint, request and trace ids, body sizes, credits — and
 * GET /api/v1/requests reads them back with filters and paging. Never a body, a key or
 * transcript text; never another user's call; nothing for a call that did not authenticate.
 */
import { callTool, connectMcp } from './support/mcp-client';
import { get, startSystem, type TestSystem } from './support/system';

const TRANSCRIPT = 'Ada said the quarterly numbers look strong and the launch moves to Thursday. Ben will draft the announcement.';

describe('the request log', () => {
  let sys: TestSystem;
  let ada: { id: string; key: string; keyId: string };
  let ben: { id: string; key: string; keyId: string };
  const sent: Record<string, { requestId: string; status: number; body: any }> = {};

  async function call(name: string, method: 'GET' | 'POST', path: string, key: string | undefined, body?: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(`${sys.baseUrl}${path}`, {
      method,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    sent[name] = { requestId: res.headers.get('x-request-id')!, status: res.status, body: text ? JSON.parse(text) : null };
    return sent[name]!;
  }

  const requests = async (query: string, key = ada.key) => {
    await sys.requestLog.flush();
    return get(sys.baseUrl, `/api/v1/requests${query ? `?${query}` : ''}`, key);
  };
  const entryOf = (list: any[], name: string) => list.find((e) => e.id === sent[name]!.requestId);

  beforeAll(async () => {
    sys = await startSystem({ ai: true });
    const a = await sys.newUser('ada-requests@example.com');
    const b = await sys.newUser('ben-requests@example.com');
    ada = { id: a.user.id, key: a.key, keyId: a.keyId };
    ben = { id: b.user.id, key: b.key, keyId: b.keyId };
    await call('me', 'GET', '/api/v1/me', ada.key, undefined, { 'x-request-id': 'req_my_own_id_0001' });
    await call('missing', 'GET', '/api/v1/recordings/rec_0000000000000000000000', ada.key);
    await call('convert', 'POST', '/api/v1/convert', ada.key, { transcript: TRANSCRIPT, kind: 'summary' });
    await call('badConvert', 'POST', '/api/v1/convert', ada.key, { transcript: TRANSCRIPT, kind: 'no-such-kind' });
    await call('anonymous', 'GET', '/api/v1/me', undefined);
    await call('benMe', 'GET', '/api/v1/me', ben.key);
    const mcp = await connectMcp(sys.baseUrl, ada.key);
    try {
      expect((await callTool(mcp, 'get_usage')).isError).toBe(false);
      expect((await callTool(mcp, 'get_recording', { recording_id: 'rec_0000000000000000000000' })).isError).toBe(true);
    } finally {
      await mcp.close();
    }
  });
  afterAll(async () => {
    await sys.stop();
  });

  it('records each REST call with its route template, status, error code, key, sizes and credits', async () => {
    const res = await requests('limit=100');
    expect(res.status).toBe(200);
    const list = res.body.data as any[];
    const me = entryOf(list, 'me');
    expect(me).toMatchObject({ object: 'request', id: 'req_my_own_id_0001', method: 'GET', route: '/api/v1/me', tool: null, status: 200, error_code: null, key_id: ada.keyId, credits_charged: 0 });
    expect(me.key_hint).toMatch(/^svc_[0-9a-f]{4}…[0-9a-f]{4}$/);
    expect(me.latency_ms).toBeGreaterThan(0);
    expect(me.bytes_out).toBeGreaterThan(50);
    expect(entryOf(list, 'missing')).toMatchObject({ route: '/api/v1/recordings/{id}', status: 404, error_code: 'not_found', credits_charged: 0 });
    const convert = entryOf(list, 'convert');
    expect(sent.convert!.body.credits_charged).toBeGreaterThan(0);
    expect(convert).toMatchObject({ method: 'POST', route: '/api/v1/convert', status: 200, credits_charged: sent.convert!.body.credits_charged });
    expect(convert.bytes_in).toBe(Buffer.byteLength(JSON.stringify({ transcript: TRANSCRIPT, kind: 'summary' })));
    expect(entryOf(list, 'badConvert')).toMatchObject({ status: 400, error_code: 'invalid_request', credits_charged: 0 });
  });

  it('records MCP calls by tool or JSON-RPC method, an isError result with its code', async () => {
    const list = (await requests('limit=100&route=/mcp')).body.data as any[];
    const tools = list.map((e) => e.tool);
    expect(tools).toEqual(expect.arrayContaining(['initialize', 'get_usage', 'get_recording']));
    expect(list.find((e) => e.tool === 'get_usage')).toMatchObject({ route: '/mcp', method: 'POST', status: 200, error_code: null, key_id: ada.keyId });
    expect(list.find((e) => e.tool === 'get_recording')).toMatchObject({ status: 200, error_code: 'not_found' });
    const byTool = (await requests('tool=get_usage')).body.data as any[];
    expect(byTool.map((e) => e.tool)).toEqual(['get_usage']);
  });

  it('keeps each user to their own calls, and a call without a valid key in nobody’s log', async () => {
    const adas = (await requests('limit=100')).body.data as any[];
    const bens = (await requests('limit=100', ben.key)).body.data as any[];
    expect(adas.every((e) => e.key_id === ada.keyId)).toBe(true);
    expect(entryOf(adas, 'benMe')).toBeUndefined();
    expect(entryOf(bens, 'benMe')).toMatchObject({ key_id: ben.keyId, status: 200 });
    expect(bens.some((e) => e.key_id === ada.keyId)).toBe(false);
    expect(entryOf([...adas, ...bens], 'anonymous')).toBeUndefined();
    // Filtering by another user's key finds nothing of theirs.
    expect((await requests(`key_id=${ada.keyId}`, ben.key)).body.data).toEqual([]);
  });

  it('never holds a body, a key or transcript text', async () => {
    const res = await requests('limit=100');
    const all = JSON.stringify(res.body);
    expect(all).not.toContain(ada.key);
    expect(all).not.toContain('quarterly');
    expect(all).not.toContain(sent.convert!.body.content.slice(0, 20));
  });

  it('filters by status class and exact status, and pages with cursors bound to the filters', async () => {
    const errors = (await requests('status_code=4xx&limit=100')).body.data as any[];
    expect(errors.length).toBeGreaterThanOrEqual(2);
    expect(errors.every((e) => e.status >= 400 && e.status < 500)).toBe(true);
    expect(((await requests('status_code=404')).body.data as any[]).map((e) => e.id)).toEqual([sent.missing!.requestId]);
    const all = ((await requests('limit=100')).body.data as any[]).map((e) => e.id);
    const walked: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await requests(`limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      walked.push(...page.body.data.map((e: any) => e.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    // The page reads themselves join the log as they go: the walk holds everything the first read saw, in order.
    expect(walked.filter((id) => all.includes(id))).toEqual(all);
    const first = await requests('limit=1');
    const reused = await requests(`limit=1&status_code=2xx&cursor=${encodeURIComponent(first.body.next_cursor)}`);
    expect(reused.status).toBe(400);
    expect(reused.body.error.param).toBe('cursor');
  });

  it('refuses filters it cannot read with a 400 naming them', async () => {
    for (const [query, param] of [
      ['status_code=teapot', 'status_code'],
      ['status_code=4XX', 'status_code'],
      ['key_id=svc_123', 'key_id'],
      ['created_after=2026-02-30', 'created_after'],
      ['created_after=2026-03-02&created_before=2026-03-01', 'created_before'],
      ['limit=0', 'limit'],
      ['page=2', 'page'],
    ] as const) {
      const res = await requests(query);
      expect([query, res.status, res.body.error?.param]).toEqual([query, 400, param]);
    }
  });
});
