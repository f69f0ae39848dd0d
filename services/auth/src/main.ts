/**
 * The auth service process: murmur.auth.v1.AuthService over gRPC (users, API keys, VerifyKey on
 * the hot path of every public call, the app's sign-in links and sessions, and OAuth clients,
 * codes, tokens and connections for MCP clients, and listen tokens for browsers' live streams),
 * with gRPC health and reflection. Listens on
 * GRPC_LISTEN_ADDR or AUTH_ADDR; stores users and the hashes of keys, codes and tokens in the
 * "auth" Postgres schema (embedded PGlite under MURMUR_DATA_DIR/auth when DATABASE_URL is
 * unset); caches verified keys in Redis when REDIS_URL is set, in-process otherwise (then run
 * exactly one replica).
 */
import './tracing';
import { publishRevocation, RedisCache, runServiceProcess } from '@murmur/kit';
import { AUTH_MIGRATIONS_DIR, startAuthService } from './index';

runServiceProcess({
  name: 'auth',
  migrationsDir: AUTH_MIGRATIONS_DIR,
  address: (cfg) => cfg.AUTH_ADDR,
  start: ({ db, log, cfg, redis, identity }, address) => {
    if (!redis) log.info('REDIS_URL unset: verification cache is in-process (exact only with one auth replica)');
    const announceRevocation = redis
      ? async (keyId: string) => {
          const { notified, acked } = await publishRevocation(redis, keyId);
          if (acked < notified) log.warn({ key_id: keyId, notified, acked }, 'not every gateway acknowledged a revocation in time');
        }
      : undefined;
    return startAuthService({
      identity,
      db,
      log,
      address,
      cache: redis ? new RedisCache(redis, 'murmur:auth:') : undefined,
      cursorSecret: cfg.MURMUR_CURSOR_SECRET,
      announceRevocation,
    });
  },
});
