import { createHash, randomBytes } from 'node:crypto';
import { MAX_ACTIVE_OAUTH_CONNECTIONS, type MurmurError } from '@murmur/contract';
import { newId, type Database } from '@murmur/kit';
import { openTestDatabase } from '@murmur/kit/testing';
import { auth } from '@murmur/proto';
import { AUTH_MIGRATIONS_DIR } from '@murmur/auth';
import { resourceOf } from '../src/ext-authz';
import { generateOAuthSecret } from '../src/oauth';
import { PostgresOAuthStore, type NewTokenPair } from '../src/oauth-store';
import { envoyAuthzClient, envoyCheckRequest } from './envoy-authz-client';
import { failure, startHarness, uniqueEmail, type Harness } from './support';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const T0 = '2026-01-15T12:00:00.000Z';
const at = (ms: number) => new Date(Date.parse(T0) + ms);
const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

const RESOURCE = 'https://api.murmur.test/mcp';
const REDIRECT = 'https://client.example/callback';
const LOOPBACK_REDIRECT = 'http://127.0.0.1:33418/callback';

/** A fresh PKCE verifier (43 base64url characters) and its S256 challenge. */
function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier, 'ascii').digest('base64url') };
}

let db: Database;
let h: Harness;
/** Connection ids auth announced as revoked to the gateways, in order. */
const announced: string[] = [];
beforeAll(async () => {
  db = await openTestDatabase('auth', AUTH_MIGRATIONS_DIR);
  h = await startHarness(db, {
    announceRevocation: async (keyId) => {
      announced.push(keyId);
    },
  });
});
afterAll(async () => {
  await h.stop();
  await db.close();
});
beforeEach(() => h.clock.set(T0));

async function newUser(): Promise<string> {
  const { user } = await h.client.createUser({ email: uniqueEmail('oauth'), name: 'Ada' });
  return user!.id;
}

const registration = (overrides: Partial<auth.RegisterOAuthClientRequest> = {}): auth.RegisterOAuthClientRequest => ({
  clientName: 'Test MCP client',
  redirectUris: [REDIRECT, LOOPBACK_REDIRECT],
  clientUri: '',
  logoUri: '',
  scope: '',
  softwareId: '',
  softwareVersion: '',
  ...overrides,
});

async function newClient(overrides: Partial<auth.RegisterOAuthClientRequest> = {}): Promise<string> {
  return (await h.client.registerOAuthClient(registration(overrides))).client!.clientId;
}

interface Authorized {
  userId: string;
  clientId: string;
  code: string;
  verifier: string;
  redirectUri: string;
}

/** A user's consent for a client: a fresh user and client unless given. */
async function authorize(opts: Partial<auth.CreateAuthorizationCodeRequest> & { verifier?: string } = {}): Promise<Authorized> {
  const userId = opts.userId ?? (await newUser());
  const clientId = opts.clientId ?? (await newClient());
  const { verifier, challenge } = opts.verifier ? { verifier: opts.verifier, challenge: opts.codeChallenge ?? '' } : pkce();
  const redirectUri = opts.redirectUri ?? REDIRECT;
  const { code } = await h.client.createAuthorizationCode({
    userId,
    clientId,
    clientName: opts.clientName ?? 'Test MCP client',
    redirectUri,
    codeChallenge: opts.codeChallenge ?? challenge,
    scopes: opts.scopes ?? ['read', 'ai'],
    resource: opts.resource ?? RESOURCE,
  });
  return { userId, clientId, code, verifier, redirectUri };
}

const exchangeRequest = (a: Authorized, overrides: Partial<auth.ExchangeAuthorizationCodeRequest> = {}): auth.ExchangeAuthorizationCodeRequest => ({
  clientId: a.clientId,
  code: a.code,
  codeVerifier: a.verifier,
  redirectUri: a.redirectUri,
  resource: RESOURCE,
  ...overrides,
});

/** A consent redeemed: the first token pair of a new connection. */
async function connect(opts: Parameters<typeof authorize>[0] = {}) {
  const a = await authorize(opts);
  const tokens = await exchangeCode(h, exchangeRequest(a));
  return { ...a, ...tokens };
}

const refresh = (clientId: string, refreshToken: string, overrides: Partial<auth.ExchangeRefreshTokenRequest> = {}) =>
  exchangeRefresh(h, { clientId, refreshToken, scopes: [], resource: '', ...overrides });
const verify = (token: string, resource = RESOURCE) => h.client.verifyKey({ authorization: `Bearer ${token}`, resource });

async function expectGrantRefused(call: Promise<unknown>, message?: RegExp): Promise<void> {
  const err = await failure(call);
  expect(err.code).toBe('invalid_grant');
  expect(err.httpStatus).toBe(400);
  if (message) expect(err.message).toMatch(message);
}
const expectTokenRefused = async (token: string, resource = RESOURCE) => {
  expect((await failure(verify(token, resource))).code).toBe('invalid_api_key');
};

const connectionRow = async (id: string) =>
  (await db.query<{ revoked_at: Date | null; revoked_reason: string | null; last_used_at: Date | null }>('SELECT * FROM oauth_connections WHERE id = $1', [id]))[0];

/** The token RPCs, answering their tokens (the responses wrap them). */
const exchangeCode = (harness: Harness, req: auth.ExchangeAuthorizationCodeRequest) =>
  harness.client.exchangeAuthorizationCode(req).then((r) => r.tokens!);
const exchangeRefresh = (harness: Harness, req: auth.ExchangeRefreshTokenRequest) =>
  harness.client.exchangeRefreshToken(req).then((r) => r.tokens!);

