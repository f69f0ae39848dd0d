/**
 * DESIGN.md §2: a missing or malformed key is refused before any database access. The gateway
 * applies that check itself, so while the auth service is down such a request is still the
 * contract's 401 (not a 503), and only a well-formed key depends on auth.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServiceClients, createLogger, createServiceClients, type ServiceClients } from '@murmur/kit';
import { testMinter } from '@murmur/kit/testing';
import { createApp, createHttpServer, MemoryIdempotencyStore } from '@murmur/gateway';
import { assertResponsesDocumented, recordResponses } from './support/openapi-check';

describe('keys refused while the auth service is down', () => {
  let clients: ServiceClients;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    // Nothing listens on port 1: every service, auth included, is unreachable.
    const down = '127.0.0.1:1';
    clients = createServiceClients({ AUTH_ADDR: down, BILLING_ADDR: down, LIBRARY_ADDR: down, TRANSCRIPTION_ADDR: down, CONVERSION_ADDR: down }, { deadlineMs: 5_000, identity: testMinter('gateway') });
    server = createHttpServer(recordResponses(createApp({ clients, log: createLogger('test', 'silent'), idempotency: new MemoryIdempotencyStore() })));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    closeServiceClients(clients);
    assertResponsesDocumented();
  });

  const call = async (path: string, authorization?: string) => {
    const res = await fetch(`${base}${path}`, { method: path === '/mcp' ? 'POST' : 'GET', headers: authorization === undefined ? {} : { authorization } });
    return { status: res.status, wwwAuthenticate: res.headers.get('www-authenticate'), body: (await res.json()) as { error: { code: string } } };
  };

  it.each(['/api/v1/me', '/api/v1/recordings', '/mcp'])('answers %s without a key with 401 missing_api_key', async (path) => {
    const res = await call(path);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('missing_api_key');
    expect(res.wwwAuthenticate).toBe('Bearer realm="murmur"');
  });

  it.each([
    ['another scheme', 'Basic dXNlcjpwYXNz'],
    ['a key of the wrong shape', 'Bearer svc_123'],
    ['two tokens', `Bearer svc_${'a'.repeat(64)} extra`],
  ])('answers %s with 401 invalid_api_key', async (_what, header) => {
    const res = await call('/api/v1/me', header);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('invalid_api_key');
  });

  it('answers a well-formed key, which only auth can judge, with 503 service_unavailable', async () => {
    const res = await call('/api/v1/me', `Bearer svc_${'a'.repeat(64)}`);
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('service_unavailable');
  });
});
