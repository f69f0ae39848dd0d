/**
 * An MCP client that signs in by OAuth, as Claude's and ChatGPT's connectors do: the MCP SDK's
 * own Client and Streamable HTTP transport with an OAuthClientProvider kept in memory, a loopback
 * HTTP server as its redirect target, and real Chromium (a signed-in app session) approving the
 * consent screen. Nothing here speaks OAuth itself: discovery, registration, PKCE, the code
 * exchange and refreshing are the SDK's.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

/** A redirect target on loopback: records the query of each request to /callback. */
export interface Callback {
  url: string;
  /** Resolves with the query of the next request to the callback. */
  next(): Promise<URLSearchParams>;
  stop(): Promise<void>;
}

export async function startCallback(): Promise<Callback> {
  const waiting: Array<(q: URLSearchParams) => void> = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    res.writeHead(200, { 'content-type': 'text/plain' }).end('You can close this window.');
    if (url.pathname === '/callback') waiting.shift()?.(url.searchParams);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    next: () => new Promise((resolve) => waiting.push(resolve)),
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The SDK's OAuthClientProvider, in memory. */
export class MemoryOAuthProvider implements OAuthClientProvider {
  info?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = '';
  /** Where the SDK last sent the person to approve. */
  authorizationUrl?: URL;

  constructor(
    private readonly redirect: string,
    private readonly options: { scope?: string; clientMetadataUrl?: string; name?: string } = {},
  ) {}

  get redirectUrl(): string {
    return this.redirect;
  }
  get clientMetadataUrl(): string | undefined {
    return this.options.clientMetadataUrl;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.options.name ?? 'Test Connector',
      redirect_uris: [this.redirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...(this.options.scope ? { scope: this.options.scope } : {}),
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/**
 * The requests a transport sent and has no answer to yet: the SDK sends some in the background
 * (its GET stream after connecting), and a test that moves the clock waits for them first.
 */
export class RequestTracker {
  private readonly pending = new Set<Promise<unknown>>();

  readonly fetch = (url: string | URL, init?: RequestInit): Promise<Response> => {
    const answered = fetch(url, init);
    this.pending.add(answered);
    void answered.then(
      () => this.pending.delete(answered),
      () => this.pending.delete(answered),
    );
    return answered;
  };

  /** Resolves once every request sent so far has been answered (or failed). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }
}

/**
 * Connects `client` to the MCP server at `mcpUrl` through OAuth: the first connect is refused
 * (401 → discovery → registration → the authorization URL; `scope`, when given, replaces the
 * scopes it asks for), `page` (signed in to the app) opens it and approves, the callback's code is exchanged by the SDK, and the client connects
 * (its requests seen by `requests`, when given).
 */
export async function connectWithOAuth(mcpUrl: string, provider: MemoryOAuthProvider, callback: Callback, page: Page, scope?: string, requests?: RequestTracker): Promise<Client> {
  const first = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
  await expect(new Client({ name: 'connector', version: '1.0.0' }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
  if (!provider.authorizationUrl) throw new Error('the SDK did not ask to authorize');
  // The SDK asks for the scopes the server's challenge names (all); a client may ask for fewer.
  if (scope) provider.authorizationUrl.searchParams.set('scope', scope);
  const code = callback.next();
  await page.goto(provider.authorizationUrl.toString());
  await page.getByRole('button', { name: 'Approve' }).click();
  const query = await code;
  if (!query.get('code')) throw new Error(`no code at the callback: ${query.toString()}`);
  await first.finishAuth(query.get('code')!);
  const client = new Client({ name: 'connector', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider, ...(requests ? { fetch: requests.fetch } : {}) }));
  return client;
}