describe('RegisterOAuthClient and GetOAuthClient', () => {
  it('registers a public client with a trimmed name and canonical scope, and answers it by id', async () => {
    const { client } = await h.client.registerOAuthClient(
      registration({ clientName: '  Claude  ', scope: 'ai read', clientUri: 'https://claude.example', logoUri: 'https://claude.example/logo.png', softwareId: 'claude-code', softwareVersion: '2.1' }),
    );
    expect(client).toEqual({
      clientId: expect.stringMatching(/^mcl_[0-9a-v]+$/),
      clientName: 'Claude',
      redirectUris: [REDIRECT, LOOPBACK_REDIRECT],
      clientUri: 'https://claude.example',
      logoUri: 'https://claude.example/logo.png',
      scope: 'read ai',
      createdAt: at(0),
      softwareId: 'claude-code',
      softwareVersion: '2.1',
    });
    expect((await h.client.getOAuthClient({ clientId: client!.clientId })).client).toEqual(client);
  });

  it('accepts http redirect URIs on localhost, 127.0.0.1 and [::1]', async () => {
    const uris = ['http://localhost:6274/oauth/callback', 'http://127.0.0.1/callback', 'http://[::1]:8080/callback'];
    expect((await h.client.registerOAuthClient(registration({ redirectUris: uris }))).client?.redirectUris).toEqual(uris);
  });

  it.each<[string, string[]]>([
    ['no redirect URI', []],
    ['eleven redirect URIs', Array.from({ length: 11 }, (_, i) => `https://client.example/cb${i}`)],
    ['http on a public host', ['http://client.example/callback']],
    ['http on a host that merely starts with localhost', ['http://localhost.evil.example/callback']],
    ['a fragment', ['https://client.example/callback#frag']],
    ['a relative URI', ['/callback']],
    ['a file URI', ['file:///tmp/callback']],
    ['a javascript URI', ['javascript:alert(1)']],
    ['a URI over 2000 characters', [`https://client.example/${'a'.repeat(2000)}`]],
    ['one bad URI among good ones', [REDIRECT, 'http://client.example/callback']],
  ])('refuses %s as invalid_request on redirect_uris and stores nothing', async (_name, redirectUris) => {
    const before = await db.query('SELECT id FROM oauth_clients');
    const err = await failure(h.client.registerOAuthClient(registration({ redirectUris })));
    expect({ code: err.code, param: err.param }).toEqual({ code: 'invalid_request', param: 'redirect_uris' });
    expect(await db.query('SELECT id FROM oauth_clients')).toHaveLength(before.length);
  });

  it.each<[string, Partial<auth.RegisterOAuthClientRequest>, string]>([
    ['a 201-character name', { clientName: 'x'.repeat(201) }, 'client_name'],
    ['an unknown scope', { scope: 'read write' }, 'scope'],
    ['a javascript logo_uri', { logoUri: 'javascript:alert(1)' }, 'logo_uri'],
    ['a relative client_uri', { clientUri: '/about' }, 'client_uri'],
  ])('refuses %s', async (_name, overrides, param) => {
    const err = await failure(h.client.registerOAuthClient(registration(overrides)));
    expect({ code: err.code, param: err.param }).toEqual({ code: 'invalid_request', param });
  });

  it('names a client that sent no name by its redirect host, and registers a native app by its own scheme', async () => {
    expect((await h.client.registerOAuthClient(registration({ clientName: '  ' }))).client?.clientName).toBe('client.example');
    const native = await h.client.registerOAuthClient(registration({ clientName: '', redirectUris: ['cursor://anysphere.cursor-mcp/oauth/callback'] }));
    expect(native.client).toMatchObject({ clientName: 'anysphere.cursor-mcp', redirectUris: ['cursor://anysphere.cursor-mcp/oauth/callback'] });
  });

  it('answers not_found for an unknown client and invalid_request for a malformed id', async () => {
    expect((await failure(h.client.getOAuthClient({ clientId: 'mcl_0000000000000000000000aa' }))).code).toBe('not_found');
    expect((await failure(h.client.getOAuthClient({ clientId: 'https://client.example/meta.json' }))).code).toBe('invalid_request');
  });
});

