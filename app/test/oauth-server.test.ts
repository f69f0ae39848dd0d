/**
 * Issue #16: the app as the OAuth 2.1 authorization server of MCP clients. First its pure rules,
 * table-driven; then over the whole system
 * (auth deciding every grant) and in real Chromium for the person's part. The protocol calls are
 * plain fetches, PKCE pairs made here: metadata; Dynamic Client Registration (public clients
 * only); the code flow from a signed-out browser through sign-in and consent to the client's
 * redirect URI (code, state, iss) and the token endpoint; Deny; what is refused before and after
 * a redirect URI is trusted (plain PKCE, no verifier, an unregistered redirect URI, another
 * resource, an unknown scope); refresh token rotation with reuse detection; revocation; a client
 * identified by its metadata document (served over TLS on loopback); forged consent posts; and
 * Connected apps in Settings → Developer.
 */
import { closeServiceClients, createServiceClients } from '@murmur/kit';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { createServer as createHttpServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tls from 'node:tls';
import type { BrowserContext, Page } from 'playwright-core';
import { MAX_ACTIVE_OAUTH_CONNECTIONS, MurmurError, OAUTH_SCOPE_DESCRIPTIONS, REGISTRATIONS_PER_ADDRESS_PER_HOUR } from '@murmur/contract';
import { testMinter } from '@murmur/kit/testing';
import { startSystem, type TestSystem } from '../../gateway/test/support/system';
import { signInLink } from '../src/web/config';
import { formActionSourceOf } from '../src/web/content-security';
import { resourceOf, scopesOf } from '../src/web/oauth/authorization-request';
import { cacheLifetimeMs, clientIdUrl } from '../src/web/oauth/client-metadata';
import { consentFields, CONSENT_TTL_MS, pendingOf, type PendingAuthorization } from '../src/web/oauth/consent-form';
import { isSameOriginPath } from '../src/web/return-path';
import { cspViolations, screenshot, startApp, type TestApp } from './support/app-browser';

jest.setTimeout(180_000);

type Json = Record<string, any>;

/** A PKCE S256 pair (RFC 7636). */
function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A loopback HTTP server standing in for an MCP client's redirect target: records each query of /callback. */
interface Callback {
  url: string;
  next(): Promise<URLSearchParams>;
  stop(): Promise<void>;
}

async function startCallback(): Promise<Callback> {
  const waiting: Array<(q: URLSearchParams) => void> = [];
  const server = createHttpServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    res.writeHead(200, { 'content-type': 'text/plain' }).end('Connected. You can close this window.');
    if (url.pathname === '/callback') waiting.shift()?.(url.searchParams);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    next: () => new Promise((resolve) => waiting.push(resolve)),
    stop: () => close(server),
  };
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

/**
 * Client ID Metadata Documents served over TLS on loopback, with a certificate made here and
 * trusted by this process only (tls.setDefaultCACertificates), as a public https host would be.
 */
interface DocumentHost {
  origin: string;
  port: number;
  /** What GET <path> answers. */
  serve(path: string, answer: { body: string; type?: string; cacheControl?: string }): void;
  /** GETs of each path so far. */
  hits: Map<string, number>;
  stop(): Promise<void>;
}

async function startDocumentHost(): Promise<DocumentHost> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'murmur-cimd-'));
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
    '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'),
  ], { stdio: 'ignore' });
  const key = fs.readFileSync(path.join(dir, 'key.pem'), 'utf8');
  const cert = fs.readFileSync(path.join(dir, 'cert.pem'), 'utf8');
  fs.rmSync(dir, { recursive: true, force: true });
  tls.setDefaultCACertificates([...tls.getCACertificates('default'), cert]);
  const answers = new Map<string, { body: string; type?: string; cacheControl?: string }>();
  const hits = new Map<string, number>();
  const server = createHttpsServer({ key, cert }, (req: IncomingMessage, res: ServerResponse) => {
    const p = new URL(req.url ?? '/', 'https://127.0.0.1').pathname;
    hits.set(p, (hits.get(p) ?? 0) + 1);
    const answer = answers.get(p);
    if (!answer) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': answer.type ?? 'application/json', ...(answer.cacheControl ? { 'cache-control': answer.cacheControl } : {}) }).end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `https://127.0.0.1:${port}`,
    port,
    serve: (p, answer) => void answers.set(p, answer),
    hits,
    stop: () => close(server as unknown as Server),
  };
}

