/**
 * gRPC handlers of murmur.auth.v1.AuthService: request → service call → response, nothing else.
 * Errors are MurmurErrors from the service; the kit's server factory turns them into statuses.
 */
import { bindService, type BoundService } from '@murmur/kit';
import { auth } from '@murmur/proto';
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
  };
}

/** Deliberately field by field: the token hash never leaves the service. */
function toSession(s: SessionRecord): auth.Session {
  return { id: s.id, userId: s.userId, createdAt: s.createdAt, expiresAt: s.expiresAt };
}

function toPrincipal(p: Principal): auth.Principal {
  return { userId: p.userId, keyId: p.keyId, keyExpiresAt: p.expiresAt ?? undefined };
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

/** The AuthService definition bound to `service` (users, keys) and `signIn` (links, sessions), ready for startGrpcServer. */
export function bindAuthService(service: AuthService, signIn: SignInService): BoundService {
  return bindService(auth.AuthServiceService, {
    async verifyKey(req) {
      return { principal: toPrincipal(await service.verifyKey(req.authorization)) };
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
      const created = await service.createApiKey({ userId: req.userId, name: req.name, expiry: req.expiry });
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
  });
}