describe('CreateAuthorizationCode', () => {
  it('answers a mac_ code for 5 minutes and stores only its hash, bound to the consent', async () => {
    const userId = await newUser();
    const clientId = await newClient();
    const { challenge } = pkce();
    const res = await h.client.createAuthorizationCode({
      userId,
      clientId,
      clientName: ' Claude ',
      redirectUri: REDIRECT,
      codeChallenge: challenge,
      scopes: ['ai', 'read'],
      resource: 'HTTPS://API.murmur.test:443/mcp/',
    });
    expect(res.code).toMatch(/^mac_[A-Za-z0-9_-]{43}$/);
    expect(res.expiresAt).toEqual(at(5 * MINUTE));
    const rows = await db.query('SELECT * FROM oauth_codes WHERE user_id = $1', [userId]);
    expect(rows).toEqual([
      {
        code_hash: sha256(res.code),
        client_id: clientId,
        client_name: 'Claude',
        user_id: userId,
        redirect_uri: REDIRECT,
        code_challenge: challenge,
        scopes: ['read', 'ai'],
        resource: RESOURCE,
        created_at: at(0),
        expires_at: at(5 * MINUTE),
        used_at: null,
        connection_id: null,
      },
    ]);
  });

  it('answers not_found for an unknown user or an unknown registered client', async () => {
    const clientId = await newClient();
    let err = await failure(authorize({ userId: 'usr_0000000000000000000000aa', clientId }));
    expect({ code: err.code, param: err.param }).toEqual({ code: 'not_found', param: 'user_id' });
    err = await failure(authorize({ clientId: 'mcl_0000000000000000000000aa' }));
    expect({ code: err.code, param: err.param }).toEqual({ code: 'not_found', param: 'client_id' });
  });

  it.each<[string, Partial<auth.CreateAuthorizationCodeRequest>, string]>([
    ['no scopes', { scopes: [] }, 'scopes'],
    ['an unknown scope', { scopes: ['read', 'write'] }, 'scopes'],
    ['a plain-method challenge (not 43 base64url characters)', { codeChallenge: 'my-plain-verifier' }, 'code_challenge'],
    ['a 42-character challenge', { codeChallenge: 'A'.repeat(42) }, 'code_challenge'],
    ['a padded challenge', { codeChallenge: `${'A'.repeat(43)}=` }, 'code_challenge'],
    ['no challenge', { codeChallenge: '' }, 'code_challenge'],
    ['no resource', { resource: '' }, 'resource'],
    ['a resource that does not parse', { resource: 'api.murmur.test/mcp' }, 'resource'],
    ['a resource with a fragment', { resource: `${RESOURCE}#x` }, 'resource'],
    ['a redirect URI the client did not register', { redirectUri: 'https://client.example/other' }, 'redirect_uri'],
    ['an http redirect URI on a public host', { redirectUri: 'http://client.example/callback' }, 'redirect_uri'],
    ['an empty client id', { clientId: '' }, 'client_id'],
    ['an http client id URL', { clientId: 'http://client.example/client.json' }, 'client_id'],
  ])('refuses %s as invalid_request', async (_name, overrides, param) => {
    const err = await failure(authorize(overrides));
    expect({ code: err.code, param: err.param }).toEqual({ code: 'invalid_request', param });
  });

  it('accepts a registered loopback redirect URI on any port (RFC 8252 §7.3)', async () => {
    const a = await authorize({ redirectUri: 'http://127.0.0.1:50123/callback' });
    expect((await exchangeCode(h, exchangeRequest(a))).accessToken).toMatch(/^mat_/);
  });

  it('refuses scopes beyond those the client registered', async () => {
    const clientId = await newClient({ scope: 'read' });
    const err = await failure(authorize({ clientId, scopes: ['read', 'ai'] }));
    expect({ code: err.code, param: err.param }).toEqual({ code: 'invalid_request', param: 'scopes' });
    await expect(authorize({ clientId, scopes: ['read'] })).resolves.toMatchObject({ clientId });
  });

  it('accepts a Client ID Metadata Document URL as the client id, without a registration', async () => {
    const clientId = 'https://client.example/oauth/client-metadata.json';
    const c = await connect({ clientId, redirectUri: 'https://anything.example/cb' });
    expect((await verify(c.accessToken)).principal?.clientId).toBe(clientId);
  });
});

describe(`the cap of ${MAX_ACTIVE_OAUTH_CONNECTIONS} connections and pending codes a user`, () => {
  it('refuses one more consent with oauth_connection_limit_reached; revoked, spent-out and redeemed ones free their place', async () => {
    const userId = await newUser();
    const clientId = await newClient();
    // Half as connections (their first pair is live), half as codes not yet redeemed.
    const connections = [];
    for (let i = 0; i < MAX_ACTIVE_OAUTH_CONNECTIONS / 2; i++) connections.push(await connect({ userId, clientId }));
    const pending = [];
    for (let i = 0; i < MAX_ACTIVE_OAUTH_CONNECTIONS / 2; i++) pending.push(await authorize({ userId, clientId }));
    const err = await failure(authorize({ userId, clientId }));
    expect([err.code, err.httpStatus]).toEqual(['oauth_connection_limit_reached', 409]);
    expect(err.message).toMatch(/50 connected apps.*Revoke one/);
    // Another user is not affected.
    await expect(authorize({ clientId })).resolves.toBeDefined();

    // A revoked connection frees a place.
    await h.client.revokeOAuthConnection({ connectionId: connections[0]!.connectionId, userId });
    const next = await authorize({ userId, clientId });
    expect((await failure(authorize({ userId, clientId }))).code).toBe('oauth_connection_limit_reached');
    // Redeeming a pending code turns one pending place into one connection: still full.
    await exchangeCode(h, exchangeRequest(next));
    expect((await failure(authorize({ userId, clientId }))).code).toBe('oauth_connection_limit_reached');
    // Codes expire in 5 minutes: the pending ones free their places.
    h.clock.set(new Date(Date.parse(T0) + 5 * MINUTE));
    await expect(authorize({ userId, clientId })).resolves.toBeDefined();
    // A connection whose refresh token ran out cannot act any more: it does not count either.
    h.clock.set(new Date(Date.parse(T0) + 30 * DAY));
    for (let i = 0; i < MAX_ACTIVE_OAUTH_CONNECTIONS; i++) await authorize({ userId, clientId });
    expect((await failure(authorize({ userId, clientId }))).code).toBe('oauth_connection_limit_reached');
  });

  it('lets exactly as many concurrent consents through as there are places left', async () => {
    const userId = await newUser();
    const clientId = await newClient();
    for (let i = 0; i < MAX_ACTIVE_OAUTH_CONNECTIONS - 2; i++) await authorize({ userId, clientId });
    const outcomes = await Promise.allSettled(Array.from({ length: 6 }, () => authorize({ userId, clientId })));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(2);
  });
});

