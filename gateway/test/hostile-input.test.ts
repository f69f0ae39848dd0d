/**
 * The hostile-input suite (issue 11): well over 150 requests a careless or hostile client sends,
 * over every route and `/mcp`, from the tables in support/hostile-cases.ts, sent over raw sockets
 * against the real stack (auth, billing, library, transcription, conversion as gRPC servers; the
 * gateway's own HTTP server). Each must be refused quickly with a 4xx in the contract's error
 * body and X-Request-Id (on `/mcp`: that, a JSON-RPC error, or a tool result with isError), and
 * the stack must still serve normal requests afterwards.
 *
 * HOSTILE_TIMEOUT_MS (default 10 s) only catches hangs; HOSTILE_SEED replays another generated set.
 */
import { wavHeader } from '@murmur/transcription';
import { seedLibrary } from '@murmur/app';
import { hostileCases, LIST_PATHS, type HostileCase, type HostileContext, type ListPath } from './support/hostile-cases';
import { sendRaw, type RawResponse } from './support/raw-http';
import { get, startSystem, type TestSystem } from './support/system';

const TIMEOUT_MS = Number(process.env.HOSTILE_TIMEOUT_MS ?? 10_000);
const SEED = Number(process.env.HOSTILE_SEED ?? 20260111);
/** AI routes admit (and take a rate-limit slot) before reading a body: a fresh user every few calls. */
const AI_CALLS_PER_USER = 8;

jest.setTimeout(TIMEOUT_MS + 10_000);

const CASES = hostileCases(SEED);

/** The contract's error body (DESIGN.md §3), its request id echoed in X-Request-Id. */
function expectContractError(res: RawResponse, body: any): void {
  expect(res.headers['x-request-id']).toMatch(/^req_[A-Za-z0-9_-]{8,64}$/);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(body).toEqual({
    error: {
      type: expect.stringMatching(/_error$/),
      code: expect.any(String),
      message: expect.any(String),
      param: body?.error?.param === null ? null : expect.any(String),
      request_id: res.headers['x-request-id'],
    },
  });
  expect(body.error.message.length).toBeGreaterThan(10);
}

/** The error a case's answer carries, in whichever form it came (REST body, JSON-RPC, MCP tool result). */
function checkRefusal(c: HostileCase, res: RawResponse): { code?: string; param?: string | null } {
  let body: any;
  try {
    body = JSON.parse(res.body);
  } catch {
    throw new Error(`${c.name}: status ${res.status}, body is not JSON: ${JSON.stringify(res.body.slice(0, 200))}`);
  }
  if (c.mcp && res.status === 200) {
    // A JSON-RPC answer: a protocol error, or a tool result flagged isError carrying the contract body.
    if (body.error) {
      expect(body).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number), message: expect.any(String) } });
      return {};
    }
    expect(body.result?.isError).toBe(true);
    const inner = JSON.parse(body.result.content[0].text);
    expect(inner.error).toMatchObject({ type: expect.any(String), code: expect.any(String), message: expect.any(String) });
    return inner.error;
  }
  expect(res.status).toBeGreaterThanOrEqual(400);
  expect(res.status).toBeLessThan(500);
  if (c.mcp && body.jsonrpc === '2.0') {
    // The MCP transport's own refusals (wrong Accept or Content-Type, bad JSON) are JSON-RPC errors.
    expect(body.error).toMatchObject({ code: expect.any(Number), message: expect.any(String) });
    expect(res.headers['x-request-id']).toMatch(/^req_/);
    return {};
  }
  expectContractError(res, body);
  return body.error;
}

describe('hostile input', () => {
  let sys: TestSystem;
  let port: number;
  let ctx: HostileContext;

  // Starting every service and seeding two libraries can take minutes on a loaded machine: not the 20 s of one case.
  beforeAll(async () => {
    sys = await startSystem({ ai: true });
    port = Number(new URL(sys.baseUrl).port);
    const alice = await sys.newUser('hostile-alice@example.com');
    const bob = await sys.newUser('hostile-bob@example.com');
    await seedLibrary(sys.admin.library, alice.user.id, { recordings: 6, seed: 3 });
    await seedLibrary(sys.admin.library, bob.user.id, { recordings: 6, seed: 4 });
    const idsOf = async (key: string) => {
      const first = async (path: string) => (await get(sys.baseUrl, `/api/v1${path}?limit=1`, key)).body;
      const cursor = {} as Record<ListPath, string>;
      for (const list of LIST_PATHS) {
        const page = await first(list);
        if (!page.next_cursor) throw new Error(`seed gave ${list} a single page`);
        cursor[list] = page.next_cursor;
      }
      return {
        recording: (await first('/recordings')).data[0].id as string,
        thread: (await first('/thought-threads')).data[0].id as string,
        folder: (await first('/folders')).data[0].id as string,
        cursor,
      };
    };
    let aiUser = 0;
    let aiCalls = AI_CALLS_PER_USER;
    let aiKey = '';
    ctx = {
      key: alice.key,
      own: await idsOf(alice.key),
      foreign: await idsOf(bob.key),
      wav: Buffer.concat([wavHeader(16_000), Buffer.alloc(16_000)]),
      async aiKey() {
        if (aiCalls++ >= AI_CALLS_PER_USER) {
          aiKey = (await sys.newUser(`hostile-ai-${aiUser++}@example.com`)).key;
          aiCalls = 1;
        }
        return aiKey;
      },
    };
  }, 180_000);
  afterAll(async () => {
    await sys?.stop();
  });

  it('has at least 150 cases over every route and /mcp', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(150);
    expect(new Set(CASES.map((c) => c.name)).size).toBe(CASES.length);
    for (const route of ['/me', '/usage', '/recordings', '/thought-threads', '/folders', '/knowledge-bases', '/convert', '/transcribe', '/mcp']) {
      expect(CASES.some((c) => c.name.includes(route))).toBe(true);
    }
  });

  async function refused(c: HostileCase): Promise<void> {
    const res = await sendRaw(port, await c.request(ctx), TIMEOUT_MS);
    const error = checkRefusal(c, res);
    if (c.expect?.status !== undefined) expect(res.status).toBe(c.expect.status);
    if (c.expect?.code !== undefined) expect(error.code).toBe(c.expect.code);
    if (c.expect?.param !== undefined) expect(error.param).toBe(c.expect.param);
  }

  it.each(CASES.map((c) => [c.name, c] as const))('refuses %s with a 4xx in the contract', async (_name, c) => refused(c));

  it('still serves normal REST and MCP requests afterwards', async () => {
    expect((await get(sys.baseUrl, '/api/v1/me', ctx.key)).status).toBe(200);
    expect((await get(sys.baseUrl, '/api/v1/recordings?limit=2&q=plan', ctx.key)).status).toBe(200);
    const mcp = await fetch(`${sys.baseUrl}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ctx.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_folders', arguments: { limit: 1 } } }),
    });
    expect(mcp.status).toBe(200);
    const body = (await mcp.json()) as { result: { isError?: boolean; structuredContent: { object: string } } };
    expect(body.result.isError).toBeUndefined();
    expect(body.result.structuredContent.object).toBe('list');
  });
});

