/**
 * GET /api/v1/openapi.json over real HTTP: served without a key (the auth client here counts its
 * calls and refuses every key, so any attempt to authenticate would show), cacheable, the same
 * document the code builds; other methods 405 and query parameters 400 like on every route. The
 * responses go through the same OpenAPI check as the integration suite's.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger, MurmurError } from '@murmur/kit';
import { createApp, createHttpServer, MemoryIdempotencyStore, MURMUR_VERSION, type Clients } from '@murmur/gateway';
import { buildOpenApiDocument } from '../src/openapi/document';
import { assertResponsesDocumented, recordResponses } from './support/openapi-check';

describe('GET /api/v1/openapi.json', () => {
  let server: Server;
  let base: string;
  let verifications = 0;
  const clients = {
    auth: {
      verifyKey: async () => {
        verifications++;
        throw new MurmurError('missing_api_key');
      },
    },
  } as unknown as Clients;

  beforeAll(async () => {
    const app = createApp({ clients, log: createLogger('test', 'silent'), idempotency: new MemoryIdempotencyStore() });
    server = createHttpServer(recordResponses(app));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    assertResponsesDocumented();
  });

  it('serves the document without an API key, cacheable for five minutes', async () => {
    const res = await fetch(`${base}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    expect(res.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{24}$/);
    expect(await res.json()).toEqual(buildOpenApiDocument(MURMUR_VERSION));
    expect(verifications).toBe(0);
  });

  it('ignores an Authorization header, even a malformed one', async () => {
    const res = await fetch(`${base}/openapi.json`, { headers: { authorization: 'Bearer nonsense' } });
    expect(res.status).toBe(200);
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
    const before = verifications;
    const res = await fetch(`${base}/me`);
    expect(res.status).toBe(401);
    expect(verifications).toBe(before + 1);
  });

  it('answers 404 to a path beside it', async () => {
    const res = await fetch(`${base}/openapi.yaml`);
    expect(res.status).toBe(404);
  });
});
