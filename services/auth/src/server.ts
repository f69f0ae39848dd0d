/**
 * gRPC handlers of murmur.auth.v1.AuthService: request → service call → response, nothing else.
 * Errors are MurmurErrors from the service; the kit's server factory turns them into statuses.
 */
import { bindService, type BoundService } from '@murmur/kit';
import { auth } from '@murmur/proto';
import type { AuthService, Principal, UserLookup } from './service';
import type { ApiKeyRecord, User } from './store';

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

/** The AuthService definition bound to `service`, ready for startGrpcServer. */
export function bindAuthService(service: AuthService): BoundService {
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
  });
}
