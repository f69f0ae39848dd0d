/**
 * Issue #16 end to end: Murmur added to an MCP client by its URL alone. The MCP SDK's Client
 * with its OAuth provider finds the authorization server through the MCP server's Protected
 * Resource Metadata, registers, sends the person to the app's consent screen (real Chromium,
 * signed in), exchanges the code and calls the tools as that person — with the same isolation
 * as API keys (a two-user matrix run with OAuth tokens), scopes enforced per tool (403
 * insufficient_scope), the token refused on REST (another resource), an expired access token
 * refreshed by the SDK, and a revoked connection refused on its next call. API keys keep working,
 * and the same tokens work on the current revision (2026-07-28) through the v2 SDK line's client.
 */
import type { BrowserContext, Page } from 'playwright-core';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { seedLibrary } from '../src/seed/seed-library';
import { callTool, connectMcpAt } from '../../gateway/test/support/mcp-client';
import { startSystem, type TestSystem } from '../../gateway/test/support/system';
import { signInLink } from '../src/web/config';
import { startApp, type TestApp } from './support/app-browser';
import { connectWithOAuth, MemoryOAuthProvider, RequestTracker, startCallback, type Callback } from './support/oauth-client';

jest.setTimeout(180_000);

type Json = Record<string, any>;
const HOUR_MS = 3_600_000;

