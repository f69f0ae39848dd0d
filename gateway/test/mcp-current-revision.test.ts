/**
 * MCP revision 2026-07-28 (the v2 SDK line's client, pinned to it; raw JSON-RPC where the wire
 * itself is the point): no initialize handshake — `server/discover` names the server and what
 * it offers; every request carries its own `_meta` envelope; cacheable lists say how long they
 * keep. The AI tools over this revision: `transcribe` with a progressToken streams its progress
 * (the answer becomes SSE) and answers the transcript; a client that goes away mid-call cancels
 * the job and is charged nothing (on 2025-11-25 too); `convert` charges as on REST. The read
 * tools and their errors run on both revisions in mcp.test.ts; tasks stay on 2025-11-25
 * (mcp-tasks.test.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { librivoxUtterances } from '../../services/transcription/src/speech-fixtures';
import { callTool, connectMcpAt, expectValidOutput, outputValidators, type McpClient, type Structured } from './support/mcp-client';
import { eventually } from './support/faults';
import { get, startSystem, type TestSystem } from './support/system';

const REVISION = '2026-07-28';
const SPEECH = librivoxUtterances()[0]!;
const audio = readFileSync(SPEECH.wav).toString('base64');

/** A JSON-RPC request of this revision as a client sends it: the envelope in `_meta`, the revision in the header. */
function envelope(method: string, params: Structured = {}, revision = REVISION) {
  return {
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': revision,
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': revision,
      'mcp-method': method,
      ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}),
    },
  };
}