describe('ExchangeAuthorizationCode', () => {
  it('issues a token pair that VerifyKey accepts for the resource, with the scopes and client', async () => {
    const c = await connect({ scopes: ['read'] });
    expect(c.accessToken).toMatch(/^mat_[A-Za-z0-9_-]{43}$/);
    expect(c.refreshToken).toMatch(/^mrt_[A-Za-z0-9_-]{43}$/);
    expect({ expiresIn: c.expiresIn, scopes: c.scopes }).toEqual({ expiresIn: 3600, scopes: ['read'] });
    expect(c.connectionId).toMatch(/^con_[0-9a-v]+$/);
    const expected = { userId: c.userId, keyId: c.connectionId, keyExpiresAt: at(HOUR), scopes: ['read'], clientId: c.clientId };
    expect((await verify(c.accessToken)).principal).toEqual(expected);
    // The same resource spelled differently is the same resource.
    expect((await verify(c.accessToken, 'HTTPS://api.MURMUR.test/mcp/')).principal).toEqual(expected);
  });

  it.each([
    ['another resource', 'https://api.murmur.test/api/v1'],
    ['another host', 'https://evil.example/mcp'],
    ['an empty resource', ''],
    ['a resource that does not parse', 'mcp'],
  ])('VerifyKey refuses the access token for %s', async (_name, resource) => {
    const c = await connect();
    await expectTokenRefused(c.accessToken, resource);
  });

  it.each<[string, (a: Authorized) => Partial<auth.ExchangeAuthorizationCodeRequest>, RegExp]>([
    ['a wrong code_verifier', () => ({ codeVerifier: pkce().verifier }), /does not match the code_challenge/],
    ['a missing code_verifier', () => ({ codeVerifier: '' }), /code_verifier is required/],
    ['a 42-character code_verifier', (a) => ({ codeVerifier: a.verifier.slice(1) }), /43 to 128 characters/],
    ['another redirect_uri', () => ({ redirectUri: 'https://client.example/other' }), /redirect_uri/],
    ['a redirect_uri with a trailing slash', () => ({ redirectUri: `${REDIRECT}/` }), /redirect_uri/],
    ['no redirect_uri', () => ({ redirectUri: '' }), /redirect_uri/],
    ['another client_id', () => ({ clientId: 'mcl_0000000000000000000000aa' }), /another client/],
    ['another resource', () => ({ resource: 'https://evil.example/mcp' }), /resource/],
  ])('refuses %s as invalid_grant and leaves the code to its rightful client', async (_name, change, message) => {
    const a = await authorize();
    await expectGrantRefused(exchangeCode(h, exchangeRequest(a, change(a))), message);
    const tokens = await exchangeCode(h, exchangeRequest(a));
    expect((await verify(tokens.accessToken)).principal?.userId).toBe(a.userId);
  });

  it('refuses the plain PKCE method: a challenge equal to its verifier does not verify', async () => {
    const verifier = pkce().verifier;
    const a = await authorize({ verifier, codeChallenge: verifier });
    await expectGrantRefused(exchangeCode(h, exchangeRequest(a)), /does not match the code_challenge/);
  });

  it('accepts the resource spelled differently, and no resource at all', async () => {
    const a = await authorize();
    await expect(exchangeCode(h, exchangeRequest(a, { resource: 'https://API.murmur.test/mcp/' }))).resolves.toMatchObject({ scopes: ['read', 'ai'] });
    const b = await authorize();
    await expect(exchangeCode(h, exchangeRequest(b, { resource: '' }))).resolves.toMatchObject({ scopes: ['read', 'ai'] });
  });

  it.each([
    ['accepts', '5 min - 1 ms', 5 * MINUTE - 1, true],
    ['refuses', 'exactly 5 min', 5 * MINUTE, false],
    ['refuses', '5 min + 1 s', 5 * MINUTE + SECOND, false],
  ])('%s a code %s old', async (_verb, _age, ageMs, accepted) => {
    const a = await authorize();
    h.clock.advance(ageMs);
    const call = exchangeCode(h, exchangeRequest(a));
    if (accepted) expect((await call).connectionId).toMatch(/^con_/);
    else await expectGrantRefused(call, /expired/);
  });

  it.each([
    ['a well-formed code never issued', () => generateOAuthSecret('mac')],
    ['a malformed code', () => 'mac_short'],
    ['a refresh token', () => generateOAuthSecret('mrt')],
  ])('refuses %s', async (_name, code) => {
    const a = await authorize();
    await expectGrantRefused(exchangeCode(h, exchangeRequest(a, { code: code() })), /unknown/);
  });

  it('refuses a code presented a second time and revokes the tokens of its first exchange (RFC 6749 §4.1.2)', async () => {
    const a = await authorize();
    const first = await exchangeCode(h, exchangeRequest(a));
    expect((await verify(first.accessToken)).principal?.keyId).toBe(first.connectionId);
    announced.length = 0;

    await expectGrantRefused(exchangeCode(h, exchangeRequest(a)), /already used/);
    await expectTokenRefused(first.accessToken);
    await expectGrantRefused(refresh(a.clientId, first.refreshToken));
    expect(await connectionRow(first.connectionId)).toMatchObject({ revoked_at: at(0), revoked_reason: 'code_replay' });
    expect(announced).toEqual([first.connectionId]);
    expect((await h.client.listOAuthConnections({ userId: a.userId })).connections).toEqual([]);
  });

  it.each([2, 5])('of %i concurrent exchanges of one code, one gets tokens and the others revoke them', async (n) => {
    const a = await authorize();
    const outcomes = await Promise.allSettled(Array.from({ length: n }, () => exchangeCode(h, exchangeRequest(a))));
    const won = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    const lost = outcomes.flatMap((o) => (o.status === 'rejected' ? [(o.reason as { code?: string }).code] : []));
    expect(won).toHaveLength(1);
    expect(lost).toEqual(Array(n - 1).fill('invalid_grant'));
    expect(await db.query('SELECT id FROM oauth_connections WHERE user_id = $1', [a.userId])).toHaveLength(1);
    await expectTokenRefused(won[0]!.accessToken);
    expect(await connectionRow(won[0]!.connectionId)).toMatchObject({ revoked_reason: 'code_replay' });
  });
});