describe('the app as the OAuth authorization server of MCP clients', () => {
  let sys: TestSystem;
  let app: TestApp;
  let callback: Callback;
  let docs: DocumentHost;
  let mcp: string;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    sys = await startSystem({ ai: true });
    docs = await startDocumentHost();
    // Loopback allowed, on the document host's port only: what MURMUR_CIMD_ALLOW_PRIVATE and _PORTS say.
    app = await startApp(sys, { clientMetadataPolicy: { allowPrivate: true, allowCidrs: [], ports: [docs.port] } });
    sys.oauth.authorizationServer = app.url;
    callback = await startCallback();
    mcp = `${sys.baseUrl}/mcp`;
  });
  afterAll(async () => {
    for (const c of contexts) await c.close();
    await callback?.stop();
    await docs?.stop();
    await app?.stop();
    await sys?.stop();
  });

  async function register(metadata: Json): Promise<{ status: number; body: Json; headers: Headers }> {
    const res = await fetch(`${app.url}/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(metadata) });
    return { status: res.status, body: (await res.json()) as Json, headers: res.headers };
  }

  /** A registered client redirecting to the loopback callback. */
  async function newClient(name: string, extra: Json = {}): Promise<string> {
    const { status, body } = await register({ client_name: name, redirect_uris: [callback.url], ...extra });
    expect(status).toBe(201);
    return body.client_id as string;
  }

  function authorizeUrl(params: Record<string, string>): string {
    return `${app.url}/authorize?${new URLSearchParams({ response_type: 'code', redirect_uri: callback.url, code_challenge_method: 'S256', ...params })}`;
  }

  async function token(form: Record<string, string>, headers: Record<string, string> = {}): Promise<{ status: number; body: Json; headers: Headers }> {
    const res = await fetch(`${app.url}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(form) });
    return { status: res.status, body: (await res.json()) as Json, headers: res.headers };
  }

  const exchange = (clientId: string, code: string, verifier: string) =>
    token({ grant_type: 'authorization_code', client_id: clientId, code, code_verifier: verifier, redirect_uri: callback.url, resource: mcp });
  const refresh = (clientId: string, refreshToken: string) => token({ grant_type: 'refresh_token', client_id: clientId, refresh_token: refreshToken });

  /** Whether auth still accepts an access token for the MCP server (what the gateway asks). */
  async function accepted(accessToken: string): Promise<boolean> {
    try {
      await sys.admin.auth.verifyKey({ authorization: `Bearer ${accessToken}`, resource: mcp });
      return true;
    } catch (err) {
      if (err instanceof MurmurError && (err.code === 'invalid_api_key' || err.code === 'expired_api_key')) return false;
      throw err;
    }
  }

  async function signInPage(page: Page, userId: string): Promise<void> {
    const { token: signInToken } = await sys.admin.auth.createSignInLink({ userId });
    await page.goto(signInLink(app.url, signInToken));
    await page.getByRole('button', { name: 'Continue' }).click();
  }

  /** A browser context signed in to the app as `userId`. */
  async function signedIn(userId: string, viewport = { width: 1280, height: 900 }): Promise<{ context: BrowserContext; page: Page }> {
    const context = await app.browser.newContext({ viewport });
    contexts.push(context);
    const page = await context.newPage();
    await signInPage(page, userId);
    await page.waitForURL(`${app.url}/settings/developer`);
    return { context, page };
  }

  /** Opens an authorization request in a signed-in page, approves it, and returns what the client received. */
  async function approve(page: Page, params: Record<string, string>): Promise<URLSearchParams> {
    const received = callback.next();
    await page.goto(authorizeUrl(params));
    await page.getByRole('button', { name: 'Approve' }).click();
    return received;
  }

  /** A connection of `userId` through `clientId`: its tokens. */
  async function connect(page: Page, clientId: string): Promise<Json> {
    const { verifier, challenge } = pkce();
    const query = await approve(page, { client_id: clientId, code_challenge: challenge, state: 's' });
    const res = await exchange(clientId, query.get('code')!, verifier);
    expect(res.status).toBe(200);
    return res.body;
  }

  it('publishes its metadata (RFC 8414): S256 only, read and ai, public clients, metadata documents, iss', async () => {
    const res = await fetch(`${app.url}/.well-known/oauth-authorization-server`, { headers: { origin: 'https://claude.ai' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const meta = (await res.json()) as Json;
    expect(meta).toMatchObject({
      issuer: app.url,
      authorization_endpoint: `${app.url}/authorize`,
      token_endpoint: `${app.url}/token`,
      registration_endpoint: `${app.url}/register`,
      revocation_endpoint: `${app.url}/revoke`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      scopes_supported: ['read', 'ai'],
      token_endpoint_auth_methods_supported: ['none'],
      revocation_endpoint_auth_methods_supported: ['none'],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    });
    // The MCP server's Protected Resource Metadata names this issuer exactly.
    const prm = (await (await fetch(`${sys.baseUrl}/.well-known/oauth-protected-resource/mcp`)).json()) as Json;
    expect(prm.authorization_servers).toEqual([meta.issuer]);
  });

  it('registers clients by DCR as public clients: no secret, auth method none, whatever they asked', async () => {
    const { status, body, headers } = await register({
      client_name: 'Secretive Client',
      redirect_uris: [callback.url],
      token_endpoint_auth_method: 'client_secret_post',
      grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
      scope: 'read',
    });
    expect(status).toBe(201);
    expect(headers.get('cache-control')).toBe('no-store');
    expect(body.client_id).toMatch(/^mcl_/);
    expect(body).toMatchObject({ client_name: 'Secretive Client', redirect_uris: [callback.url], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], scope: 'read' });
    expect(body).not.toHaveProperty('client_secret');
    expect(body).not.toHaveProperty('client_secret_expires_at');
    const { client } = await sys.admin.auth.getOAuthClient({ clientId: body.client_id });
    expect(client?.redirectUris).toEqual([callback.url]);

    // Refusals are RFC 7591 errors.
    const noUris = await register({ client_name: 'No URIs' });
    expect([noUris.status, noUris.body.error]).toEqual([400, 'invalid_client_metadata']);
    const plainHttp = await register({ client_name: 'Plain http', redirect_uris: ['http://client.example/cb'] });
    expect([plainHttp.status, plainHttp.body.error]).toEqual([400, 'invalid_redirect_uri']);
    const huge = await fetch(`${app.url}/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'x'.repeat(20_000), redirect_uris: [callback.url] }) });
    expect([huge.status, ((await huge.json()) as Json).error]).toEqual([413, 'invalid_client_metadata']);
  });

  it('runs the code flow: signed out → sign-in → consent → Approve → code, state and iss at the client → tokens; the code works once', async () => {
    const { user } = await sys.newUser('oauth-flow@example.com');
    const clientId = await newClient('Flow Test Client');
    const { verifier, challenge } = pkce();
    const state = randomBytes(12).toString('base64url');
    const context = await app.browser.newContext();
    contexts.push(context);
    const page = await context.newPage();
    const csp = cspViolations(page);

    await page.goto(authorizeUrl({ client_id: clientId, code_challenge: challenge, state, scope: 'read ai', resource: mcp }));
    expect(await page.locator('h1').textContent()).toBe('Sign in to connect Flow Test Client');
    const kept = (await context.cookies()).find((c) => c.name === 'murmur_return')!;
    expect(kept).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
    expect(decodeURIComponent(kept.value)).toMatch(/^\/authorize\?/);

    // Signing in (a link from the admin CLI) comes back to the request.
    const consent = page.waitForResponse((r) => r.url().startsWith(`${app.url}/authorize?`));
    await signInPage(page, user.id);
    const consentHeaders = (await consent).headers();
    await page.waitForURL(/\/authorize\?/);
    expect((await context.cookies()).some((c) => c.name === 'murmur_return')).toBe(false);
    expect(await page.locator('h1').textContent()).toBe('Allow Flow Test Client to use your Murmur account?');
    expect(await page.locator('.consent-email').textContent()).toBe('oauth-flow@example.com');
    expect(await page.locator('.redirect-host').textContent()).toBe(new URL(callback.url).host);
    expect(await page.locator('ul.scopes li').allTextContents()).toEqual([`read: ${OAUTH_SCOPE_DESCRIPTIONS.read}`, `ai: ${OAUTH_SCOPE_DESCRIPTIONS.ai}`]);
    // The form may post here and be redirected to the client: its origin, and no other, joins form-action.
    expect(consentHeaders['content-security-policy']).toContain(`form-action 'self' ${new URL(callback.url).origin};`);
    expect(consentHeaders['cache-control']).toBe('no-store');
    await screenshot(page, 'oauth-consent');

    const received = callback.next();
    await page.getByRole('button', { name: 'Approve' }).click();
    const query = await received;
    await page.waitForURL(/\/callback\?/);
    const code = query.get('code')!;
    expect(code).toMatch(/^mac_[A-Za-z0-9_-]{43}$/);
    expect([query.get('state'), query.get('iss'), query.get('error')]).toEqual([state, app.url, null]);

    // The token endpoint is for clients: no session, no CSRF token, any origin.
    const tokens = await token(
      { grant_type: 'authorization_code', client_id: clientId, code, code_verifier: verifier, redirect_uri: callback.url, resource: mcp },
      { origin: 'https://claude.ai', 'sec-fetch-site': 'cross-site' },
    );
    expect(tokens.status).toBe(200);
    expect(tokens.headers.get('cache-control')).toBe('no-store');
    expect(tokens.headers.get('access-control-allow-origin')).toBe('*');
    expect(tokens.body).toEqual({
      access_token: expect.stringMatching(/^mat_[A-Za-z0-9_-]{43}$/),
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: expect.stringMatching(/^mrt_[A-Za-z0-9_-]{43}$/),
      scope: 'read ai',
    });
    expect(await accepted(tokens.body.access_token)).toBe(true);

    // A code redeemed twice is refused, and the connection it opened is revoked (RFC 6749 §4.1.2).
    const again = await exchange(clientId, code, verifier);
    expect([again.status, again.body.error]).toEqual([400, 'invalid_grant']);
    expect(await accepted(tokens.body.access_token)).toBe(false);

    expect(csp).toEqual([]);
    const secrets = [code, verifier, tokens.body.access_token, tokens.body.refresh_token];
    expect(app.logLines.filter((l) => secrets.some((s) => l.includes(s)))).toEqual([]);
    expect(app.logLines.some((l) => l.includes('"path":"/token"'))).toBe(true);
  });

  it('sends error=access_denied, with state and iss and no code, when the person denies (on a phone-sized screen)', async () => {
    const { user } = await sys.newUser('oauth-deny@example.com');
    const clientId = await newClient('Denied Client');
    const { page } = await signedIn(user.id, { width: 390, height: 844 });
    const received = callback.next();
    await page.goto(authorizeUrl({ client_id: clientId, code_challenge: pkce().challenge, state: 'deny-state' }));
    expect(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')).toBe(0);
    await screenshot(page, 'phone-oauth-consent');
    await page.getByRole('button', { name: 'Deny' }).click();
    const query = await received;
    expect([query.get('error'), query.get('state'), query.get('iss'), query.get('code')]).toEqual(['access_denied', 'deny-state', app.url, null]);
    expect((await sys.admin.auth.listOAuthConnections({ userId: user.id })).connections).toEqual([]);
  });

  it('refuses code_challenge_method=plain at /authorize, and a token request without code_verifier or with a wrong one', async () => {
    const clientId = await newClient('PKCE Client');
    const plain = await fetch(authorizeUrl({ client_id: clientId, code_challenge: 'x'.repeat(43), code_challenge_method: 'plain', state: 'p' }), { redirect: 'manual' });
    expect([plain.status, plain.headers.get('location')]).toEqual([400, null]);
    expect(await plain.text()).toContain('This connection request cannot be used');

    const { user } = await sys.newUser('oauth-pkce@example.com');
    const { page } = await signedIn(user.id);
    const { verifier, challenge } = pkce();
    const code = (await approve(page, { client_id: clientId, code_challenge: challenge })).get('code')!;
    const none = await token({ grant_type: 'authorization_code', client_id: clientId, code, redirect_uri: callback.url });
    expect([none.status, none.body.error]).toEqual([400, 'invalid_request']);
    const wrong = await exchange(clientId, code, pkce().verifier);
    expect([wrong.status, wrong.body.error]).toEqual([400, 'invalid_grant']);
    // Neither refusal used the code up: the right verifier still redeems it.
    expect((await exchange(clientId, code, verifier)).status).toBe(200);
  });

  it('refuses an unregistered redirect_uri or an unknown client with a page, never a redirect', async () => {
    const clientId = await newClient('Redirect Client');
    for (const params of [
      { client_id: clientId, redirect_uri: 'https://evil.example/callback' },
      { client_id: clientId, redirect_uri: callback.url.replace('/callback', '/elsewhere') },
      { client_id: 'mcl_unknown', redirect_uri: callback.url },
      { client_id: 'https://127.0.0.1:1/missing.json', redirect_uri: callback.url },
    ]) {
      const res = await fetch(authorizeUrl({ ...params, code_challenge: pkce().challenge, state: 's' }), { redirect: 'manual' });
      expect([params.client_id, params.redirect_uri, res.status, res.headers.get('location')]).toEqual([params.client_id, params.redirect_uri, 400, null]);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await res.text()).toContain('This connection request cannot be used');
    }
  });

  it('answers every refusal of /authorize with a page on its own origin, never a redirect to the registered URI (no open redirect)', async () => {
    // Anyone can register a client with any redirect URI, so a registered one proves nothing.
    const evil = 'https://evil.example/landing';
    const attacker = (await register({ client_name: 'Attacker', redirect_uris: [evil], scope: 'read' })).body.client_id as string;
    const picky = await newClient('Picky Client', { scope: 'read' });
    const { user } = await sys.newUser('oauth-refusals@example.com');
    const { context } = await signedIn(user.id);
    const cookie = (await context.cookies(app.url)).map((c) => `${c.name}=${c.value}`).join('; ');
    const challenge = pkce().challenge;
    const cases: Array<[Record<string, string>, string]> = [
      [{ resource: 'https://other.example/mcp' }, 'another service'],
      [{ resource: `${sys.baseUrl}/api/v1` }, 'another service'],
      [{ resource: 'not a url' }, 'cannot accept'],
      [{ scope: 'read write' }, 'access Murmur does not have'],
      [{ scope: 'ai' }, 'access Murmur does not have'], // both clients registered for read only
      [{ code_challenge_method: 'plain' }, 'cannot accept'],
      [{ code_challenge: '' }, 'cannot accept'],
      [{ code_challenge: 'short' }, 'cannot accept'],
      [{ response_type: 'token' }, 'cannot accept'],
    ];
    for (const [clientId, redirectUri] of [[attacker, evil], [picky, callback.url]] as const) {
      for (const signedInToo of [false, true]) {
        for (const [params, explained] of cases) {
          const url = `${app.url}/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri, code_challenge: challenge, code_challenge_method: 'S256', state: 'st', ...params })}`;
          const res = await fetch(url, { redirect: 'manual', headers: signedInToo ? { cookie } : {} });
          const page = await res.text();
          expect([clientId, signedInToo, params, res.status, res.headers.get('location'), res.headers.get('content-type')?.startsWith('text/html')]).toEqual([
            clientId, signedInToo, params, 400, null, true,
          ]);
          expect(page).toContain('This connection request cannot be used');
          expect(page).toContain(explained);
          expect(page).not.toContain('evil.example');
        }
      }
    }
    // The MCP server's URL in another spelling names the same resource: on to sign-in.
    const same = await fetch(authorizeUrl({ client_id: picky, code_challenge: challenge, resource: `${mcp}/`, scope: 'read' }), { redirect: 'manual' });
    expect(same.status).toBe(200);
    expect(await same.text()).toContain('Sign in to connect Picky Client');
  });

  it(`answers Approve past the ${MAX_ACTIVE_OAUTH_CONNECTIONS} connections a user may hold with a page saying to revoke one, and sends the client nothing`, async () => {
    const { user } = await sys.newUser('oauth-full@example.com');
    const clientId = await newClient('One Too Many');
    for (let i = 0; i < MAX_ACTIVE_OAUTH_CONNECTIONS; i++) {
      await sys.admin.auth.createAuthorizationCode({ userId: user.id, clientId, clientName: 'One Too Many', redirectUri: callback.url, codeChallenge: pkce().challenge, scopes: ['read'], resource: mcp });
    }
    const { page } = await signedIn(user.id);
    await page.goto(authorizeUrl({ client_id: clientId, code_challenge: pkce().challenge, state: 'full' }));
    const answer = page.waitForResponse((r) => r.url().endsWith('/oauth/consent'));
    await page.getByRole('button', { name: 'Approve' }).click();
    expect((await answer).status()).toBe(409);
    expect(await page.locator('h1').textContent()).toBe('You have too many connected apps');
    expect(await page.content()).toContain('Revoke one you no longer use');
    // The browser stayed on the app: nothing went to the client's redirect URI.
    expect(page.url()).toBe(`${app.url}/oauth/consent`);
    expect((await sys.admin.auth.listOAuthConnections({ userId: user.id })).connections).toEqual([]);
  });

  it('rotates refresh tokens, and reusing a spent one revokes the family: the newest refresh token is refused too', async () => {
    const { user } = await sys.newUser('oauth-rotate@example.com');
    const clientId = await newClient('Rotating Client');
    const { page } = await signedIn(user.id);
    const first = await connect(page, clientId);
    const second = await refresh(clientId, first.refresh_token);
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'read ai' });
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    expect(second.body.access_token).not.toBe(first.access_token);
    const third = await refresh(clientId, second.body.refresh_token);
    expect(third.status).toBe(200);
    expect(await accepted(third.body.access_token)).toBe(true);

    // A spent token presented again, at once, is theft: the whole family goes (no reuse grace).
    const reused = await refresh(clientId, first.refresh_token);
    expect([reused.status, reused.body.error]).toEqual([400, 'invalid_grant']);
    const newest = await refresh(clientId, third.body.refresh_token);
    expect([newest.status, newest.body.error]).toEqual([400, 'invalid_grant']);
    expect(await accepted(third.body.access_token)).toBe(false);
  });

  it('revokes a refresh token at /revoke (RFC 7009), answers 200 for an unknown one, and asks for client_id', async () => {
    const { user } = await sys.newUser('oauth-revoke@example.com');
    const clientId = await newClient('Revoking Client');
    const { page } = await signedIn(user.id);
    const tokens = await connect(page, clientId);
    const revoke = (form: Record<string, string>) =>
      fetch(`${app.url}/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) });

    const res = await revoke({ client_id: clientId, token: tokens.refresh_token, token_type_hint: 'refresh_token' });
    expect([res.status, await res.json()]).toEqual([200, {}]);
    const after = await refresh(clientId, tokens.refresh_token);
    expect([after.status, after.body.error]).toEqual([400, 'invalid_grant']);
    expect(await accepted(tokens.access_token)).toBe(false);

    expect((await revoke({ client_id: clientId, token: `mrt_${'A'.repeat(43)}` })).status).toBe(200);
    const anonymous = await revoke({ token: tokens.refresh_token });
    expect([anonymous.status, ((await anonymous.json()) as Json).error]).toEqual([400, 'invalid_request']);
  });

  it('connects a client identified by its metadata document URL, fetched once and kept', async () => {
    const docPath = '/clients/connector.json';
    const clientId = `${docs.origin}${docPath}`;
    docs.serve(docPath, { body: JSON.stringify({ client_id: clientId, client_name: 'Metadata Client', redirect_uris: [callback.url], token_endpoint_auth_method: 'none' }) });
    const { user } = await sys.newUser('oauth-cimd@example.com');
    const { page } = await signedIn(user.id);
    const { verifier, challenge } = pkce();
    const received = callback.next();
    await page.goto(authorizeUrl({ client_id: clientId, code_challenge: challenge, state: 'cimd' }));
    expect(await page.locator('h1').textContent()).toBe('Allow Metadata Client to use your Murmur account?');
    expect(await page.locator('.published-by strong').textContent()).toBe(`127.0.0.1:${docs.port}`);
    await screenshot(page, 'oauth-consent-cimd');
    await page.getByRole('button', { name: 'Approve' }).click();
    const query = await received;
    expect([query.get('state'), query.get('iss')]).toEqual(['cimd', app.url]);
    const tokens = await exchange(clientId, query.get('code')!, verifier);
    expect(tokens.status).toBe(200);
    expect(await accepted(tokens.body.access_token)).toBe(true);
    // /authorize, the consent post and /token each needed the client; the document was fetched once.
    expect(docs.hits.get(docPath)).toBe(1);
    const { connections } = await sys.admin.auth.listOAuthConnections({ userId: user.id });
    expect(connections.map((c) => [c.clientId, c.clientName])).toEqual([[clientId, 'Metadata Client']]);
  });

  it('refuses metadata documents that do not describe their own URL, are too large, not JSON, or uncacheable ones fetched each time', async () => {
    const refusedDocs: Array<[string, (id: string) => { body: string; type?: string }, string]> = [
      ['/other.json', () => ({ body: JSON.stringify({ client_id: 'https://elsewhere.example/client.json', client_name: 'Impostor', redirect_uris: [callback.url] }) }), 'client_id is not its URL'],
      ['/no-uris.json', (id) => ({ body: JSON.stringify({ client_id: id, client_name: 'No URIs' }) }), 'not client metadata'],
      ['/secret.json', (id) => ({ body: JSON.stringify({ client_id: id, client_name: 'Secret', redirect_uris: [callback.url], token_endpoint_auth_method: 'client_secret_basic' }) }), 'client authentication'],
      ['/huge.json', (id) => ({ body: JSON.stringify({ client_id: id, client_name: 'Huge', redirect_uris: [callback.url], padding: 'x'.repeat(70_000) }) }), 'over 64 KB'],
      ['/html.json', (id) => ({ body: JSON.stringify({ client_id: id, client_name: 'HTML', redirect_uris: [callback.url] }), type: 'text/html' }), 'did not answer JSON'],
    ];
    for (const [docPath, doc, why] of refusedDocs) {
      const clientId = `${docs.origin}${docPath}`;
      docs.serve(docPath, doc(clientId));
      const logged = app.logLines.length;
      const res = await fetch(authorizeUrl({ client_id: clientId, code_challenge: pkce().challenge }), { redirect: 'manual' });
      expect([docPath, res.status, res.headers.get('location')]).toEqual([docPath, 400, null]);
      // Refused for its own fault: the reason is logged with the host, never shown to the client.
      const refusal = app.logLines.slice(logged).find((l) => l.includes('client metadata document refused'));
      expect([docPath, refusal]).toEqual([docPath, expect.stringContaining(why)]);
    }
    // A document that asks not to be stored is fetched again each time it is needed.
    const fresh = `${docs.origin}/fresh.json`;
    docs.serve('/fresh.json', { body: JSON.stringify({ client_id: fresh, client_name: 'Fresh', redirect_uris: [callback.url] }), type: 'application/json; charset=utf-8', cacheControl: 'no-store' });
    for (let i = 0; i < 2; i++) expect((await fetch(authorizeUrl({ client_id: fresh, code_challenge: pkce().challenge }), { redirect: 'manual' })).status).toBe(200);
    expect(docs.hits.get('/fresh.json')).toBe(2);
  });

  it('refuses consent posts without the CSRF token, from another site, or with a changed field, and sends the client nothing', async () => {
    const { user } = await sys.newUser('oauth-forged@example.com');
    const clientId = await newClient('Forged Client');
    const { context, page } = await signedIn(user.id);
    await page.goto(authorizeUrl({ client_id: clientId, code_challenge: pkce().challenge, state: 'f' }));
    const fields: Record<string, string> = {};
    for (const input of await page.locator('form.confirm input[type=hidden]').all()) fields[(await input.getAttribute('name'))!] = await input.inputValue();
    expect(Object.keys(fields).sort()).toEqual(['_csrf', 'client_id', 'client_name', 'code_challenge', 'issued_at', 'mac', 'redirect_uri', 'resource', 'scope', 'state']);
    const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const post = (form: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(`${app.url}/oauth/consent`, { method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(form) });
    const { _csrf: csrf, ...pending } = fields;
    const approve = { ...fields, decision: 'approve' };

    for (const [why, res, status] of [
      ['no CSRF token', await post({ ...pending, decision: 'approve' }), 403],
      ['another site', await post(approve, { 'sec-fetch-site': 'cross-site' }), 403],
      ['another origin', await post(approve, { origin: 'https://evil.example' }), 403],
      ['no session', await fetch(`${app.url}/oauth/consent`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(approve) }), 401],
      ['narrowed scope', await post({ ...approve, scope: 'read' }), 400],
      ['other redirect', await post({ ...approve, redirect_uri: 'https://evil.example/callback' }), 400],
      ['other challenge', await post({ ...approve, code_challenge: pkce().challenge }), 400],
      ['other client', await post({ ...approve, client_id: await newClient('Other Client') }), 400],
      ['no MAC', await post({ ...approve, mac: '' }), 400],
    ] as const) {
      expect([why, res.status, res.headers.get('location')]).toEqual([why, status, null]);
    }
    expect(csrf).toBeTruthy();
    // The same post untouched goes through: the refusals were the changes' doing.
    const ok = await post(approve);
    expect(ok.status).toBe(302);
    const back = new URL(ok.headers.get('location')!);
    expect([`${back.origin}${back.pathname}`, back.searchParams.get('state'), back.searchParams.get('iss')]).toEqual([callback.url, 'f', app.url]);
    expect(back.searchParams.get('code')).toMatch(/^mac_/);
  });

  it('lists the connection in Connected apps, and revoking it there makes the next refresh fail', async () => {
    const { user } = await sys.newUser('oauth-connected@example.com');
    const { page } = await signedIn(user.id);
    const csp = cspViolations(page);
    expect(await page.locator('section[aria-labelledby=connections-title] .empty').textContent()).toContain(mcp);

    const clientId = await newClient('Connected Client');
    const tokens = await connect(page, clientId);
    expect(await accepted(tokens.access_token)).toBe(true);
    await page.goto(`${app.url}/settings/developer`);
    const row = page.locator('table.connections tr', { hasText: 'Connected Client' });
    expect(await row.locator('td[data-label=Access]').textContent()).toBe('read, ai');
    const connected = new Date((await row.locator('td[data-label=Connected] time').getAttribute('datetime'))!);
    expect(Math.abs(connected.getTime() - Date.now())).toBeLessThan(120_000);
    for (let i = 0; ; i++) {
      if ((await row.locator('.last-used').textContent()) === 'just now') break;
      if (i > 50) throw new Error(`last use never shown: ${await row.locator('.last-used').textContent()}`);
      await new Promise((r) => setTimeout(r, 100));
      await page.reload();
    }
    await screenshot(page, 'developer-connected-apps');

    await row.getByRole('link', { name: 'Revoke Connected Client' }).click();
    expect(await page.locator('h1').textContent()).toBe('Revoke access of “Connected Client”?');
    await page.getByRole('button', { name: 'Revoke access' }).click();
    await page.waitForURL(/notice=connection-revoked/);
    expect(await page.getByRole('status').textContent()).toMatch(/revoked/);
    expect(await page.locator('table.connections').count()).toBe(0);

    const after = await refresh(clientId, tokens.refresh_token);
    expect([after.status, after.body.error]).toEqual([400, 'invalid_grant']);
    expect(await accepted(tokens.access_token)).toBe(false);
    expect(csp).toEqual([]);
  });

  it("cannot revoke another user's connection, by its confirmation page or by posting its id", async () => {
    const a = await sys.newUser('oauth-owner-a@example.com');
    const b = await sys.newUser('oauth-owner-b@example.com');
    const clientId = await newClient('Owned Client');
    const bob = await signedIn(b.user.id);
    const tokens = await connect(bob.page, clientId);
    const [connection] = (await sys.admin.auth.listOAuthConnections({ userId: b.user.id })).connections;

    const alice = await signedIn(a.user.id);
    await alice.page.goto(`${app.url}/settings/developer/connections/${connection!.id}/revoke`);
    expect(await alice.page.locator('h1').textContent()).toBe('No such connected app');
    const csrf = await alice.page.locator('input[name=_csrf]').first().inputValue();
    const cookie = (await alice.context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const res = await fetch(`${app.url}/settings/developer/connections/${connection!.id}/revoke`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf }),
    });
    expect(res.status).toBe(404);
    expect(await accepted(tokens.access_token)).toBe(true);
  });

  it('keeps the form limits on the token endpoint, answering OAuth errors', async () => {
    const clientId = await newClient('Large Client');
    const big = await token({ grant_type: 'refresh_token', client_id: clientId, refresh_token: 'x'.repeat(20_000) });
    expect([big.status, big.body.error]).toEqual([413, 'invalid_request']);
    const many = await token({ grant_type: 'refresh_token', client_id: clientId, ...Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${i}`, 'x'])) });
    expect([many.status, many.body.error]).toEqual([413, 'invalid_request']);
    const unknown = await token({ grant_type: 'refresh_token', client_id: 'mcl_nobody', refresh_token: `mrt_${'A'.repeat(43)}` });
    expect([unknown.status, unknown.body.error]).toEqual([400, 'invalid_client']);
  });

  it('keys the registration limit by the client behind a trusted proxy (MURMUR_TRUSTED_PROXIES), and by the connection for anyone else', async () => {
    // The proxy connects from 127.0.0.2, the only address trusted; a direct client from 127.0.0.1.
    const behind = await startApp(sys, { trustedProxies: ['127.0.0.2'] });
    try {
      const registerFrom = (localAddress: string, forwardedFor?: string) =>
        new Promise<{ status: number; retryAfter?: string; error?: string }>((resolve, reject) => {
          const body = JSON.stringify({ client_name: 'Limited', redirect_uris: [callback.url] });
          const req = httpRequest(`${behind.url}/register`, {
            method: 'POST',
            localAddress,
            agent: false,
            headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
          });
          req.on('response', (res) => {
            let text = '';
            res.on('data', (c: Buffer) => (text += c.toString('utf8')));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] as string | undefined, error: (JSON.parse(text) as Json).error as string | undefined }));
          });
          req.on('error', reject);
          req.end(body);
        });
      const statuses = async (n: number, localAddress: string, forwardedFor: (i: number) => string | undefined) => {
        const seen: number[] = [];
        for (let i = 0; i < n; i++) seen.push((await registerFrom(localAddress, forwardedFor(i))).status);
        return seen;
      };
      const all = (n: number, status: number) => Array.from({ length: n }, () => status);

      // Two clients behind the proxy: a bucket each.
      expect(await statuses(REGISTRATIONS_PER_ADDRESS_PER_HOUR, '127.0.0.2', () => '203.0.113.7')).toEqual(all(REGISTRATIONS_PER_ADDRESS_PER_HOUR, 201));
      const over = await registerFrom('127.0.0.2', '203.0.113.7');
      expect([over.status, over.error, Number(over.retryAfter) > 0]).toEqual([429, 'too_many_requests', true]);
      expect((await registerFrom('127.0.0.2', '203.0.113.8')).status).toBe(201);
      // The client's own X-Forwarded-For entries before the proxy's are not believed either.
      expect((await registerFrom('127.0.0.2', '198.51.100.1, 203.0.113.7')).status).toBe(429);

      // A client not behind a trusted proxy is its connection's address whatever it forwards.
      expect(await statuses(REGISTRATIONS_PER_ADDRESS_PER_HOUR, '127.0.0.1', (i) => `192.0.2.${i + 1}`)).toEqual(all(REGISTRATIONS_PER_ADDRESS_PER_HOUR, 201));
      expect((await registerFrom('127.0.0.1', '192.0.2.200')).status).toBe(429);
      expect((await registerFrom('127.0.0.1')).status).toBe(429);
    } finally {
      await behind.stop();
    }
  });

  it('answers 503 temporarily_unavailable, never a 500, at /token, /register and /revoke while auth is not answering', async () => {
    const clientId = await newClient('Outage Client');
    // An app whose auth address has nothing listening: every auth call fails as unavailable.
    const closed = createHttpServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', () => resolve()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const down = createServiceClients({ ...sys.addresses, AUTH_ADDR: `127.0.0.1:${port}` }, { deadlineMs: 2_000, identity: testMinter('app') });
    const outage = await startApp(sys, { clients: down });
    try {
      const form = (path: string, fields: Record<string, string>) =>
        fetch(`${outage.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) });
      const answers = [
        await form('/token', { grant_type: 'refresh_token', client_id: clientId, refresh_token: `mrt_${'A'.repeat(43)}` }),
        await form('/revoke', { client_id: clientId, token: `mrt_${'A'.repeat(43)}` }),
        await fetch(`${outage.url}/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'X', redirect_uris: ['http://127.0.0.1:9/cb'] }) }),
      ];
      for (const res of answers) {
        expect([res.status, ((await res.json()) as Json).error]).toEqual([503, 'temporarily_unavailable']);
      }
    } finally {
      await outage.stop();
      closeServiceClients(down);
    }
  });
});

describe("the authorization server's rules", () => {
  const MCP = 'https://api.murmur.example/mcp';

  it.each([
    [undefined, MCP],
    [new URL('HTTPS://API.Murmur.example:443/mcp/'), MCP],
    [new URL('https://api.murmur.example/api/v1'), null],
    [new URL('https://other.example/mcp'), null],
  ])('resource %s → %s', (requested, expected) => {
    expect(resourceOf(requested, MCP)).toBe(expected);
  });

  it.each([
    [[], undefined, ['read', 'ai']],
    [[''], '', ['read', 'ai']],
    [['ai', 'read'], undefined, ['read', 'ai']],
    [['read'], undefined, ['read']],
    [['write'], undefined, null],
    [['read', 'offline_access'], undefined, null],
    [[], 'read', ['read']],
    [['ai'], 'read', null],
  ] as const)('scopes %j of a client registered for %j → %j', (requested, clientScope, expected) => {
    expect(scopesOf(requested, clientScope)).toEqual(expected);
  });

  it.each([
    ['an authorize path', true, '/authorize?client_id=mcl_1&state=a%20b'],
    ['the root', true, '/'],
    ['a protocol-relative URL', false, '//evil.example/x'],
    ['a backslash path', false, '/\\evil.example'],
    ['an absolute URL', false, 'https://evil.example/'],
    ['a path with a space', false, '/a b'],
    ['a path with a control character', false, '/a\u0000b'],
    ['nothing', false, ''],
    ['a path of 3,001 characters', false, `/${'a'.repeat(3_000)}`],
  ])('%s is a same-origin return path: %s', (_what, expected, path) => {
    expect(isSameOriginPath(path as string)).toBe(expected);
  });

  it.each([
    [undefined, 300_000],
    ['max-age=60', 60_000],
    ['public, max-age=3600', 300_000],
    ['max-age=0', 0],
    ['no-store', 0],
    ['private, no-cache', 0],
  ])('a document with Cache-Control %j is kept %d ms', (header, expected) => {
    expect(cacheLifetimeMs(header)).toBe(expected);
  });

  const policy = { allowPrivate: false, allowCidrs: [], ports: [80, 443] };
  it.each([
    ['https://client.example/oauth/client.json', true],
    ['https://client.example/', false],
    ['https://client.example', false],
    ['http://client.example/client.json', false],
    ['https://Client.example/client.json', false],
    ['https://client.example/a/../client.json', false],
    ['https://client.example/client.json#x', false],
    ['https://user:pw@client.example/client.json', false],
    ['https://client.example:8443/client.json', false],
  ])('client id URL %s is acceptable: %s', (clientId, ok) => {
    if (ok) expect(clientIdUrl(clientId, policy).href).toBe(clientId);
    else expect(() => clientIdUrl(clientId, policy)).toThrow();
  });

  it.each([
    ['http://127.0.0.1:33418/callback', 'http://127.0.0.1:33418'],
    ['https://claude.ai/api/mcp/auth_callback', 'https://claude.ai'],
    ['cursor://anysphere.cursor-retrieval/oauth/callback', 'cursor:'],
    ['not a url', null],
  ])('a consent form answering to %s may post to %s', (redirectUri, expected) => {
    expect(formActionSourceOf(redirectUri)).toBe(expected);
  });

  describe('the consent form', () => {
    const now = Date.parse('2026-03-01T12:00:00Z');
    const pending: PendingAuthorization = {
      clientId: 'mcl_abc',
      clientName: 'Test Client',
      redirectUri: 'http://127.0.0.1:3000/callback',
      codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      scopes: ['read', 'ai'],
      resource: MCP,
      state: 'xyz',
      issuedAt: now,
    };
    const body = (fields: Array<{ name: string; value: string }>) => Object.fromEntries(fields.map((f) => [f.name, f.value]));

    it('carries the pending request back unchanged', () => {
      expect(pendingOf(body(consentFields(pending, 'sst_one')), 'sst_one', now + 1000)).toEqual({ ok: true, pending });
    });

    it.each([
      ['another session', (b: Record<string, string>) => b, 'sst_two', now],
      ['a changed scope', (b: Record<string, string>) => ({ ...b, scope: 'read' }), 'sst_one', now],
      ['a changed state', (b: Record<string, string>) => ({ ...b, state: 'abc' }), 'sst_one', now],
      ['a missing field', ({ resource: _r, ...b }: Record<string, string>) => b, 'sst_one', now],
    ])('refuses %s as tampered', (_why, change, session, at) => {
      expect(pendingOf(change(body(consentFields(pending, 'sst_one'))), session, at)).toEqual({ ok: false, why: 'tampered' });
    });

    it('refuses a form older than 10 minutes as expired', () => {
      const fields = body(consentFields(pending, 'sst_one'));
      expect(pendingOf(fields, 'sst_one', now + CONSENT_TTL_MS).ok).toBe(true);
      expect(pendingOf(fields, 'sst_one', now + CONSENT_TTL_MS + 1)).toEqual({ ok: false, why: 'expired' });
    });
  });
});
