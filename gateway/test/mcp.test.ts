/**
 * The MCP server over real HTTP with the SDK's Clients, on each protocol revision it serves
 * (2025-11-25 through the v1 SDK line's client, 2026-07-28 through the v2 line's): tools and
 * their schemas, the read tools against seeded data, tenancy, errors as isError results with
 * contract codes; and the HTTP rules before JSON-RPC (401, 403 Origin, 405, batches).
 */
import { seedLibrary } from '@murmur/app';
import { callTool as call, connectMcpAt, MCP_REVISIONS, type McpClient, type Structured } from './support/mcp-client';
import { startSystem, type TestSystem } from './support/system';

describe.each(MCP_REVISIONS)('MCP server on %s', (revision) => {
  let sys: TestSystem;
  let alice: { id: string; key: string };
  let bob: { id: string; key: string };
  let client: McpClient;

  const connect = (key: string) => connectMcpAt(revision, sys.baseUrl, key);

  beforeAll(async () => {
    sys = await startSystem();
    const a = await sys.newUser(`mcp-alice-${revision}@example.com`);
    const b = await sys.newUser(`mcp-bob-${revision}@example.com`);
    alice = { id: a.user.id, key: a.key };
    bob = { id: b.user.id, key: b.key };
    await seedLibrary(sys.admin.library, alice.id, { recordings: 12, seed: 5 });
    await seedLibrary(sys.admin.library, bob.id, { recordings: 6, seed: 6 });
    client = await connect(alice.key);
  });
  afterAll(async () => {
    await client?.close();
    await sys.stop();
  });

  it('speaks the revision its client asked for', () => {
    expect(client.getNegotiatedProtocolVersion?.() ?? '2025-11-25').toBe(revision);
  });

  it('lists the ten tools with titles, input and output schemas and explicit annotations', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      ['ask', 'convert', 'get_recording', 'get_thought_thread', 'get_usage', 'list_folders', 'list_recordings', 'list_thought_threads', 'search', 'transcribe'].sort(),
    );
    for (const tool of tools) {
      expect(tool.title).toEqual(expect.any(String));
      expect(tool.description!.length).toBeGreaterThan(40);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
      expect(tool.annotations?.openWorldHint).toBe(false);
      const ai = tool.name === 'transcribe' || tool.name === 'convert' || tool.name === 'ask';
      expect(tool.annotations?.readOnlyHint).toBe(!ai);
      if (ai) expect(tool.annotations?.destructiveHint).toBe(false);
    }
    const list = tools.find((t) => t.name === 'list_recordings')!;
    expect((list.inputSchema.properties as Structured).limit).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 });
  });

  it('pages recordings exactly as REST does, the page as structured content and each recording named in its text', async () => {
    const first = await call(client, 'list_recordings', { limit: 5 });
    expect(first.isError).toBe(false);
    expect(first.data).toMatchObject({ object: 'list', has_more: true });
    // Both revisions have structuredContent: the text names each recording and the next cursor, not the page's JSON again.
    expect(first.text.split('\n').slice(1, 6)).toEqual(first.data.data.map((r: Structured) => `- ${r.id}: ${r.title}`));
    expect(first.text).toContain(`cursor ${first.data.next_cursor}`);
    const rest = await fetch(`${sys.baseUrl}/api/v1/recordings?limit=5`, { headers: { authorization: `Bearer ${alice.key}` } });
    expect(((await rest.json()) as Structured).data).toEqual(first.data.data);
    const ids = new Set<string>();
    let cursor: string | undefined;
    do {
      const page = await call(client, 'list_recordings', { limit: 5, ...(cursor ? { cursor } : {}) });
      for (const r of page.data.data) ids.add(r.id);
      cursor = page.data.next_cursor ?? undefined;
    } while (cursor);
    expect(ids.size).toBe(12);
  });

  it('reads a recording, a thread, folders and usage', async () => {
    const id = (await call(client, 'list_recordings', { limit: 1 })).data.data[0].id;
    const rec = await call(client, 'get_recording', { recording_id: id });
    expect(rec.data).toMatchObject({ id, object: 'recording' });
    expect(rec.data.transcript.segments.length).toBeGreaterThan(0);
    const threadId = (await call(client, 'list_thought_threads')).data.data[0].id;
    expect((await call(client, 'get_thought_thread', { thread_id: threadId })).data.items.length).toBeGreaterThan(0);
    expect((await call(client, 'list_folders')).data.data.length).toBeGreaterThan(0);
    expect((await call(client, 'get_usage')).data).toMatchObject({ object: 'usage', rate_limit: { limit: 10 } });
  });

  it('answers another user’s ids with not_found as an isError result, exactly like missing ones', async () => {
    const bobClient = await connect(bob.key);
    const bobRecording = (await call(bobClient, 'list_recordings', { limit: 1 })).data.data[0].id;
    await bobClient.close();
    for (const recording_id of [bobRecording, 'rec_doesnotexist000000000000']) {
      const res = await call(client, 'get_recording', { recording_id });
      expect(res.isError).toBe(true);
      expect(res.data.error).toMatchObject({ code: 'not_found', type: 'invalid_request_error' });
      expect(JSON.parse(res.text)).toEqual(res.data);
    }
    const mine = await call(client, 'list_recordings', { limit: 100 });
    expect(mine.data.data.map((r: Structured) => r.id)).not.toContain(bobRecording);
  });

  it.each([
    ['list_recordings', { limit: 0 }],
    ['list_recordings', { limit: 101 }],
    ['list_recordings', { limit: 'ten' }],
    ['list_recordings', { created_after: 'yesterday' }],
    ['list_recordings', { cursor: 'forged' }],
    ['get_recording', {}],
    ['convert', { kind: 'summary' }],
    ['convert', { kind: 'summary', transcript: 'x', recording_id: 'rec_x' }],
  ])('refuses bad input to %s %j as an invalid_request result', async (name, args) => {
    const res = await call(client, name, args);
    expect(res.isError).toBe(true);
    expect(res.data.error.code).toBe('invalid_request');
  });
});