describe('ExchangeRefreshToken', () => {
  it('rotates: the new pair works, the presented refresh token is spent and chained to its successor', async () => {
    const c = await connect();
    h.clock.advance(10 * MINUTE);
    const next = await refresh(c.clientId, c.refreshToken);
    expect(next).toEqual({
      accessToken: expect.stringMatching(/^mat_/),
      refreshToken: expect.stringMatching(/^mrt_/),
      expiresIn: 3600,
      scopes: ['read', 'ai'],
      connectionId: c.connectionId,
    });
    expect((await verify(next.accessToken)).principal).toMatchObject({ keyId: c.connectionId, keyExpiresAt: at(10 * MINUTE + HOUR) });
    const [old] = await db.query<{ used_at: Date | null; replaced_by: string | null }>('SELECT used_at, replaced_by FROM oauth_refresh_tokens WHERE token_hash = $1', [
      sha256(c.refreshToken),
    ]);
    expect(old).toEqual({ used_at: at(10 * MINUTE), replaced_by: sha256(next.refreshToken) });
    // The successor rotates in turn.
    await expect(refresh(c.clientId, next.refreshToken)).resolves.toMatchObject({ connectionId: c.connectionId });
  });

  it('narrows the scopes of the new access token when asked, while the refresh token keeps the full grant', async () => {
    const c = await connect({ scopes: ['read', 'ai'] });
    const narrowed = await refresh(c.clientId, c.refreshToken, { scopes: ['read'] });
    expect(narrowed.scopes).toEqual(['read']);
    expect((await verify(narrowed.accessToken)).principal?.scopes).toEqual(['read']);
    expect((await refresh(c.clientId, narrowed.refreshToken)).scopes).toEqual(['read', 'ai']);
  });

  it.each<[string, Partial<auth.ExchangeRefreshTokenRequest>, RegExp]>([
    ['a scope beyond the grant', { scopes: ['read', 'ai'] }, /only narrow/],
    ['an unknown scope', { scopes: ['write'] }, /only narrow/],
    ['another resource', { resource: 'https://evil.example/mcp' }, /resource/],
    ['another client_id', { clientId: 'mcl_0000000000000000000000aa' }, /another client/],
    ['a malformed token', { refreshToken: 'mrt_short' }, /unknown/],
    ['an access token', { refreshToken: generateOAuthSecret('mat') }, /unknown/],
    ['a well-formed token never issued', { refreshToken: generateOAuthSecret('mrt') }, /unknown/],
  ])('refuses %s as invalid_grant without spending the token', async (_name, overrides, message) => {
    const c = await connect({ scopes: ['read'] });
    await expectGrantRefused(refresh(c.clientId, c.refreshToken, overrides), message);
    await expect(refresh(c.clientId, c.refreshToken)).resolves.toMatchObject({ connectionId: c.connectionId });
    expect((await connectionRow(c.connectionId))?.revoked_at).toBeNull();
  });

  it('accepts the resource spelled differently', async () => {
    const c = await connect();
    await expect(refresh(c.clientId, c.refreshToken, { resource: 'https://api.murmur.test:443/mcp' })).resolves.toMatchObject({ connectionId: c.connectionId });
  });

  it.each([
    ['accepts', '30 days - 1 ms', 30 * DAY - 1, true],
    ['refuses', 'exactly 30 days', 30 * DAY, false],
  ])('%s a refresh token %s old', async (_verb, _age, ageMs, accepted) => {
    const c = await connect();
    h.clock.advance(ageMs);
    const call = refresh(c.clientId, c.refreshToken);
    if (accepted) expect((await call).connectionId).toBe(c.connectionId);
    else await expectGrantRefused(call, /expired/);
  });

  it('revokes the whole connection when a spent refresh token is presented again, however soon (no reuse grace)', async () => {
    const c = await connect();
    const second = await refresh(c.clientId, c.refreshToken);
    const third = await refresh(c.clientId, second.refreshToken);
    expect((await verify(third.accessToken)).principal?.keyId).toBe(c.connectionId);
    announced.length = 0;

    // The same instant the token was spent: a spent token is never good again (RFC 9700 §4.14.2).
    await expectGrantRefused(refresh(c.clientId, c.refreshToken), /already used/);
    await expectTokenRefused(third.accessToken);
    await expectGrantRefused(refresh(c.clientId, third.refreshToken), /revoked/);
    expect(await connectionRow(c.connectionId)).toMatchObject({ revoked_at: at(0), revoked_reason: 'refresh_token_reuse' });
    expect(announced).toEqual([c.connectionId]);
  });

  it.each([2, 5])('of %i concurrent refreshes of one token at most one gets a pair, and the family is revoked', async (n) => {
    const c = await connect();
    const outcomes = await Promise.allSettled(Array.from({ length: n }, () => refresh(c.clientId, c.refreshToken)));
    const won = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    expect(won.length).toBeLessThanOrEqual(1);
    for (const o of outcomes) if (o.status === 'rejected') expect((o.reason as MurmurError).code).toBe('invalid_grant');
    expect(await connectionRow(c.connectionId)).toMatchObject({ revoked_reason: 'refresh_token_reuse' });
    for (const o of won) {
      await expectTokenRefused(o.accessToken);
      await expectGrantRefused(refresh(c.clientId, o.refreshToken), /revoked/);
    }
  });

  it('refuses a spent refresh token of a connection revoked meanwhile as revoked', async () => {
    const c = await connect();
    await refresh(c.clientId, c.refreshToken);
    await h.client.revokeOAuthConnection({ connectionId: c.connectionId, userId: c.userId });
    await expectGrantRefused(refresh(c.clientId, c.refreshToken), /revoked/);
  });
});

