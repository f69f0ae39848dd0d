/**
 * gRPC handlers of murmur.auth.v1.AuthService: request → service call → response, nothing else.
 * Errors are MurmurErrors from the service; the kit's server factory turns them into statuses.
 */
import { bindService, type BoundService } from '@murmur/kit';
import { auth } from '@murmur/proto';
import type { ListenTokenService } from './listen-tokens';
import type { RequestLog } from './request-log';
import type { RequestLogReadRow, RequestLogRow } from './request-log-store';
import type { IssuedTokens, OAuthGrants } from './oauth';
import type { OAuthClientRecord, OAuthConnectionRecord } from './oauth-store';
import type { AuthService, Principal, UserLookup } from './service';
import type { SignInService } from './sign-in';
import type { ApiKeyRecord, SessionRecord, User } from './store';

function toUser(u: User): auth.User {
  return { id: u.id, email: u.email, name: u.name, createdAt: u.createdAt };
}

/** Deliberately field by field: the key hash never leaves the service. */
function toApiKey(k: ApiKeyRecord): auth.ApiKey {
  return {
    id: k.id,
    userId: k.userId,
    name: k.name,
    hint: k.hint,
    createdAt: k.createdAt,
    expiresAt: k.expiresAt ?? undefined,
    lastUsedAt: k.lastUsedAt ?? undefined,
    revokedAt: k.revokedAt ?? undefined,
    scopes: k.scopes,
  };
}

/** Deliberately field by field: the token hash never leaves the service. */
function toSession(s: SessionRecord): auth.Session {
  return { id: s.id, userId: s.userId, createdAt: s.createdAt, expiresAt: s.expiresAt };
}

function toPrincipal(p: Principal): auth.Principal {
  return { userId: p.userId, keyId: p.keyId, keyExpiresAt: p.expiresAt ?? undefined, scopes: p.scopes, clientId: p.clientId };
}

function toOAuthClient(c: OAuthClientRecord): auth.OAuthClient {
  return {
    clientId: c.id,
    clientName: c.clientName,
    redirectUris: c.redirectUris,
    clientUri: c.clientUri,
    logoUri: c.logoUri,
    scope: c.scope,
    createdAt: c.createdAt,
    softwareId: c.softwareId,
    softwareVersion: c.softwareVersion,
  };
}

/** Field by field, like the others; the revocation reason has no field in the proto and stays in the database. */
function toOAuthConnection(c: OAuthConnectionRecord): auth.OAuthConnection {
  return {
    id: c.id,
    userId: c.userId,
    clientId: c.clientId,
    clientName: c.clientName,
    scopes: c.scopes,
    resource: c.resource,
    createdAt: c.createdAt,
    lastUsedAt: c.lastUsedAt ?? undefined,
    revokedAt: c.revokedAt ?? undefined,
  };
}

function toTokens(t: IssuedTokens): auth.OAuthTokens {
  return { accessToken: t.accessToken, refreshToken: t.refreshToken, expiresIn: t.expiresIn, scopes: t.scopes, connectionId: t.connectionId };
}

/** A gateway's entry as a row (a missing time is "now": the entry is then skipped as implausible only if the clock is). */
function fromEntry(e: auth.RequestLogEntry): RequestLogRow {
  return {
    owner_id: e.ownerId,
    created_at: e.createdAt ?? new Date(Number.NaN),
    request_id: e.requestId,
    method: e.method,
    route: e.route,
    tool: e.tool,
    status: e.status,
    error_code: e.errorCode,
    latency_us: e.latencyUs,
    key_id: e.keyId,
    client_id: e.clientId,
    trace_id: e.traceId,
    bytes_in: e.bytesIn,
    bytes_out: e.bytesOut,
    credits_charged: e.creditsCharged,
  };
}

function toEntry(r: RequestLogReadRow): auth.RequestLogEntry {
  return {
    requestId: r.request_id,
    ownerId: r.owner_id,
    createdAt: r.created_at,
    method: r.method,
    route: r.route,
    tool: r.tool,
    status: r.status,
    errorCode: r.error_code,
    latencyUs: r.latency_us,
    keyId: r.key_id,
    clientId: r.client_id,
    traceId: r.trace_id,
    bytesIn: Number(r.bytes_in),
    bytesOut: Number(r.bytes_out),
    creditsCharged: Number(r.credits_charged),
    keyHint: r.key_hint,
  };
}

function toLookup(lookup: auth.GetUserRequest['lookup']): UserLookup | undefined {
  switch (lookup?.$case) {
    case 'userId':
      return { by: 'id', userId: lookup.value };
    case 'email':
      return { by: 'email', email: lookup.value };
    default:
      return undefined;
  }
}

/**
 * The AuthService definition bound to `service` (users, keys), `signIn` (links, sessions),
 * `oauth` (clients, codes, tokens, connections), `listen` (listen tokens) and `requests` (the
 * request log), ready for startGrpcServer.
 */