describe('MCP HTTP rules before JSON-RPC', () => {
  let sys: TestSystem;
  let alice: { id: string; key: string };
  beforeAll(async () => {
    sys = await startSystem();
    const a = await sys.newUser('mcp-http-alice@example.com');
    alice = { id: a.user.id, key: a.key };
  });
  afterAll(async () => sys?.stop());

  const initialize = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  const post = (headers: Record<string, string>, body = initialize) =>
    fetch(`${sys.baseUrl}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body });

  it.each([
    ['no key', {}, 'missing_api_key', 'Bearer realm="murmur"'],
    ['a malformed key', { authorization: 'Bearer nope' }, 'invalid_api_key', 'Bearer realm="murmur", error="invalid_token"'],
    ['an unknown key', { authorization: `Bearer svc_${'0'.repeat(64)}` }, 'invalid_api_key', 'Bearer realm="murmur", error="invalid_token"'],
  ])('answers %s with 401 and the contract body', async (_n, headers, code, challenge) => {
    const res = await post(headers);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(challenge);
    expect(((await res.json()) as Structured).error.code).toBe(code);
  });

  it('refuses a foreign Origin with 403 and allows a request without one', async () => {
    const res = await post({ authorization: `Bearer ${alice.key}`, origin: 'https://evil.example' });
    expect(res.status).toBe(403);
    expect(((await res.json()) as Structured).error.code).toBe('forbidden_origin');
    expect((await post({ authorization: `Bearer ${alice.key}` })).status).toBe(200);
  });

  it('answers GET and DELETE with 405', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${sys.baseUrl}/mcp`, { method, headers: { authorization: `Bearer ${alice.key}`, accept: 'text/event-stream' } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    }
  });

  it('rejects a JSON-RPC batch as an invalid request', async () => {
    const res = await post({ authorization: `Bearer ${alice.key}` }, `[${initialize}]`);
    expect(res.status).toBe(400);
    expect(((await res.json()) as Structured).error.code).toBe(-32600);
  });

  it('sends a list page as JSON text only to a client whose revision predates structuredContent; a recording always', async () => {
    await seedLibrary(sys.admin.library, alice.id, { recordings: 3, seed: 7 });
    const callTool = async (name: string, args: Structured, revision?: string) => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name, arguments: args } });
      const res = await post({ authorization: `Bearer ${alice.key}`, ...(revision ? { 'mcp-protocol-version': revision } : {}) }, body);
      expect(res.status).toBe(200);
      const { result } = (await res.json()) as Structured;
      return { text: result.content[0].text as string, structured: result.structuredContent as Structured };
    };
    // No header: the server assumes 2025-03-26, where the text is the whole result.
    for (const revision of [undefined, '2025-03-26']) {
      const page = await callTool('list_recordings', { limit: 2 }, revision);
      expect(JSON.parse(page.text)).toEqual(page.structured);
    }
    const page = await callTool('list_recordings', { limit: 2 }, '2025-06-18');
    expect(page.text).toBe(
      [`2 recordings on this page (every field of each is in structuredContent):`, ...page.structured.data.map((r: Structured) => `- ${r.id}: ${r.title}`), `More: call again with cursor ${page.structured.next_cursor}`].join('\n'),
    );
    const recording = await callTool('get_recording', { recording_id: page.structured.data[0].id }, '2025-06-18');
    expect(JSON.parse(recording.text)).toEqual(recording.structured);
  });

  it('rejects an unsupported MCP-Protocol-Version header', async () => {
    const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
    const res = await post({ authorization: `Bearer ${alice.key}`, 'mcp-protocol-version': '1999-01-01' }, list);
    expect(res.status).toBe(400);
  });
});
