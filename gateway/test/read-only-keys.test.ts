/**
 * Issue #30, "keys with scopes": a read-only API key reads, and every REST route or MCP call that
 * spends credits or changes state answers it 403 insufficient_scope — the contract's body, the
 * RFC 6750 challenge, a message saying the key is read-only and how to get one that is not —
 * before anything is read, charged or counted against the rate limit. (Direct gRPC and Envoy's
 * ext_authz: rpc-access-matrix.test.ts and services/auth/test/ext-authz.test.ts.)
 */
import { auth } from '@murmur/proto';
import { callTool, connectMcp } from './support/mcp-client';
import { get, startSystem, type TestSystem } from './support/system';

type Json = Record<string, any>;

describe('a read-only API key', () => {
  let sys: TestSystem;
  let full: string;
  let readOnly: string;

  beforeAll(async () => {
    sys = await startSystem();
    const made = await sys.newUser('read-only@example.com');
    full = made.key;
    readOnly = (await sys.admin.auth.createApiKey({ userId: made.user.id, name: 'dashboard', expiry: auth.KeyExpiry.KEY_EXPIRY_90_DAYS, scopes: ['read'] })).key;
  });
  afterAll(async () => {
    await sys.stop();
  });

  const usage = async () => (await get(sys.baseUrl, '/api/v1/usage', full)).body as Json;

  function expectReadOnlyRefusal(status: number, headers: Headers, body: Json, call: string): void {
    expect([call, status, body.error?.type, body.error?.code]).toEqual([call, 403, 'permission_error', 'insufficient_scope']);
    expect(body.error.message).toContain('This API key is read-only');
    expect(body.error.message).toContain('Settings → Developer');
    expect(body.error.request_id).toMatch(/^req_/);
    expect(headers.get('www-authenticate')).toBe('Bearer realm="murmur", error="insufficient_scope", scope="ai"');
  }

  it('reads: profile, usage and lists answer as for a full-access key', async () => {
    for (const path of ['/api/v1/me', '/api/v1/usage', '/api/v1/recordings', '/api/v1/folders', '/api/v1/knowledge-bases']) {
      const res = await get(sys.baseUrl, path, readOnly);
      expect([path, res.status]).toEqual([path, 200]);
    }
  });

  it('is refused every REST call that spends or changes, before the body is read: nothing charged, no rate-limit slot, the Idempotency-Key left free', async () => {
    const before = await usage();
    const calls: Array<[string, string, string]> = [
      ['/api/v1/transcribe', 'application/json', JSON.stringify({ audio_base64: 'UklGRg==' })],
      ['/api/v1/convert', 'application/json', JSON.stringify({ transcript: 'We agreed to ship in March.', kind: 'summary' })],
      ['/api/v1/transcriptions', 'application/json', JSON.stringify({ audio_url: 'https://example.com/a.wav' })],
      ['/api/v1/transcriptions/trn_0000000000000000000000aa/cancel', 'application/json', ''],
      ['/api/v1/transcriptions/trn_0000000000000000000000aa/webhook/retry', 'application/json', ''],
      ['/api/v1/listen/tokens', 'application/json', ''],
    ];
    for (const [path, type, body] of calls) {
      const res = await fetch(`${sys.baseUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${readOnly}`, 'content-type': type, 'idempotency-key': `ro-${path}` },
        body: body || undefined,
      });
      expectReadOnlyRefusal(res.status, res.headers, (await res.json()) as Json, `POST ${path}`);
      expect(res.headers.get('ratelimit-remaining')).toBeNull();
    }
    const after = await usage();
    expect(after.credits).toEqual(before.credits);
    expect(after.rate_limit.remaining).toBe(before.rate_limit.limit);
    expect(after.counters).toEqual(before.counters);
  });

  it('is refused the AI tools and tasks over MCP with the same 403, and calls the read tools', async () => {
    const client = await connectMcp(sys.baseUrl, readOnly);
    try {
      expect((await callTool(client, 'list_recordings')).isError).toBe(false);
      expect((await callTool(client, 'get_usage')).isError).toBe(false);
    } finally {
      await client.close();
    }
    const before = await usage();
    for (const message of [
      { method: 'tools/call', params: { name: 'transcribe', arguments: { audio_base64: 'UklGRg==' } } },
      { method: 'tools/call', params: { name: 'convert', arguments: { transcript: 'We agreed to ship in March.', kind: 'summary' } } },
      { method: 'tasks/get', params: { taskId: 'trn_0000000000000000000000aa' } },
    ]) {
      const res = await fetch(`${sys.baseUrl}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${readOnly}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, ...message }),
      });
      expectReadOnlyRefusal(res.status, res.headers, (await res.json()) as Json, JSON.stringify(message).slice(0, 60));
    }
    const after = await usage();
    expect([after.credits, after.rate_limit.remaining]).toEqual([before.credits, before.rate_limit.limit]);
  });
});