describe('MCP by URL with OAuth (SDK client, consent in Chromium)', () => {
  let sys: TestSystem;
  let app: TestApp;
  let callback: Callback;
  const users: Record<'alice' | 'bob', { id: string; key: string }> = {} as never;
  const sessions: Array<{ context: BrowserContext; page: Page }> = [];

  beforeAll(async () => {
    sys = await startSystem({ ai: true });
    app = await startApp(sys);
    sys.oauth.authorizationServer = app.url;
    callback = await startCallback();
    for (const name of ['alice', 'bob'] as const) {
      const { user, key } = await sys.newUser(`oauth-${name}@example.com`);
      users[name] = { id: user.id, key };
      await seedLibrary(sys.admin.library, user.id, { recordings: 4, seed: name === 'alice' ? 21 : 22 });
    }
  });
  afterAll(async () => {
    for (const s of sessions) await s.context.close();
    await callback?.stop();
    await app?.stop();
    await sys?.stop();
  });

  const mcpUrl = () => `${sys.baseUrl}/mcp`;

  /** A browser signed in to the app as `userId`. */
  async function signedIn(userId: string): Promise<Page> {
    const context = await app.browser.newContext();
    const page = await context.newPage();
    sessions.push({ context, page });
    const { token } = await sys.admin.auth.createSignInLink({ userId });
    await page.goto(signInLink(app.url, token));
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(/\/settings\/developer$/);
    return page;
  }

  /** An MCP client of `userId` connected through the whole OAuth dance. */
  async function connectAs(userId: string, scope?: string): Promise<{ client: Client; provider: MemoryOAuthProvider; requests: RequestTracker }> {
    const provider = new MemoryOAuthProvider(callback.url);
    const requests = new RequestTracker();
    const client = await connectWithOAuth(mcpUrl(), provider, callback, await signedIn(userId), scope, requests);
    return { client, provider, requests };
  }

  /** A raw JSON-RPC tools/call with a bearer token, to see HTTP statuses and headers. */
  function rawCall(token: string, name: string, args: Json = {}): Promise<Response> {
    return fetch(mcpUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}`, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    });
  }

  it('serves Protected Resource Metadata and points every 401 at it', async () => {
    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const res = await fetch(`${sys.baseUrl}${path}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ resource: mcpUrl(), authorization_servers: [app.url], scopes_supported: ['read', 'ai'], bearer_methods_supported: ['header'] });
    }
    const res = await fetch(mcpUrl(), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer realm="murmur", resource_metadata="${sys.baseUrl}/.well-known/oauth-protected-resource/mcp", scope="read ai"`,
    );
    expect(((await res.json()) as Json).error.code).toBe('missing_api_key');
  });

  it('connects by URL alone, asks the person in the app, and calls the tools as them with resource links', async () => {
    const { client, provider } = await connectAs(users.alice.id);
    expect(provider.saved?.access_token).toMatch(/^mat_/);
    expect(provider.saved?.refresh_token).toMatch(/^mrt_/);
    expect(provider.saved?.scope?.split(' ').sort()).toEqual(['ai', 'read']);

    const list = await client.callTool({ name: 'list_recordings', arguments: { limit: 10 } });
    const recordings = (list.structuredContent as Json).data as Json[];
    expect(recordings).toHaveLength(4);
    const links = (list.content as Json[]).filter((c) => c.type === 'resource_link');
    expect(links.map((l) => l.uri)).toEqual(recordings.map((r) => `${sys.baseUrl}/api/v1/recordings/${r.id}`));
    // A link answers with an API key of the same user.
    const viaRest = await fetch(links[0]!.uri, { headers: { authorization: `Bearer ${users.alice.key}` } });
    expect(((await viaRest.json()) as Json).id).toBe(recordings[0]!.id);

    const one = await client.callTool({ name: 'get_recording', arguments: { recording_id: recordings[0]!.id } });
    expect((one.content as Json[]).filter((c) => c.type === 'resource_link')).toEqual([
      { type: 'resource_link', uri: links[0]!.uri, name: recordings[0]!.id, title: recordings[0]!.title, mimeType: 'application/json' },
    ]);

    // AI tools spend the same user's credits.
    const before = (await callTool(client, 'get_usage')).data;
    const converted = await callTool(client, 'convert', { kind: 'action_items', transcript: 'Dana will send the budget to finance by Friday.' });
    expect(converted.isError).toBe(false);
    const after = (await callTool(client, 'get_usage')).data;
    expect(after.counters.credits_used).toBeGreaterThan(before.counters.credits_used);
    await client.close();

    // The same access token on the current revision (2026-07-28, the v2 SDK line's client).
    const current = await connectMcpAt('2026-07-28', sys.baseUrl, provider.saved!.access_token);
    expect(current.getNegotiatedProtocolVersion?.()).toBe('2026-07-28');
    const again = await current.callTool({ name: 'list_recordings', arguments: { limit: 10 } });
    expect((again.structuredContent as Json).data.map((r: Json) => r.id)).toEqual(recordings.map((r) => r.id));
    expect((again.content as Json[]).filter((c) => c.type === 'resource_link').map((l) => l.uri)).toEqual(links.map((l) => l.uri));
    await current.close();
  });

  it('keeps two users apart exactly as keys do (the isolation matrix with OAuth tokens)', async () => {
    const alice = (await connectAs(users.alice.id)).client;
    const bob = (await connectAs(users.bob.id)).client;
    const ids = async (client: Client) => ({
      recordings: (await callTool(client, 'list_recordings', { limit: 100 })).data.data.map((r: Json) => r.id) as string[],
      threads: (await callTool(client, 'list_thought_threads', { limit: 100 })).data.data.map((t: Json) => t.id) as string[],
      folders: (await callTool(client, 'list_folders', { limit: 100 })).data.data.map((f: Json) => f.id) as string[],
    });
    const mine = { alice: await ids(alice), bob: await ids(bob) };
    for (const [client, other] of [
      [alice, mine.bob],
      [bob, mine.alice],
    ] as const) {
      const own = client === alice ? mine.alice : mine.bob;
      for (const kind of ['recordings', 'threads', 'folders'] as const) {
        expect(own[kind].length).toBeGreaterThan(0);
        expect(own[kind].filter((id) => other[kind].includes(id))).toEqual([]);
      }
      for (const [tool, args] of [
        ['get_recording', { recording_id: other.recordings[0] }],
        ['get_thought_thread', { thread_id: other.threads[0] }],
        ['list_recordings', { folder_id: other.folders[0] }],
        ['convert', { kind: 'summary', recording_id: other.recordings[0] }],
      ] as const) {
        const res = await callTool(client, tool, args);
        if (tool === 'list_recordings' && !res.isError) expect(res.data.data).toEqual([]);
        else expect(res.data.error?.code).toBe('not_found');
      }
      expect((await callTool(client, 'get_usage')).data.credits).toBeDefined();
    }
    await alice.close();
    await bob.close();
  });

  it('enforces scopes per tool: a read-only connection gets 403 insufficient_scope for the AI tools', async () => {
    const { client, provider } = await connectAs(users.alice.id, 'read');
    expect(provider.saved?.scope).toBe('read');
    expect((await callTool(client, 'list_folders')).isError).toBe(false);
    const res = await rawCall(provider.saved!.access_token, 'convert', { kind: 'summary', transcript: 'Hello there, this is a test.' });
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toContain('error="insufficient_scope", scope="ai"');
    expect(((await res.json()) as Json).error.code).toBe('insufficient_scope');
    await client.close();
  });

  it('refuses an MCP token on REST (another resource) while API keys work on both', async () => {
    const { client, provider } = await connectAs(users.bob.id);
    const rest = await fetch(`${sys.baseUrl}/api/v1/me`, { headers: { authorization: `Bearer ${provider.saved!.access_token}` } });
    expect(rest.status).toBe(401);
    expect(((await rest.json()) as Json).error.code).toBe('invalid_api_key');
    const byKey = await fetch(`${sys.baseUrl}/api/v1/me`, { headers: { authorization: `Bearer ${users.bob.key}` } });
    expect(byKey.status).toBe(200);
    expect((await rawCall(users.bob.key, 'list_folders')).status).toBe(200);
    await client.close();
  });

  it('lets the SDK refresh an expired access token, and a revoked connection fails on its next call', async () => {
    const { client, provider, requests } = await connectAs(users.alice.id);
    const first = provider.saved!;
    // The SDK opens its GET stream in the background after connecting. Answered after the clock
    // moved, it would meet a 401 too and refresh beside the call below, presenting the refresh
    // token twice, which revokes the connection (no reuse grace, docs/oauth.md).
    await requests.settled();
    sys.authClock.advance(HOUR_MS + 1_000);
    const expired = await rawCall(first.access_token, 'list_folders');
    expect(expired.status).toBe(401);
    expect(((await expired.json()) as Json).error.code).toBe('expired_api_key');
    expect(expired.headers.get('www-authenticate')).toContain('error="invalid_token"');

    // The SDK sees the 401, spends its refresh token and retries: the call goes through.
    const again = await callTool(client, 'list_folders');
    expect(again.isError).toBe(false);
    expect(provider.saved!.access_token).not.toBe(first.access_token);
    expect(provider.saved!.refresh_token).not.toBe(first.refresh_token);

    const { connections } = await sys.admin.auth.listOAuthConnections({ userId: users.alice.id });
    const mine = connections.filter((c) => c.clientName === 'Test Connector');
    expect(mine.length).toBeGreaterThan(0);
    for (const c of mine) await sys.admin.auth.revokeOAuthConnection({ connectionId: c.id, userId: users.alice.id });
    const revoked = await rawCall(provider.saved!.access_token, 'list_folders');
    expect(revoked.status).toBe(401);
    expect(((await revoked.json()) as Json).error.code).toBe('invalid_api_key');
    await client.close().catch(() => undefined);
  });
});