export function bindAuthService(service: AuthService, signIn: SignInService, oauth: OAuthGrants, listen: ListenTokenService, requests: RequestLog): BoundService {
  return bindService(auth.AuthServiceService, {
    async recordRequests(req) {
      return requests.record(req.entries.map(fromEntry));
    },
    async listRequests(req) {
      const page = await requests.list({
        ownerId: req.ownerId,
        limit: req.limit,
        cursor: req.cursor,
        status: req.status,
        route: req.route,
        tool: req.tool,
        keyId: req.keyId,
        requestId: req.requestId,
        ...(req.createdAfter ? { createdAfter: req.createdAfter } : {}),
        ...(req.createdBefore ? { createdBefore: req.createdBefore } : {}),
      });
      return { entries: page.rows.map(toEntry), hasMore: page.hasMore, nextCursor: page.nextCursor };
    },
    async verifyKey(req) {
      return { principal: toPrincipal(await service.verifyKey(req.authorization, req.resource)) };
    },
    async createUser(req) {
      return { user: toUser(await service.createUser({ email: req.email, name: req.name })) };
    },
    async getUser(req) {
      return { user: toUser(await service.getUser(toLookup(req.lookup))) };
    },
    async listUsers(req) {
      const page = await service.listUsers({ pageSize: req.pageSize, pageToken: req.pageToken });
      return { users: page.users.map(toUser), nextPageToken: page.nextPageToken };
    },
    async createApiKey(req) {
      const created = await service.createApiKey({ userId: req.userId, name: req.name, expiry: req.expiry, scopes: req.scopes });
      return { apiKey: toApiKey(created.apiKey), key: created.key };
    },
    async listApiKeys(req) {
      return { apiKeys: (await service.listApiKeys(req.userId)).map(toApiKey) };
    },
    async revokeApiKey(req) {
      return { apiKey: toApiKey(await service.revokeApiKey(req.keyId, req.userId)) };
    },
    async createSignInLink(req) {
      const link = await signIn.createSignInLink(req.userId);
      return { token: link.token, expiresAt: link.expiresAt };
    },
    async startSession(req) {
      const started = await signIn.startSession(req.signInToken);
      return { sessionToken: started.sessionToken, session: toSession(started.session) };
    },
    async getSession(req) {
      return { session: toSession(await signIn.getSession(req.sessionToken)) };
    },
    async endSession(req) {
      await signIn.endSession(req.sessionToken);
      return {};
    },
    async registerOAuthClient(req) {
      const client = await oauth.registerClient({
        clientName: req.clientName,
        redirectUris: req.redirectUris,
        clientUri: req.clientUri,
        logoUri: req.logoUri,
        scope: req.scope,
        softwareId: req.softwareId,
        softwareVersion: req.softwareVersion,
      });
      return { client: toOAuthClient(client) };
    },
    async getOAuthClient(req) {
      return { client: toOAuthClient(await oauth.getClient(req.clientId)) };
    },
    async createAuthorizationCode(req) {
      const created = await oauth.createAuthorizationCode({
        userId: req.userId,
        clientId: req.clientId,
        clientName: req.clientName,
        redirectUri: req.redirectUri,
        codeChallenge: req.codeChallenge,
        scopes: req.scopes,
        resource: req.resource,
      });
      return { code: created.code, expiresAt: created.expiresAt };
    },
    async exchangeAuthorizationCode(req) {
      const tokens = await oauth.exchangeAuthorizationCode({
        clientId: req.clientId,
        code: req.code,
        codeVerifier: req.codeVerifier,
        redirectUri: req.redirectUri,
        resource: req.resource,
      });
      return { tokens: toTokens(tokens) };
    },
    async exchangeRefreshToken(req) {
      const tokens = await oauth.exchangeRefreshToken({ clientId: req.clientId, refreshToken: req.refreshToken, scopes: req.scopes, resource: req.resource });
      return { tokens: toTokens(tokens) };
    },
    async revokeOAuthToken(req) {
      await oauth.revokeToken({ clientId: req.clientId, token: req.token });
      return {};
    },
    async listOAuthConnections(req) {
      return { connections: (await oauth.listConnections(req.userId)).map(toOAuthConnection) };
    },
    async revokeOAuthConnection(req) {
      return { connection: toOAuthConnection(await oauth.revokeConnection(req.connectionId, req.userId)) };
    },
    async createListenToken(req) {
      const created = await listen.createListenToken({ userId: req.userId, keyId: req.keyId, scopes: req.scopes });
      return { token: created.token, expiresAt: created.expiresAt };
    },
    async redeemListenToken(req) {
      return { principal: toPrincipal(await listen.redeemListenToken(req.token)) };
    },
  });
}
