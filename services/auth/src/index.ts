/**
 * @murmur/auth — users, API keys, the app's sign-in stand-in (sign-in links, sessions), the
 * storage and rules of OAuth 2.1 for MCP clients (clients, codes, tokens, connections), and the
 * listen tokens browsers open live-transcription streams with.
 * `startAuthService` runs the gRPC service in-process (its own main.ts, this package's tests and
 * the gateway's integration tests all use it); the key helpers are exported for callers that
 * must recognise or fingerprint a key without a call.
 */
import * as path from 'node:path';
import { commonSchema, type WorkloadIdentity, CursorCodec, MemoryCache, startGrpcServer, systemClock, type Clock, type Database, type KeyValueCache, type Logger } from '@murmur/kit';
import { bindEnvoyAuthorization } from './ext-authz';
import { ListenTokenService } from './listen-tokens';
import { RequestLog } from './request-log';
import { OAuthGrants } from './oauth';
import { PostgresOAuthStore } from './oauth-store';
import { bindAuthService } from './server';
import { AuthService } from './service';
import { SignInService } from './sign-in';
import { PostgresAuthStore } from './store';
import { VerificationCache } from './verification-cache';

export { API_KEY_PATTERN, parseAuthorization, type AuthorizationFailure, type ParsedAuthorization } from '@murmur/contract';
export { generateApiKey, hashKey, keyHint } from './api-key';
/** Where a verified key's entry sits in the verification cache, for tests that prove it is warm. */
export { entryKey as verificationCacheKey } from './verification-cache';

export interface AuthServiceDeps {
  /** The auth schema, migrated (openDatabase / openTestDatabase with this package's migrations). */
  db: Database;
  log: Logger;
  /** "host:port" to listen on; port 0 picks a free one. */
  address: string;
  clock?: Clock;
  /**
   * Verification cache: a RedisCache when REDIS_URL is set (exact across replicas); default an
   * in-process MemoryCache on `clock`, exact only while one auth replica runs.
   */
  cache?: KeyValueCache;
  /** HMAC key of ListUsers page tokens (MURMUR_CURSOR_SECRET); default the kit's dev secret. */
  cursorSecret?: string;
  /** Pushes revocations to the gateways' key caches (publishRevocation when REDIS_URL is set). */
  announceRevocation?: (keyId: string) => Promise<void>;
  /** Auth's workload identity: checks its callers, and signs the assertions of Envoy's ext_authz. */
  identity: WorkloadIdentity;
}

export interface RunningAuthService {
  port: number;
  /** Stops taking calls, lets running ones finish, then waits for background writes. Leaves `db` open. */
  stop(): Promise<void>;
  /** Resolves once background last_used_at writes (keys' and connections') have finished (tests read the row after it). */
  idle(): Promise<void>;
}

/** services/auth/migrations (same from src/ under jest and dist/ under node), for openTestDatabase in other packages' tests. */
export const AUTH_MIGRATIONS_DIR = path.resolve(__dirname, '../migrations');

/**
 * Wires stores, cache and services and starts the gRPC server (with health and reflection):
 * murmur.auth.v1.AuthService and envoy.service.auth.v3.Authorization (ext-authz.ts).
 */
export async function startAuthService(deps: AuthServiceDeps): Promise<RunningAuthService> {
  const clock = deps.clock ?? systemClock;
  const cache = deps.cache ?? new MemoryCache(10_000, () => clock.now().getTime());
  const store = new PostgresAuthStore(deps.db);
  const cursorSecret = deps.cursorSecret ?? commonSchema.MURMUR_CURSOR_SECRET.parse(undefined);
  const oauth = new OAuthGrants({
    store: new PostgresOAuthStore(deps.db),
    users: store,
    clock,
    log: deps.log,
    announceRevocation: deps.announceRevocation,
  });
  const service = new AuthService({
    store,
    cache: new VerificationCache(cache, deps.log),
    clock,
    cursors: new CursorCodec(cursorSecret),
    log: deps.log,
    accessTokens: oauth,
    announceRevocation: deps.announceRevocation,
  });
  const signIn = new SignInService({ store, clock, log: deps.log });
  const listen = new ListenTokenService({ store, clock, log: deps.log });
  const requests = new RequestLog(deps.db, deps.log, clock, cursorSecret);
  // Today's and the coming days' partitions exist before the first batch arrives.
  await requests.start();
  const server = await startGrpcServer(
    {
      name: 'auth',
      log: deps.log,
      // Envoy's ext_authz API on the same port: Envoy's internal gRPC listener asks it about every call.
      services: [bindAuthService(service, signIn, oauth, listen, requests), bindEnvoyAuthorization(service, deps.identity.minter)],
      protoFiles: ['murmur/auth/v1/auth.proto'],
      // Auth verifies the keys of its direct callers itself, with the same cache as VerifyKey.
      // No resource: an OAuth access token is for the MCP server only, never for auth's RPCs.
      access: deps.identity.accessControl(async (authorization) => {
        const p = await service.verifyKey(authorization, '');
        return { userId: p.userId, keyId: p.keyId, scopes: p.scopes };
      }),
    },
    deps.address,
  );
  return {
    port: server.port,
    async stop() {
      await server.shutdown();
      await requests.stop();
      await Promise.all([service.idle(), oauth.idle()]);
    },
    idle: async () => {
      await Promise.all([service.idle(), oauth.idle()]);
    },
  };
}