describe('RevokeOAuthToken (RFC 7009)', () => {
  it('revokes the whole connection for a refresh token', async () => {
    const c = await connect();
    announced.length = 0;
    expect(await h.client.revokeOAuthToken({ clientId: c.clientId, token: c.refreshToken })).toEqual({});
    await expectTokenRefused(c.accessToken);
    await expectGrantRefused(refresh(c.clientId, c.refreshToken), /revoked/);
    expect(await connectionRow(c.connectionId)).toMatchObject({ revoked_reason: 'client' });
    expect(announced).toEqual([c.connectionId]);
  });

  it('revokes only the access token itself for an access token', async () => {
    const c = await connect();
    announced.length = 0;
    expect(await h.client.revokeOAuthToken({ clientId: c.clientId, token: c.accessToken })).toEqual({});
    await expectTokenRefused(c.accessToken);
    // The gateways drop what they cached for the connection.
    expect(announced).toEqual([c.connectionId]);
    const next = await refresh(c.clientId, c.refreshToken);
    expect((await verify(next.accessToken)).principal?.keyId).toBe(c.connectionId);
  });

  it.each<[string, (c: Awaited<ReturnType<typeof connect>>) => auth.RevokeOAuthTokenRequest]>([
    ['an unknown access token', (c) => ({ clientId: c.clientId, token: generateOAuthSecret('mat') })],
    ['an unknown refresh token', (c) => ({ clientId: c.clientId, token: generateOAuthSecret('mrt') })],
    ['a malformed token', (c) => ({ clientId: c.clientId, token: 'not-a-token' })],
    ['an empty token', (c) => ({ clientId: c.clientId, token: '' })],
    ["another client's access token", (c) => ({ clientId: 'mcl_0000000000000000000000aa', token: c.accessToken })],
    ["another client's refresh token", (c) => ({ clientId: 'mcl_0000000000000000000000aa', token: c.refreshToken })],
  ])('answers success and changes nothing for %s', async (_name, request) => {
    const c = await connect();
    announced.length = 0;
    expect(await h.client.revokeOAuthToken(request(c))).toEqual({});
    expect(announced).toEqual([]);
    expect((await verify(c.accessToken)).principal?.keyId).toBe(c.connectionId);
    await expect(refresh(c.clientId, c.refreshToken)).resolves.toMatchObject({ connectionId: c.connectionId });
  });
});

describe('VerifyKey with an access token', () => {
  it.each([
    ['accepts', '1 h - 1 ms', HOUR - 1, null],
    ['answers expired_api_key for', 'exactly 1 h', HOUR, 'expired_api_key'],
    ['answers expired_api_key for', '1 h + 1 s', HOUR + SECOND, 'expired_api_key'],
  ])('%s a token %s old', async (_verb, _age, ageMs, code) => {
    const c = await connect();
    h.clock.advance(ageMs);
    if (code === null) expect((await verify(c.accessToken)).principal?.keyId).toBe(c.connectionId);
    else expect((await failure(verify(c.accessToken))).code).toBe(code);
  });

  it('refuses a well-formed token never issued as invalid_api_key', async () => {
    await expectTokenRefused(generateOAuthSecret('mat'));
  });

  it.each([
    ['a refresh token', () => generateOAuthSecret('mrt')],
    ['an authorization code', () => generateOAuthSecret('mac')],
  ])('refuses %s as a bearer token without touching the database', async (_name, token) => {
    h.probe.statements.length = 0;
    await expectTokenRefused(token());
    expect(h.probe.statements).toEqual([]);
  });

  it('asks the database on every verification: access tokens are never cached', async () => {
    const c = await connect();
    const lookups = () => h.probe.statements.filter((s) => /FROM oauth_access_tokens/.test(s)).length;
    h.probe.statements.length = 0;
    await verify(c.accessToken);
    await verify(c.accessToken);
    expect(lookups()).toBe(2);
  });

  it('records last_used_at on the connection at most once a minute', async () => {
    const c = await connect();
    const lastUsed = async () => (await h.client.listOAuthConnections({ userId: c.userId })).connections[0]?.lastUsedAt;
    expect(await lastUsed()).toBeUndefined();
    const step = async (advanceMs: number) => {
      h.clock.advance(advanceMs);
      await verify(c.accessToken);
      await h.running.idle();
      return lastUsed();
    };
    expect(await step(0)).toEqual(at(0));
    expect(await step(30 * SECOND)).toEqual(at(0));
    expect(await step(30 * SECOND)).toEqual(at(0)); // exactly 60 s later: still throttled
    expect(await step(SECOND)).toEqual(at(61 * SECOND));
  });
});

