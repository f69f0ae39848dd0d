/**
 * GET /api/v1/openapi.json over real HTTP: served without a key (a real auth service behind the
 * gateway, whose calls are counted by grpc-js's channelz counters, so any attempt to
 * authenticate would show), cacheable, the same document the code builds; other methods 405 and
 * query parameters 400 like on every route. The responses go through the same OpenAPI check as
 * the integration suite's.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServiceClients, createLogger, createServiceClients, type Database, type ServiceClients } from '@murmur/kit';
import { callsServedOn, openTestDatabase, testIdentity, testMinter } from '@murmur/kit/testing';
import { AUTH_MIGRATIONS_DIR, startAuthService, type RunningAuthService } from '@murmur/auth';
import {
  createApp,
  createHttpServer,
  MemoryIdempotencyStore,
  MURMUR_VERSION,
} from '@murmur/gateway';
import { buildOpenApiDocument } from '../src/openapi/document';
import { assertResponsesDocumented, recordResponses } from './support/openapi-check';

describe('GET /api/v1/openapi.json', () => {
  const log = createLogger('test', 'silent');
  let db: Database;
  let authSvc: RunningAuthService;
  let clients: ServiceClients;
  let server: Server;
  let base: string;
  /** VerifyKey and every other call the auth service has received so far. */
  const authCalls = () => callsServedOn(authSvc.port);

  beforeAll(async () => {
    db = await openTestDatabase('auth', AUTH_MIGRATIONS_DIR);
    authSvc = await startAuthService({ identity: testIdentity('auth'), db, log, address: '127.0.0.1:0' });
    // Only auth runs: every other service address refuses connections.
    clients = createServiceClients(
      { AUTH_ADDR: `127.0.0.1:${authSvc.port}`, BILLING_ADDR: '127.0.0.1:1', LIBRARY_ADDR: '127.0.0.1:1', TRANSCRIPTION_ADDR: '127.0.0.1:1', CONVERSION_ADDR: '127.0.0.1:1' },
      { deadlineMs: 10_000, identity: testMinter('gateway') },
    );
    const app = createApp({ clients, log, idempotency: new MemoryIdempotencyStore() });
    server = createHttpServer(recordResponses(app));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    closeServiceClients(clients);
    await authSvc?.stop();
    await db?.close();
    assertResponsesDocumented();
  });

  it('serves the document without an API key, cacheable for five minutes, asking auth nothing', async () => {
    const before = await authCalls();
    const res = await fetch(`${base}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    expect(res.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{24}$/);
    expect(await res.json()).toEqual(buildOpenApiDocument(MURMUR_VERSION));
    expect(await authCalls()).toBe(before);
  });

  it('ignores an Authorization header, even a malformed one or a well-formed unknown key', async () => {
    const before = await authCalls();
    for (const authorization of ['Bearer nonsense', `Bearer svc_${'0'.repeat(64)}`]) {
      const res = await fetch(`${base}/openapi.json`, { headers: { authorization } });
      expect(res.status).toBe(200);
    }
    expect(await authCalls()).toBe(before);
  });

  it('answers HEAD like GET, without a body', async () => {
    const res = await fetch(`${base}/openapi.json`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
  });

  it.each(['POST', 'PUT', 'DELETE'])('answers %s with 405 and Allow', async (method) => {
    const res = await fetch(`${base}/openapi.json`, { method });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('method_not_allowed');
  });

  it('refuses query parameters like every route', async () => {
    const res = await fetch(`${base}/openapi.json?format=yaml`);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { param: string } }).error.param).toBe('format');
  });

  it('leaves the other routes behind authentication', async () => {
    const before = await authCalls();
    const res = await fetch(`${base}/me`, { headers: { authorization: `Bearer svc_${'0'.repeat(64)}` } });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_api_key');
    expect(await authCalls()).toBe(before + 1);
  });

  it('answers 404 to a path beside it', async () => {
    const res = await fetch(`${base}/openapi.yaml`);
    expect(res.status).toBe(404);
  });
});
