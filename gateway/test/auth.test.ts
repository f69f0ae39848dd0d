/**
 * Authentication and the HTTP contract over real HTTP against the gateway and real services:
 * the full auth matrix of DESIGN.md §2 with exact codes, statuses and WWW-Authenticate headers,
 * plus request ids, 404, 405 and unknown parameters.
 */
import { auth } from '@murmur/proto';
import { describeIfReal, failure, realRedisUnavailable, rpcCallsAnswered } from '@murmur/kit/testing';
import { hashKey, verificationCacheKey } from '@murmur/auth';
import { get, startSystem, type TestSystem } from './support/system';

const HEX64 = 'a'.repeat(64);

describe('authentication over REST', () => {
  let sys: TestSystem;
  let key: string;
  let keyId: string;

  beforeAll(async () => {
    sys = await startSystem();
    ({ key, keyId } = await sys.newUser('ada@example.com'));
  });
  afterAll(async () => {
    await sys.stop();
  });

  const raw = (authorization?: string) =>
    get(sys.baseUrl, '/api/v1/me', undefined, authorization === undefined ? {} : { authorization });

  it.each([
    ['no header', undefined, 'missing_api_key', 'Bearer realm="murmur"'],
    ['an empty header', '', 'missing_api_key', 'Bearer realm="murmur"'],
    ['a blank header', '   ', 'missing_api_key', 'Bearer realm="murmur"'],
    ['the Basic scheme', `Basic svc_${HEX64}`, 'invalid_api_key', 'Bearer realm="murmur", error="invalid_token"'],
    ['a Token scheme', `Token svc_${HEX64}`, 'invalid_api_key', 'Bearer realm="murmur", error="invalid_token"'],
    ['a bare key without scheme', `svc_${HEX64}`, 'invalid_api_key', 'Bearer realm="murmur", error="invalid_token"'],
    ['a malformed key', 'Bearer not-a-key', 'invalid_api_key', 'Bearer realm="murmur", error="invalid_token"'],
    ['63 hex characters', `Bearer svc_${'a'.repeat(63)}`, 'invalid_api_key', 'Bearer realm="murmur", error="invalid_token"'],
    ['65 hex characters', `Bearer svc_${'a'.repeat(65)}`, 'invalid_api_key', 'Bearer realm="murmur", error="invalid_token"'],
    ['non-hex characters', `Bearer svc_${'g'.repeat(64)}`, 'invalid_api_key', 'Bearer realm="murmur", error="invalid_token"'],
    ['a wrong prefix', `Bearer sk_${HEX64}`, 'invalid_api_key', 'Bearer realm="murmur", error="invalid_token"'],
    ['an unknown well-formed key', `Bearer svc_${HEX64}`, 'invalid_api_key', 'Bearer realm="murmur", error="invalid_token"'],
  ])('rejects %s with 401 %s', async (_name, header, code, challenge) => {
    const res = await raw(header);
    expect(res.status).toBe(401);
    expect(res.body.error).toMatchObject({ code, type: 'authentication_error', param: null });
    expect(res.body.error.request_id).toMatch(/^req_/);
    expect(res.headers.get('www-authenticate')).toBe(challenge);
    expect(res.headers.get('x-request-id')).toBe(res.body.error.request_id);
  });

  it.each(['Bearer', 'bearer', 'BEARER', 'BeArEr'])('accepts the scheme spelled %s', async (scheme) => {
    const res = await raw(`${scheme} ${key}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'user', email: 'ada@example.com' });
  });

  it('never echoes the key in a response', async () => {
    const res = await raw(`Bearer ${key}`);
    expect(JSON.stringify(res.body)).not.toContain(key);
  });

  describeIfReal(realRedisUnavailable(), 'with the gateways\' verified-key caches (Redis: REDIS_URL or a redis-server of our own)', () => {
    /** Key verifications the auth service has answered (its other RPCs, such as the request log's batches, aside). */
    const authCalls = () => rpcCallsAnswered('/murmur.auth.v1.AuthService/VerifyKey');

    it('fails a revoked key on the very next request, with its verification cached', async () => {
      const { key: k, keyId: id } = await sys.newUser('revoked@example.com');
      expect((await get(sys.baseUrl, '/api/v1/usage', k)).status).toBe(200);
      // Warm: the next request is answered without asking auth (GET /usage needs no other auth call).
      const warm = await authCalls();
      expect((await get(sys.baseUrl, '/api/v1/usage', k)).status).toBe(200);
      expect(await authCalls()).toBe(warm);
      await sys.admin.auth.revokeApiKey({ keyId: id, userId: '' });
      const res = await get(sys.baseUrl, '/api/v1/usage', k);
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('invalid_api_key');
    });

    it("fails a revoked key on the very next request through every gateway replica, both caches warm: the replicas' and auth's", async () => {
      const second = await sys.extraGateway();
      const { key: k, keyId: id } = await sys.newUser('replicas@example.com');
      for (const base of [sys.baseUrl, second.baseUrl]) expect((await get(base, '/api/v1/usage', k)).status).toBe(200);
      // Auth's own cache holds the verification: it answers whoever asks without a cache of its
      // own (a replica whose cache is cold, off or just emptied; Envoy's ext_authz).
      expect(await sys.authCache!.get(verificationCacheKey(hashKey(k)))).not.toBeNull();
      // Both replicas now answer the key from their caches: auth is not asked again.
      const warm = await authCalls();
      for (let i = 0; i < 3; i++) {
        expect((await get(sys.baseUrl, '/api/v1/usage', k)).status).toBe(200);
        expect((await get(second.baseUrl, '/api/v1/usage', k)).status).toBe(200);
      }
      expect(await authCalls()).toBe(warm);
      await sys.admin.auth.revokeApiKey({ keyId: id, userId: '' });
      // Each replica dropped the key and asks auth, whose cache no longer answers for it.
      const [a, b] = await Promise.all([get(sys.baseUrl, '/api/v1/usage', k), get(second.baseUrl, '/api/v1/usage', k)]);
      expect([a.status, b.status]).toEqual([401, 401]);
      expect([a.body.error.code, b.body.error.code]).toEqual(['invalid_api_key', 'invalid_api_key']);
      expect(await authCalls()).toBe(warm + 2); // one VerifyKey per replica
      expect((await failure(sys.clients.auth.verifyKey({ authorization: `Bearer ${k}`, resource: '' }))).code).toBe('invalid_api_key');
    });
  });

  it('expires a 30-day key exactly at its expiry, and not one second before', async () => {
    const start = sys.authClock.now();
    const { key: k } = await sys.newUser('expiring@example.com', auth.KeyExpiry.KEY_EXPIRY_30_DAYS);
    const expiresAt = start.getTime() + 30 * 86_400_000;
    try {
      expect((await get(sys.baseUrl, '/api/v1/me', k)).status).toBe(200);
      sys.authClock.set(new Date(expiresAt - 1_000));
      expect((await get(sys.baseUrl, '/api/v1/me', k)).status).toBe(200);
      sys.authClock.set(new Date(expiresAt + 1_000));
      const res = await get(sys.baseUrl, '/api/v1/me', k);
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('expired_api_key');
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="murmur", error="invalid_token"');
    } finally {
      sys.authClock.set(start);
    }
  });

  it('keeps a never-expiring key valid ten years on', async () => {
    const start = sys.authClock.now();
    const { key: k } = await sys.newUser('forever@example.com', auth.KeyExpiry.KEY_EXPIRY_NEVER);
    try {
      sys.authClock.set(new Date(start.getTime() + 3653 * 86_400_000));
      const res = await get(sys.baseUrl, '/api/v1/me', k);
      expect(res.status).toBe(200);
      expect(res.body.api_key.expires_at).toBeNull();
    } finally {
      sys.authClock.set(start);
    }
  });

  it('puts X-Request-Id on every response and keeps a well-formed one the caller sent', async () => {
    const mine = 'req_clientchosen0001';
    const ok = await get(sys.baseUrl, '/api/v1/me', key, { 'x-request-id': mine });
    expect(ok.headers.get('x-request-id')).toBe(mine);
    const junk = await get(sys.baseUrl, '/api/v1/me', key, { 'x-request-id': 'drop table; --' });
    expect(junk.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{24}$/);
  });

  it('answers an unknown route with the contract 404', async () => {
    for (const path of ['/api/v1/nope', '/api/v2/me', '/', '/api/v1/recordings/x/y']) {
      const res = await get(sys.baseUrl, path, key);
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'not_found', type: 'invalid_request_error' });
      expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    }
  });

  it('answers a wrong method on a known route with 405 and Allow', async () => {
    const res = await fetch(`${sys.baseUrl}/api/v1/recordings`, { method: 'DELETE', headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('method_not_allowed');
  });

  it('rejects unknown and repeated query parameters with 400 naming the parameter', async () => {
    const unknown = await get(sys.baseUrl, '/api/v1/recordings?colour=blue', key);
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'invalid_request', param: 'colour' });
    const repeated = await get(sys.baseUrl, '/api/v1/folders?limit=1&limit=2', key);
    expect(repeated.status).toBe(400);
    expect(repeated.body.error).toMatchObject({ code: 'invalid_request', param: 'limit' });
  });

  it('serves JSON with charset on success and failure', async () => {
    for (const k of [key, undefined]) {
      const res = await get(sys.baseUrl, '/api/v1/usage', k);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    }
  });

  it('reports the key it was called with in /me', async () => {
    const res = await get(sys.baseUrl, '/api/v1/me', key);
    expect(res.body.api_key.id).toBe(keyId);
  });
});
