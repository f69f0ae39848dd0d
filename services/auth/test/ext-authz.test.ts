import { status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { type Workload } from '@murmur/contract';
import { TokenVerifier, type Database, type KeyValueCache } from '@murmur/kit';
import { describeIfReal, openTestDatabase, testTrust } from '@murmur/kit/testing';
import { auth, rpcErrorDetails, rpcStatus } from '@murmur/proto';
import { AUTH_MIGRATIONS_DIR } from '@murmur/auth';
import {
  ENVOY_REQUEST_ID,
  envoyAuthzClient,
  envoyCheckRequest,
  headerOf,
  type DecodedCheckResponse,
  type EnvoyAuthzClient,
} from './envoy-authz-client';
import { redisCacheUnavailable, startHarness, testRedisCache, uniqueEmail, type Harness } from './support';

const DAY = 86_400_000;
const T0 = '2026-01-15T12:00:00.000Z';
/** What the 401 body's request_id is for Envoy's x-request-id. */
const MAPPED_REQUEST_ID = `req_${ENVOY_REQUEST_ID.replace(/-/g, '')}`;

let db: Database;
beforeAll(async () => {
  db = await openTestDatabase('auth', AUTH_MIGRATIONS_DIR);
});
afterAll(async () => {
  await db.close();
});

/** The principal a service would read from the assertion ext_authz hands it (verified as `audience` would). */
async function assertedPrincipal(res: DecodedCheckResponse, audience: Workload = 'library') {
  const token = headerOf(res.ok_response?.headers ?? [], 'x-murmur-principal');
  if (!token) throw new Error('no x-murmur-principal on the allowed request');
  return new TokenVerifier(audience, testTrust()).principalAssertion(token);
}

/** The ErrorInfo reason carried in the denial's grpc-status-details-bin header. */
function reasonOf(res: DecodedCheckResponse): string | undefined {
  const raw = headerOf(res.denied_response?.headers ?? [], 'grpc-status-details-bin');
  if (raw === undefined) return undefined;
  const status = rpcStatus.Status.decode(Buffer.from(raw, 'base64'));
  const info = status.details.find((d) => d.typeUrl === 'type.googleapis.com/google.rpc.ErrorInfo');
  return info ? rpcErrorDetails.ErrorInfo.decode(info.value).reason : undefined;
}

type CacheMaker = () => Promise<{ cache?: KeyValueCache; close(): Promise<void> }>;
/** MemoryCache and RedisCache (REDIS_URL, else a redis-server of the test's own), both always registered (describeIfReal). */
const cacheKinds: Array<[string, string | undefined, CacheMaker]> = [
  ['the in-process cache', undefined, async () => ({ cache: undefined, close: async () => undefined })],
  ['Redis', redisCacheUnavailable, testRedisCache],
];

for (const [kind, why, makeCache] of cacheKinds) describeIfReal(why, `envoy.service.auth.v3.Authorization/Check over gRPC with ${kind}`, () => {
  let h: Harness;
  let envoy: EnvoyAuthzClient;
  let closeCache: () => Promise<void>;
  let userId: string;
  let valid: { key: string; id: string };
  let revoked: { key: string; id: string };
  let shortLived: { key: string; id: string; expiresAt: Date };

  async function newKey(expiry: auth.KeyExpiry) {
    const res = await h.client.createApiKey({ userId, name: 'envoy test key', expiry, scopes: [] });
    return { key: res.key, id: res.apiKey!.id, expiresAt: res.apiKey!.expiresAt! };
  }

  beforeAll(async () => {
    const made = await makeCache();
    closeCache = made.close;
    h = await startHarness(db, { cache: made.cache });
    // Same port as AuthService: Envoy's auth cluster points at the one auth process.
    envoy = envoyAuthzClient(`127.0.0.1:${h.running.port}`);
    userId = (await h.client.createUser({ email: uniqueEmail('envoy'), name: 'Ada' })).user!.id;
    valid = await newKey(auth.KeyExpiry.KEY_EXPIRY_90_DAYS);
    revoked = await newKey(auth.KeyExpiry.KEY_EXPIRY_90_DAYS);
    shortLived = await newKey(auth.KeyExpiry.KEY_EXPIRY_30_DAYS);
    await h.client.revokeApiKey({ keyId: revoked.id, userId: '' });
  });
  afterAll(async () => {
    envoy.close();
    await h.stop();
    await closeCache();
  });
  beforeEach(() => h.clock.set(T0));

  it('allows a valid key with OK and hands the upstream a principal assertion for that service, overwriting any sent', async () => {
    const res = await envoy.check(envoyCheckRequest({ authorization: `Bearer ${valid.key}`, extraHeaders: { 'x-murmur-principal': 'spoofed' } }));
    expect(res.status.code).toBe(GrpcStatus.OK);
    expect(res.http_response).toBe('ok_response');
    expect(res.denied_response).toBeUndefined();
    expect(res.ok_response!.headers.map((h) => [h.header.key, h.append_action])).toEqual([['x-murmur-principal', 'OVERWRITE_IF_EXISTS_OR_ADD']]);
    expect(await assertedPrincipal(res)).toEqual({ userId, keyId: valid.id, scopes: ['read', 'ai'], issuer: 'auth' });
    // Bound to the service the path names: billing would refuse the one made for library.
    await expect(assertedPrincipal(res, 'billing')).rejects.toThrow();
    // The key stays on the request (the service ignores it once an assertion is there).
    expect(res.ok_response!.headers_to_remove).toEqual([]);
    const meta = res.dynamic_metadata!.fields;
    expect([meta.user_id?.stringValue ?? meta.user_id?.string_value, meta.key_id?.stringValue ?? meta.key_id?.string_value]).toEqual([userId, valid.id]);
  });

  it('makes the assertion for the service of the path: billing for a billing RPC', async () => {
    const res = await envoy.check(envoyCheckRequest({ authorization: `Bearer ${valid.key}`, path: '/murmur.billing.v1.BillingService/GetUsage' }));
    expect((await assertedPrincipal(res, 'billing')).userId).toBe(userId);
  });

  it.each([
    ['an admin RPC (CreateApiKey)', '/murmur.auth.v1.AuthService/CreateApiKey'],
    ['a service-to-service RPC (Reserve)', '/murmur.billing.v1.BillingService/Reserve'],
    ['a library write for seeding (CreateFolder)', '/murmur.library.v1.LibraryService/CreateFolder'],
    ['a path of no service', '/some.other.v1.Service/Do'],
    ['VerifyKey (workloads only)', '/murmur.auth.v1.AuthService/VerifyKey'],
  ])('denies %s for a valid developer key: PERMISSION_DENIED, 403, permission_denied', async (_name, path) => {
    const res = await envoy.check(envoyCheckRequest({ authorization: `Bearer ${valid.key}`, path }));
    expect(res.status.code).toBe(GrpcStatus.PERMISSION_DENIED);
    expect(res.denied_response!.status.code).toBe('Forbidden');
    expect(reasonOf(res)).toBe('permission_denied');
    expect(res.ok_response).toBeUndefined();
  });

  it.each([
    '/murmur.transcription.v1.TranscriptionService/Transcribe',
    '/murmur.transcription.v1.TranscriptionService/SubmitTranscription',
    '/murmur.conversion.v1.ConversionService/Convert',
    '/murmur.billing.v1.BillingService/AdmitAiRequest',
  ])('denies a read-only key %s: PERMISSION_DENIED, 403, insufficient_scope saying how to get a key that may', async (path) => {
    const readOnly = await h.client.createApiKey({ userId, name: 'read-only', expiry: auth.KeyExpiry.KEY_EXPIRY_90_DAYS, scopes: ['read'] });
    const res = await envoy.check(envoyCheckRequest({ authorization: `Bearer ${readOnly.key}`, path }));
    expect(res.status.code).toBe(GrpcStatus.PERMISSION_DENIED);
    expect(res.denied_response!.status.code).toBe('Forbidden');
    expect(reasonOf(res)).toBe('insufficient_scope');
    expect(res.status.message).toMatch(/read-only.*full access/);
    expect(res.ok_response).toBeUndefined();
    // The same key reads: allowed, with an assertion that says it is read-only.
    const read = await envoy.check(envoyCheckRequest({ authorization: `Bearer ${readOnly.key}` }));
    expect(read.status.code).toBe(GrpcStatus.OK);
    expect((await assertedPrincipal(read)).scopes).toEqual(['read']);
  });

  it('denies a request that carries a workload token: workloads never come through this listener', async () => {
    const res = await envoy.check(envoyCheckRequest({ authorization: `Bearer ${valid.key}`, extraHeaders: { 'x-murmur-workload': 'anything' } }));
    expect(res.status.code).toBe(GrpcStatus.PERMISSION_DENIED);
    expect(reasonOf(res)).toBe('permission_denied');
  });

  it('accepts the scheme in any case, like VerifyKey', async () => {
    const res = await envoy.check(envoyCheckRequest({ authorization: `bearer ${valid.key}` }));
    expect(res.status.code).toBe(GrpcStatus.OK);
  });

  it('reads the key from header_map when Envoy sends raw headers', async () => {
    const res = await envoy.check(envoyCheckRequest({ authorization: `Bearer ${valid.key}`, rawHeaders: true }));
    expect(res.status.code).toBe(GrpcStatus.OK);
    expect((await assertedPrincipal(res)).keyId).toBe(valid.id);
  });

  // [behaviour, Authorization header (undefined: none sent), code, WWW-Authenticate]
  const CHALLENGE = 'Bearer realm="murmur"';
  const INVALID_TOKEN = 'Bearer realm="murmur", error="invalid_token"';
  const denials: Array<[string, () => string | undefined, string, string]> = [
    ['no Authorization header', () => undefined, 'missing_api_key', CHALLENGE],
    ['an empty Authorization header', () => '', 'missing_api_key', CHALLENGE],
    ['"Bearer" without a key', () => 'Bearer', 'missing_api_key', CHALLENGE],
    ['a malformed key', () => 'Bearer not-a-key', 'invalid_api_key', INVALID_TOKEN],
    ['another scheme', () => `Basic ${valid.key}`, 'invalid_api_key', INVALID_TOKEN],
    ['an unknown well-formed key', () => `Bearer svc_${'0'.repeat(64)}`, 'invalid_api_key', INVALID_TOKEN],
    ['a revoked key', () => `Bearer ${revoked.key}`, 'invalid_api_key', INVALID_TOKEN],
  ];

  describe('a gRPC call on the internal listener', () => {
    it.each(denials)('is denied for %s: UNAUTHENTICATED, 401, the code as ErrorInfo and the challenge', async (_name, header, code, challenge) => {
      const res = await envoy.check(envoyCheckRequest({ authorization: header() }));
      expect(res.status.code).toBe(GrpcStatus.UNAUTHENTICATED);
      expect(res.http_response).toBe('denied_response');
      expect(res.ok_response).toBeUndefined();
      const denied = res.denied_response!;
      expect(denied.status.code).toBe('Unauthorized');
      expect(headerOf(denied.headers, 'www-authenticate')).toBe(challenge);
      expect(headerOf(denied.headers, 'x-request-id')).toBe(MAPPED_REQUEST_ID);
      // Envoy turns the body of a gRPC local reply into grpc-message: the message, not JSON.
      expect(reasonOf(res)).toBe(code);
      expect(denied.body).toBe(res.status.message);
      expect(denied.body).toMatch(/Settings → Developer/);
    });

    it('is denied for a key exactly at its expiry with expired_api_key', async () => {
      h.clock.set(new Date(shortLived.expiresAt.getTime() - 1000));
      expect((await envoy.check(envoyCheckRequest({ authorization: `Bearer ${shortLived.key}` }))).status.code).toBe(GrpcStatus.OK);
      h.clock.set(shortLived.expiresAt);
      const res = await envoy.check(envoyCheckRequest({ authorization: `Bearer ${shortLived.key}` }));
      expect(res.status.code).toBe(GrpcStatus.UNAUTHENTICATED);
      expect(reasonOf(res)).toBe('expired_api_key');
      expect(headerOf(res.denied_response!.headers, 'www-authenticate')).toBe(INVALID_TOKEN);
    });

    it('fails a key revoked after it was allowed on the very next check', async () => {
      const k = await newKey(auth.KeyExpiry.KEY_EXPIRY_90_DAYS);
      expect((await envoy.check(envoyCheckRequest({ authorization: `Bearer ${k.key}` }))).status.code).toBe(GrpcStatus.OK);
      await h.client.revokeApiKey({ keyId: k.id, userId: '' });
      const res = await envoy.check(envoyCheckRequest({ authorization: `Bearer ${k.key}` }));
      expect(reasonOf(res)).toBe('invalid_api_key');
    });
  });

  describe('an HTTP request', () => {
    const httpRequest = (authorization: string | undefined) =>
      envoyCheckRequest({ authorization, method: 'GET', path: '/api/v1/recordings?limit=5', contentType: 'application/json' });

    it.each([...denials, ['an expired key', () => `Bearer ${shortLived.key}`, 'expired_api_key', INVALID_TOKEN] as (typeof denials)[number]])(
      'is denied for %s with the contract 401 JSON body',
      async (_name, header, code, challenge) => {
        h.clock.set(new Date(Date.parse(T0) + 31 * DAY));
        const res = await envoy.check(httpRequest(header()));
        expect(res.status.code).toBe(GrpcStatus.UNAUTHENTICATED);
        const denied = res.denied_response!;
        expect(denied.status.code).toBe('Unauthorized');
        expect(headerOf(denied.headers, 'content-type')).toBe('application/json; charset=utf-8');
        expect(headerOf(denied.headers, 'www-authenticate')).toBe(challenge);
        expect(headerOf(denied.headers, 'grpc-status-details-bin')).toBeUndefined();
        expect(JSON.parse(denied.body)).toEqual({
          error: { type: 'authentication_error', code, message: expect.stringMatching(/Settings → Developer/), param: null, request_id: MAPPED_REQUEST_ID },
        });
      },
    );

    it('keeps a request id that is already ours and mints one when there is none', async () => {
      const ours = envoyCheckRequest({ contentType: 'application/json', extraHeaders: { 'x-request-id': 'req_0123456789abcdef01234567' } });
      expect(JSON.parse((await envoy.check(ours)).denied_response!.body).error.request_id).toBe('req_0123456789abcdef01234567');
      const junk = envoyCheckRequest({ contentType: 'application/json', extraHeaders: { 'x-request-id': 'not an id' } });
      const minted = await envoy.check(junk);
      const id = JSON.parse(minted.denied_response!.body).error.request_id;
      expect(id).toMatch(/^req_[0-9a-f]{24}$/);
      expect(headerOf(minted.denied_response!.headers, 'x-request-id')).toBe(id);
    });
  });

  it('fails the Check call itself when the database fails, so Envoy answers with its status_on_error', async () => {
    h.probe.failWhen = /FROM api_keys/;
    try {
      const k = `Bearer svc_${'e'.repeat(64)}`; // never cached: the lookup must reach the database
      const err = (await envoy.check(envoyCheckRequest({ authorization: k })).then(
        () => null,
        (e: ServiceError) => e,
      ))!;
      expect(err).not.toBeNull();
      expect(err.code).toBe(GrpcStatus.INTERNAL);
      expect(err.details).toBe('internal error');
    } finally {
      h.probe.failWhen = null;
    }
  });

  it('never writes a raw key to the logs', async () => {
    await envoy.check(envoyCheckRequest({ authorization: `Bearer ${valid.key}` }));
    await envoy.check(envoyCheckRequest({ authorization: `Bearer ${revoked.key}` }));
    const logged = JSON.stringify(h.logs.calls);
    for (const key of [valid.key, revoked.key]) expect(logged).not.toContain(key.slice(4));
  });
});
