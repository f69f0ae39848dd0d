/**
 * Issue #33, docs/live.md "Connecting": POST /api/v1/listen/tokens makes a single-use listen token
 * for the key's owner, and redeemListenToken (what the WebSocket endpoint calls) spends it once
 * for that owner. Real services; every response is held to the OpenAPI document (support/system.ts).
 */
import { MurmurError } from '@murmur/contract';
import { auth } from '@murmur/proto';
import { redeemListenToken } from '../src/operations';
import { buildOpenApiDocument } from '../src/openapi/document';
import { assertResponsesDocumented } from './support/openapi-check';
import { get, startSystem, type TestSystem } from './support/system';

type Json = Record<string, any>;

describe('POST /api/v1/listen/tokens', () => {
  let sys: TestSystem;
  let a: { user: auth.User; key: string; keyId: string };
  let b: { user: auth.User; key: string; keyId: string };

  beforeAll(async () => {
    sys = await startSystem();
    a = await sys.newUser('listen-a@example.com');
    b = await sys.newUser('listen-b@example.com');
  });
  afterAll(async () => {
    await sys.stop();
  });

  const makeToken = (key?: string) =>
    fetch(`${sys.baseUrl}/api/v1/listen/tokens`, { method: 'POST', headers: key === undefined ? {} : { authorization: `Bearer ${key}` } });
  const usage = async (key: string) => (await get(sys.baseUrl, '/api/v1/usage', key)).body as Json;
  const refusal = async (call: Promise<unknown>) => {
    const err = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    if (!(err instanceof MurmurError)) throw new Error(`expected a MurmurError, got ${String(err)}`);
    return err;
  };

  it('answers 201 with a listen_token as the OpenAPI document describes it, never cached, charging nothing and taking no rate-limit slot', async () => {
    const before = await usage(a.key);
    const res = await makeToken(a.key);
    const body = (await res.json()) as Json;
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(body).toEqual({
      object: 'listen_token',
      token: expect.stringMatching(/^lst_[A-Za-z0-9_-]{43}$/),
      expires_at: new Date(sys.authClock.now().getTime() + 60_000).toISOString(),
      expires_in: 60,
    });
    expect(buildOpenApiDocument('test').paths['/listen/tokens']?.post?.responses['201']).toBeDefined();
    // The response above (and the /usage ones) matched the document: fails here, naming it, if not.
    assertResponsesDocumented();
    const after = await usage(a.key);
    expect(after.credits).toEqual(before.credits);
    expect(after.counters).toEqual(before.counters);
    expect(after.rate_limit.remaining).toBe(before.rate_limit.remaining);
  });

  it('makes a token that redeemListenToken spends once, for the key it was made with', async () => {
    const { token } = (await (await makeToken(a.key)).json()) as Json;
    const principal = await redeemListenToken(sys.clients, token);
    expect(principal).toMatchObject({ userId: a.user.id, keyId: a.keyId, scopes: ['read', 'ai'], clientId: '' });
    const again = await refusal(redeemListenToken(sys.clients, token));
    expect(again.code).toBe('invalid_api_key');
    expect(again.message).toMatch(/already used/);
  });

  it("acts for the token's owner only: B's token redeems as B, whoever presents it", async () => {
    const tokenA = ((await (await makeToken(a.key)).json()) as Json).token as string;
    const tokenB = ((await (await makeToken(b.key)).json()) as Json).token as string;
    expect(await redeemListenToken(sys.clients, tokenB)).toMatchObject({ userId: b.user.id, keyId: b.keyId });
    expect(await redeemListenToken(sys.clients, tokenA)).toMatchObject({ userId: a.user.id, keyId: a.keyId });
  });

  it('stops working when its key is revoked before it is used', async () => {
    const c = await sys.newUser('listen-c@example.com');
    const { token } = (await (await makeToken(c.key)).json()) as Json;
    await sys.admin.auth.revokeApiKey({ keyId: c.keyId, userId: c.user.id });
    const err = await refusal(redeemListenToken(sys.clients, token));
    expect(err.code).toBe('invalid_api_key');
    expect(err.message).toMatch(/revoked or has expired/);
  });

  it('refuses a malformed token as invalid_api_key', async () => {
    expect((await refusal(redeemListenToken(sys.clients, a.key))).code).toBe('invalid_api_key');
  });

  it('refuses a read-only key 403 insufficient_scope, making no token', async () => {
    const readOnly = (await sys.admin.auth.createApiKey({ userId: a.user.id, name: 'dashboard', expiry: auth.KeyExpiry.KEY_EXPIRY_90_DAYS, scopes: ['read'] })).key;
    const res = await makeToken(readOnly);
    const body = (await res.json()) as Json;
    expect([res.status, body.error?.code]).toEqual([403, 'insufficient_scope']);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="murmur", error="insufficient_scope", scope="ai"');
    expect(body.token).toBeUndefined();
  });

  it('refuses a call without a key 401 missing_api_key', async () => {
    const res = await makeToken();
    const body = (await res.json()) as Json;
    expect([res.status, body.error?.code]).toEqual([401, 'missing_api_key']);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="murmur"/);
  });
});