describe("Envoy's ext_authz Check", () => {
  it.each([
    ['the MCP path', 'https', 'api.murmur.test', '/mcp', 'https://api.murmur.test/mcp'],
    ['the MCP path with a query', 'https', 'api.murmur.test:8443', '/mcp?x=1', 'https://api.murmur.test:8443/mcp'],
    ['an RPC path', 'http', 'murmur-envoy:9000', '/murmur.library.v1.LibraryService/ListRecordings', ''],
    ['a path below /mcp', 'https', 'api.murmur.test', '/mcp/other', ''],
    ['no scheme', '', 'api.murmur.test', '/mcp', ''],
  ])('derives the resource of %s', (_name, scheme, host, path, expected) => {
    expect(resourceOf({ attributes: { request: { http: { scheme, host, path } } } })).toBe(expected);
  });

  it('refuses an access token on the RPC paths it guards, like an unknown key', async () => {
    const c = await connect();
    const envoy = envoyAuthzClient(`127.0.0.1:${h.running.port}`);
    try {
      const res = await envoy.check(envoyCheckRequest({ authorization: `Bearer ${c.accessToken}` }));
      expect(res.status.code).toBe(16); // UNAUTHENTICATED
      expect(res.denied_response?.body).toMatch(/access token/);
    } finally {
      envoy.close();
    }
  });
});

describe('ListOAuthConnections and RevokeOAuthConnection', () => {
  it("lists a user's live connections, newest first, and no one else's", async () => {
    const userId = await newUser();
    const first = await connect({ userId, clientName: 'First app', scopes: ['read'] });
    h.clock.advance(MINUTE);
    const second = await connect({ userId, clientName: 'Second app' });
    h.clock.advance(MINUTE);
    const revoked = await connect({ userId });
    await h.client.revokeOAuthConnection({ connectionId: revoked.connectionId, userId });
    await connect(); // another user's

    const { connections } = await h.client.listOAuthConnections({ userId });
    expect(connections).toEqual([
      {
        id: second.connectionId,
        userId,
        clientId: second.clientId,
        clientName: 'Second app',
        scopes: ['read', 'ai'],
        resource: RESOURCE,
        createdAt: at(MINUTE),
        lastUsedAt: undefined,
        revokedAt: undefined,
      },
      expect.objectContaining({ id: first.connectionId, clientName: 'First app', scopes: ['read'], createdAt: at(0) }),
    ]);
  });

  it('revokes a connection of its user: its tokens fail on the next call and the gateways are told', async () => {
    const c = await connect();
    expect((await verify(c.accessToken)).principal?.keyId).toBe(c.connectionId);
    announced.length = 0;
    h.clock.advance(MINUTE);
    const { connection } = await h.client.revokeOAuthConnection({ connectionId: c.connectionId, userId: c.userId });
    expect(connection).toMatchObject({ id: c.connectionId, userId: c.userId, revokedAt: at(MINUTE) });
    expect(announced).toEqual([c.connectionId]);
    await expectTokenRefused(c.accessToken);
    await expectGrantRefused(refresh(c.clientId, c.refreshToken), /revoked/);
    expect((await h.client.listOAuthConnections({ userId: c.userId })).connections).toEqual([]);
    // Revoking again keeps the first time.
    h.clock.advance(MINUTE);
    expect((await h.client.revokeOAuthConnection({ connectionId: c.connectionId, userId: c.userId })).connection?.revokedAt).toEqual(at(MINUTE));
  });

  it("answers not_found for another user's connection, which keeps working", async () => {
    const c = await connect();
    const other = await newUser();
    const err = await failure(h.client.revokeOAuthConnection({ connectionId: c.connectionId, userId: other }));
    expect({ code: err.code, param: err.param }).toEqual({ code: 'not_found', param: 'connection_id' });
    expect((await verify(c.accessToken)).principal?.keyId).toBe(c.connectionId);
  });

  it('answers not_found for an unknown user or connection and invalid_request for malformed ids', async () => {
    const userId = await newUser();
    expect((await failure(h.client.listOAuthConnections({ userId: 'usr_0000000000000000000000aa' }))).code).toBe('not_found');
    expect((await failure(h.client.revokeOAuthConnection({ connectionId: 'con_0000000000000000000000aa', userId }))).code).toBe('not_found');
    expect((await failure(h.client.listOAuthConnections({ userId: '' }))).param).toBe('user_id');
    expect((await failure(h.client.revokeOAuthConnection({ connectionId: 'key_0000000000000000000000aa', userId }))).param).toBe('connection_id');
  });
});

describe('when the gateways cannot be told', () => {
  it('still refuses a reused refresh token and keeps the connection revoked, logging the failed announcement', async () => {
    const failing = await startHarness(db, {
      announceRevocation: async () => {
        throw new Error('redis is down');
      },
    });
    try {
      const userId = (await failing.client.createUser({ email: uniqueEmail('oauth'), name: 'Ada' })).user!.id;
      const clientId = (await failing.client.registerOAuthClient(registration())).client!.clientId;
      const { verifier, challenge } = pkce();
      const { code } = await failing.client.createAuthorizationCode({
        userId,
        clientId,
        clientName: 'Test MCP client',
        redirectUri: REDIRECT,
        codeChallenge: challenge,
        scopes: ['read'],
        resource: RESOURCE,
      });
      const first = await exchangeCode(failing, { clientId, code, codeVerifier: verifier, redirectUri: REDIRECT, resource: '' });
      await exchangeRefresh(failing, { clientId, refreshToken: first.refreshToken, scopes: [], resource: '' });
      const err = await failure(exchangeRefresh(failing, { clientId, refreshToken: first.refreshToken, scopes: [], resource: '' }));
      expect(err.code).toBe('invalid_grant');
      expect(await connectionRow(first.connectionId)).toMatchObject({ revoked_reason: 'refresh_token_reuse' });
      const errors = failing.logs.calls.filter((c) => c.level === 'error');
      expect(JSON.stringify(errors)).toContain(first.connectionId);
    } finally {
      await failing.stop();
    }
  });
});