describe(`MCP on ${REVISION}`, () => {
  let sys: TestSystem;
  const clients: McpClient[] = [];

  async function newClient(system: TestSystem, email: string) {
    const { key } = await system.newUser(email);
    const client = await connectMcpAt(REVISION, system.baseUrl, key);
    clients.push(client);
    return { client, key };
  }
  const raw = async (key: string, method: string, params?: Structured, revision?: string) => {
    const { body, headers } = envelope(method, params, revision);
    const res = await fetch(`${sys.baseUrl}/mcp`, { method: 'POST', headers: { ...headers, authorization: `Bearer ${key}` }, body });
    return { status: res.status, body: (await res.json()) as Structured };
  };

  beforeAll(async () => {
    sys = await startSystem({ ai: true });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await sys.stop();
  });

  it('answers server/discover with the revision, the server and tools as its only capability', async () => {
    const { key } = await sys.newUser('modern-discover@example.com');
    const { status, body } = await raw(key, 'server/discover');
    expect(status).toBe(200);
    expect(body.result.supportedVersions).toEqual([REVISION]);
    expect(body.result._meta['io.modelcontextprotocol/serverInfo']).toMatchObject({ name: 'murmur', title: 'Murmur' });
    // The tool list never changes while a server runs: nothing to listen for.
    expect(body.result.capabilities).toEqual({ tools: { listChanged: false } });
  });

  it('lists tools as cacheable by any client for five minutes (the list is the same for every caller)', async () => {
    const { key } = await sys.newUser('modern-list@example.com');
    const { body } = await raw(key, 'tools/list');
    expect(body.result).toMatchObject({ ttlMs: 300_000, cacheScope: 'public' });
    expect(body.result.tools).toHaveLength(10);
  });

  it('lists the same tools, schemas and annotations as on 2025-11-25', async () => {
    const { key } = await sys.newUser('modern-same-tools@example.com');
    const [current, previous] = await Promise.all([connectMcpAt(REVISION, sys.baseUrl, key), connectMcpAt('2025-11-25', sys.baseUrl, key)]);
    clients.push(current, previous);
    // The JSON Schema dialect each SDK line names is its own; the schemas themselves are one.
    const listed = async (c: McpClient) =>
      (await c.listTools()).tools.map(({ name, title, description, inputSchema, outputSchema, annotations }) => ({
        name,
        title,
        description,
        annotations,
        inputSchema: { ...inputSchema, $schema: undefined },
        outputSchema: { ...outputSchema, $schema: undefined },
      }));
    expect(await listed(current)).toEqual(await listed(previous));
  });

  it('refuses what this revision removed or does not know: initialize (404, -32601) and an unknown revision', async () => {
    const { key } = await sys.newUser('modern-refusals@example.com');
    const init = await raw(key, 'initialize', { protocolVersion: REVISION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } });
    expect(init.status).toBe(404);
    expect(init.body.error.code).toBe(-32601);
    const unknown = await raw(key, 'tools/list', {}, '2099-01-01');
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.data?.supported ?? unknown.body.error.data).toEqual(expect.anything());
  });

  it('answers a malformed envelope or headers that disagree with the body with a JSON-RPC error and 400, never a 500', async () => {
    const { key } = await sys.newUser('modern-hostile@example.com');
    const send = async (body: string, headers: Record<string, string>) => {
      const res = await fetch(`${sys.baseUrl}/mcp`, { method: 'POST', headers: { ...headers, authorization: `Bearer ${key}` }, body });
      return { status: res.status, body: (await res.json()) as Structured };
    };
    const good = envelope('tools/call', { name: 'get_usage', arguments: {} });
    const cases: Array<[string, string, Record<string, string>]> = [
      ['a protocol version that is a number', good.body.replace('"2026-07-28"', '20260728'), good.headers],
      ['client info that is a string', good.body.replace('{"name":"raw","version":"1"}', '"raw"'), good.headers],
      ['an Mcp-Name naming another tool', good.body, { ...good.headers, 'mcp-name': 'convert' }],
      ['an Mcp-Method naming another method', good.body, { ...good.headers, 'mcp-method': 'tools/list' }],
      ['a revision header without the envelope', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }), good.headers],
    ];
    for (const [what, body, headers] of cases) {
      const res = await send(body, headers);
      expect([what, res.status]).toEqual([what, 400]);
      expect(res.body.error.code).toEqual(expect.any(Number));
    }
    // Nothing ran: no AI call was admitted or charged.
    expect((await get(sys.baseUrl, '/api/v1/usage', key)).body.counters.credits_used).toBe(0);
  });

  it('transcribes with progress streamed before the result, the same transcript and one charge', async () => {
    const { client, key } = await newClient(sys, 'modern-progress@example.com');
    const validators = await outputValidators(client);
    const seen: Array<{ progress: number; total?: number; message?: string }> = [];
    const res = await client.callTool({ name: 'transcribe', arguments: { audio_base64: audio, language: 'en' } }, undefined, {
      onprogress: (p) => void seen.push(p),
      resetTimeoutOnProgress: true,
    });
    expect(res.isError).toBeFalsy();
    expectValidOutput(validators, 'transcribe', res.structuredContent);
    expect(res.structuredContent).toMatchObject({ object: 'transcription', credits_charged: 1 });
    expect(seen.length).toBeGreaterThanOrEqual(1);
    expect(seen[seen.length - 1]).toMatchObject({ message: 'completed' });
    const usage = (await get(sys.baseUrl, '/api/v1/usage', key)).body;
    expect(usage.credits).toMatchObject({ monthly_remaining: 99, reserved: 0 });
  });

  it('converts an inline transcript, charged once, with the artifact as data, as on REST', async () => {
    const { client, key } = await newClient(sys, 'modern-convert@example.com');
    const validators = await outputValidators(client);
    const transcript = 'Maria will send the revised budget to finance by Friday.';
    const res = await callTool(client, 'convert', { transcript, kind: 'action_items' });
    expect(res.isError).toBe(false);
    expectValidOutput(validators, 'convert', res.data);
    expect(res.data).toMatchObject({ object: 'artifact', kind: 'action_items', credits_charged: 1 });
    expect(res.data.data).toEqual({ items: [{ task: 'Send the revised budget to finance', owner: 'Maria', due: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) }] });
    const rest = await fetch(`${sys.baseUrl}/api/v1/convert`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ transcript, kind: 'action_items' }),
    });
    expect(((await rest.json()) as Structured).data).toEqual(res.data.data);
  });

  describe.each(['2025-11-25', REVISION])('with no worker taking jobs, on %s', (revision) => {
    let idle: TestSystem;
    beforeAll(async () => {
      idle = await startSystem({ ai: true, jobs: { work: false } });
    });
    afterAll(async () => idle?.stop());

    it('cancels the job of a client that goes away mid-call: nothing charged, the job canceled, its audio gone', async () => {
      const { key } = await idle.newUser(`gone-${revision}@example.com`);
      const request = envelope('tools/call', { name: 'transcribe', arguments: { audio_base64: audio } });
      const message = JSON.parse(request.body) as Structured;
      if (revision === REVISION) message.params._meta.progressToken = 'p1';
      else message.params._meta = { progressToken: 'p1' }; // 2025-11-25: no envelope
      const headers = { ...request.headers, 'mcp-protocol-version': revision, authorization: `Bearer ${key}` };
      const gone = new AbortController();
      const res = await fetch(`${idle.baseUrl}/mcp`, { method: 'POST', headers, body: JSON.stringify(message), signal: gone.signal });
      // The answer is an event stream whose first message is the queued job's progress.
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const reader = res.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      expect(first).toContain('notifications/progress');
      const jobs = (await get(idle.baseUrl, '/api/v1/transcriptions', key)).body.data as Structured[];
      expect(jobs).toHaveLength(1);
      expect((await get(idle.baseUrl, '/api/v1/usage', key)).body.credits.reserved).toBe(1);
      gone.abort();
      await eventually('the job canceled', async () => (await get(idle.baseUrl, `/api/v1/transcriptions/${jobs[0]!.id}`, key)).body.status === 'canceled', 20_000);
      expect((await get(idle.baseUrl, '/api/v1/usage', key)).body.credits).toMatchObject({ monthly_remaining: 100, reserved: 0 });
      expect(readdirSync(idle.audioDir)).toEqual([]);
    });
  });
});
