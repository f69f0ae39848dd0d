/**
 * The whole read path for integration tests: auth, billing and library as real gRPC servers on
 * loopback (each with its own database: a fresh schema on the real Postgres when DATABASE_URL is
 * set, embedded PGlite otherwise), and the gateway's HTTP app on a free port. No mocks.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { auth } from '@murmur/proto';
import { connectRedis, createLogger, ManualClock, openTestDatabase, RedisCache, type Database, type Redis } from '@murmur/kit';
import { AUTH_MIGRATIONS_DIR, startAuthService } from '@murmur/auth';
import { BILLING_MIGRATIONS_DIR, startBillingService } from '@murmur/billing';
import { LIBRARY_MIGRATIONS_DIR, startLibraryService } from '@murmur/library';
import { closeClients, createApp, createClients, MemoryIdempotencyStore, type Clients, type ServiceAddresses } from '@murmur/gateway';

export interface TestSystem {
  baseUrl: string;
  clients: Clients;
  /** Where the services listen (for processes under test, such as the admin CLI). */
  addresses: ServiceAddresses;
  /** The clock of the auth service (key expiry); starts at the real now. */
  authClock: ManualClock;
  /** Creates a user and a key; returns both. */
  newUser(email: string, expiry?: auth.KeyExpiry): Promise<{ user: auth.User; key: string; keyId: string }>;
  stop(): Promise<void>;
}

export async function startSystem(): Promise<TestSystem> {
  const log = createLogger('test', process.env.TEST_LOG_LEVEL ?? 'silent');
  const dbs: Database[] = await Promise.all([
    openTestDatabase('auth', AUTH_MIGRATIONS_DIR),
    openTestDatabase('billing', BILLING_MIGRATIONS_DIR),
    openTestDatabase('library', LIBRARY_MIGRATIONS_DIR),
  ]);
  const [authDb, billingDb, libraryDb] = dbs as [Database, Database, Database];
  const redis: Redis | undefined = process.env.REDIS_URL ? await connectRedis(process.env.REDIS_URL, log) : undefined;
  const authClock = new ManualClock(new Date());
  const prefix = `murmur:test:${Date.now()}:${Math.random().toString(36).slice(2)}:`;
  const authSvc = await startAuthService({
    db: authDb,
    log,
    address: '127.0.0.1:0',
    clock: authClock,
    cache: redis ? new RedisCache(redis, `${prefix}auth:`) : undefined,
  });
  const billingSvc = await startBillingService({ db: billingDb, log, address: '127.0.0.1:0' });
  const librarySvc = await startLibraryService({ db: libraryDb, log, address: '127.0.0.1:0' });
  const addresses = {
    AUTH_ADDR: `127.0.0.1:${authSvc.port}`,
    BILLING_ADDR: `127.0.0.1:${billingSvc.port}`,
    LIBRARY_ADDR: `127.0.0.1:${librarySvc.port}`,
    TRANSCRIPTION_ADDR: '127.0.0.1:1',
    CONVERSION_ADDR: '127.0.0.1:1',
  };
  const clients = createClients(addresses, 10_000);
  const app = createApp({ clients, log, idempotency: new MemoryIdempotencyStore() });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    baseUrl,
    clients,
    addresses,
    authClock,
    async newUser(email, expiry = auth.KeyExpiry.KEY_EXPIRY_90_DAYS) {
      const { user } = await clients.auth.createUser({ email, name: email.split('@')[0] ?? '' });
      const res = await clients.auth.createApiKey({ userId: user!.id, name: 'test', expiry });
      return { user: user!, key: res.key, keyId: res.apiKey!.id };
    },
    async stop() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      closeClients(clients);
      await Promise.all([authSvc.stop(), billingSvc.stop(), librarySvc.stop()]);
      await redis?.close();
      await Promise.all(dbs.map((d) => d.close()));
    },
  };
}

/** GET with a bearer key; returns status, headers and parsed JSON. */
export async function get(baseUrl: string, path: string, key?: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${baseUrl}${path}`, { headers: { ...(key !== undefined ? { authorization: `Bearer ${key}` } : {}), ...headers } });
  const text = await res.text();
  let body: any = null;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, headers: res.headers, body };
}