describe('PostgresOAuthStore: the loser of a race learns it in its own transaction', () => {
  /** A pair of random hashes, as the domain would issue it at the clock's time. */
  const newPair = (): NewTokenPair => ({
    access: { tokenHash: sha256(generateOAuthSecret('mat')), scopes: ['read'], expiresAt: at(HOUR) },
    refresh: { tokenHash: sha256(generateOAuthSecret('mrt')), expiresAt: at(30 * DAY) },
    issuedAt: at(0),
  });
  const tokenCount = async (pair: NewTokenPair) =>
    (await db.query('SELECT 1 FROM oauth_access_tokens WHERE token_hash = $1', [pair.access.tokenHash])).length +
    (await db.query('SELECT 1 FROM oauth_refresh_tokens WHERE token_hash = $1', [pair.refresh.tokenHash])).length;

  it('a second redemption of a code (read as unused before the first committed) revokes the first one’s connection and inserts nothing', async () => {
    const store = new PostgresOAuthStore(db);
    const a = await authorize({ scopes: ['read'] });
    const [firstPair, secondPair] = [newPair(), newPair()];
    const first = await store.redeemAuthorizationCode(sha256(a.code), newId('con'), firstPair);
    expect(first).toMatchObject({ outcome: 'redeemed', connection: { userId: a.userId, clientId: a.clientId, scopes: ['read'], resource: RESOURCE, revokedAt: null } });
    if (first.outcome !== 'redeemed') throw new Error('unreachable');
    expect(await tokenCount(firstPair)).toBe(2);

    const secondId = newId('con');
    const second = await store.redeemAuthorizationCode(sha256(a.code), secondId, secondPair);
    expect(second).toMatchObject({ outcome: 'replayed', connection: { id: first.connection.id, revokedAt: at(0), revokedReason: 'code_replay' } });
    expect(await tokenCount(secondPair)).toBe(0);
    expect(await db.query('SELECT id FROM oauth_connections WHERE id = $1', [secondId])).toEqual([]);
  });

  it('an expired or unknown code opens nothing', async () => {
    const store = new PostgresOAuthStore(db);
    const a = await authorize();
    const late = { ...newPair(), issuedAt: at(5 * MINUTE) };
    const ids = [newId('con'), newId('con')];
    expect(await store.redeemAuthorizationCode(sha256(a.code), ids[0]!, late)).toEqual({ outcome: 'refused' });
    expect(await store.redeemAuthorizationCode(sha256(generateOAuthSecret('mac')), ids[1]!, newPair())).toEqual({ outcome: 'refused' });
    expect(await db.query('SELECT id FROM oauth_connections WHERE id = ANY($1)', [ids])).toEqual([]);
  });

  it('a second rotation of a refresh token (read as unspent before the first committed), however soon, revokes the connection and inserts nothing', async () => {
    const store = new PostgresOAuthStore(db);
    const c = await connect();
    const [firstPair, secondPair] = [newPair(), newPair()];
    expect(await store.rotateRefreshToken(sha256(c.refreshToken), firstPair)).toEqual({ outcome: 'rotated' });
    expect(await tokenCount(firstPair)).toBe(2);
    const second = await store.rotateRefreshToken(sha256(c.refreshToken), secondPair);
    expect(second).toMatchObject({ outcome: 'reused', connection: { id: c.connectionId, revokedReason: 'refresh_token_reuse' } });
    expect(await tokenCount(secondPair)).toBe(0);
  });

  it('an expired or unknown refresh token rotates nothing and revokes nothing', async () => {
    const store = new PostgresOAuthStore(db);
    const c = await connect();
    const late = { ...newPair(), issuedAt: at(30 * DAY) };
    expect(await store.rotateRefreshToken(sha256(c.refreshToken), late)).toEqual({ outcome: 'refused' });
    expect(await store.rotateRefreshToken(sha256(generateOAuthSecret('mrt')), newPair())).toEqual({ outcome: 'refused' });
    expect(await tokenCount(late)).toBe(0);
    expect((await connectionRow(c.connectionId))?.revoked_at).toBeNull();
  });
});

describe('what is stored and logged', () => {
  it('stores only SHA-256 hashes of codes and tokens, and logs none of them, their hashes, or the verifier', async () => {
    const a = await authorize();
    const first = await exchangeCode(h, exchangeRequest(a));
    await verify(first.accessToken);
    const second = await refresh(a.clientId, first.refreshToken);
    await h.client.revokeOAuthToken({ clientId: a.clientId, token: second.accessToken });
    await exchangeRefresh(h, { clientId: a.clientId, refreshToken: first.refreshToken, scopes: [], resource: '' }).catch(() => undefined);
    await h.running.idle();

    const stored = JSON.stringify([
      await db.query('SELECT * FROM oauth_codes WHERE user_id = $1', [a.userId]),
      await db.query('SELECT * FROM oauth_connections WHERE user_id = $1', [a.userId]),
      await db.query('SELECT * FROM oauth_access_tokens WHERE connection_id = $1', [first.connectionId]),
      await db.query('SELECT * FROM oauth_refresh_tokens WHERE connection_id = $1', [first.connectionId]),
    ]);
    const logged = JSON.stringify(h.logs.calls);
    const secrets = [a.code, first.accessToken, first.refreshToken, second.accessToken, second.refreshToken];
    for (const secret of secrets) {
      expect(stored).toContain(sha256(secret));
      expect(stored).not.toContain(secret.slice(4));
      expect(logged).not.toContain(secret.slice(4));
      expect(logged).not.toContain(sha256(secret));
    }
    expect(logged).not.toContain(a.verifier);
    // It did log, by id: the checks above looked at real log lines.
    expect(logged).toContain(first.connectionId);
  });
});
