/**
 * The whole system for integration tests: auth, billing and library (and, with `ai`, transcription
 * and conversion) as real gRPC servers on loopback (each with its own database: a fresh schema on the real Postgres when DATABASE_URL is
 * set, embedded PGlite otherwise), Redis (REDIS_URL, else a redis-server of the system's own, so
 * the gateways' verified-key caches and the revocation channel run as in CI), and the gateway's
 * HTTP app on a free port. No mocks.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Server } from 'node:http';
import { auth } from '@murmur/proto';
import type { OAuthResourceOptions } from '../../src/oauth/protected-resource';
import {
  closeServiceClients,
  connectRedis,
  createLogger,
  createServiceClients,
  type Database,
  type KeyValueCache,
  type Logger,
  publishRevocation,
  type Redis,
  RedisCache,
  RevocationListener,
  type ServiceAddresses,
  type ServiceClients,
} from '@murmur/kit';
import {
  ManualClock,
  openTestDatabase,
  prerequisitesRequired,
  realRedis,
  realRedisUnavailable,
  testAccess,
  testIdentity,
  testMinter,
  type RealServer,
} from '@murmur/kit/testing';
import { AUTH_MIGRATIONS_DIR, startAuthService } from '@murmur/auth';
import { BILLING_MIGRATIONS_DIR, RedisRateLimiter, startBillingService } from '@murmur/billing';
import { LIBRARY_MIGRATIONS_DIR, startLibraryService } from '@murmur/library';
import { LocalEngine, startConversionService } from '@murmur/conversion';
import {
  createPocketsphinxEngine,
  FileAudioStore,
  startTranscriptionService,
  TRANSCRIPTION_MIGRATIONS_DIR,
  type DiarizationPort,
  type JobsDeps,
  type LibraryPort,
  type SpeechEngine,
} from '@murmur/transcription';
import { auth as authProto, billing as billingProto, library as libraryProto } from '@murmur/proto';
import { type Workload } from '@murmur/contract';
import { createClient, keyVerifierVia } from '@murmur/kit';
import { newSecretKeyEntry, RedisLeaseSet, SecretSealer } from '@murmur/transcription';
import {
  createApp,
  createHttpServer,
  MemoryIdempotencyStore,
  RedisIdempotencyStore,
  RequestLogQueue,
  VerifiedKeyCache,
  type IdempotencyStore,
  type AudioUrlPolicy,
} from '@murmur/gateway';
import { attachListen, type ListenEndpoint } from '../../src/live/listen-socket';
import { assertResponsesDocumented, recordResponses } from './openapi-check';

/**
 * The Idempotency-Keys a gateway's requests have claimed, so that a test waits for a claim (an
 * event) instead of sleeping and hoping the request got that far.
 */
export class ClaimWatch {
  private readonly seen = new Set<string>();
  private readonly waiting = new Map<string, Array<() => void>>();

  /** `store`, telling this watch of every successful claim. */
  wrap(store: IdempotencyStore): IdempotencyStore {
    return {
      claim: async (owner, key, fingerprint) => {
        const result = await store.claim(owner, key, fingerprint);
        if (result.claimed) this.mark(key);
        return result;
      },
      complete: (owner, key, fingerprint, response) => store.complete(owner, key, fingerprint, response),
      release: (owner, key) => store.release(owner, key),
    };
  }

  /** Resolves once a request through this gateway has claimed `key` (at once if one has). */
  claimed(key: string): Promise<void> {
    if (this.seen.has(key)) return Promise.resolve();
    return new Promise((resolve) => this.waiting.set(key, [...(this.waiting.get(key) ?? []), resolve]));
  }

  private mark(key: string): void {
    this.seen.add(key);
    for (const resolve of this.waiting.get(key) ?? []) resolve();
    this.waiting.delete(key);
  }
}

export interface TestGateway {
  baseUrl: string;
  /** The Idempotency-Keys its requests have claimed. */
  claims: ClaimWatch;
  /** Its protected-resource settings: the public URL is its own; a test sets the authorization server (the app's URL). */
  oauth: OAuthResourceOptions;
  /** GET /api/v1/listen on its server (drain it as a draining gateway does). */
  listen: ListenEndpoint;
  /** Its request log's queue: `flush()` sends what its calls left so far. */
  requestLog: RequestLogQueue;
  stop(): Promise<void>;
}

/**
 * One gateway replica over `clients`: with Redis, its own verified-key cache fed by the
 * revocation channel and Redis idempotency records, exactly as main.ts wires it.
 */
export async function startGateway(
  clients: ServiceClients,
  log: Logger,
  clock: ManualClock,
  redis?: Redis,
  prefix = '',
  body: { bodyIdleTimeoutMs?: number; spoolDir?: string; audioUrlPolicy?: AudioUrlPolicy; headersTimeoutMs?: number; listenIdleMs?: number } = {},
): Promise<TestGateway> {
  let listener: RevocationListener | undefined;
  let keyCache: VerifiedKeyCache | undefined;
  if (redis) {
    const cache = new VerifiedKeyCache(clock, () => listener?.live === true);
    listener = new RevocationListener(redis, { onRevoked: (id) => cache.revoke(id), onReset: () => cache.clear() });
    await listener.start();
    keyCache = cache;
  }
  const claims = new ClaimWatch();
  const idempotency = claims.wrap(redis ? new RedisIdempotencyStore(redis, `${prefix}idem:`) : new MemoryIdempotencyStore());
  const oauth: OAuthResourceOptions = {};
  const { headersTimeoutMs, listenIdleMs, ...bodyOptions } = body;
  // As main.ts: every authenticated call's entry goes to auth, sent often so tests wait little.
  const requestLog = new RequestLogQueue((entries) => clients.auth.recordRequests({ entries }), log, { flushMs: 50 }).start();
  const app = createApp({ clients, log, idempotency, keyCache, ...bodyOptions, oauth, requestLog });
  let listen!: ListenEndpoint;
  const server: Server = await new Promise((resolve) => {
    // Every response is checked against the OpenAPI document (see openapi-check.ts).
    const s = createHttpServer(recordResponses(app), undefined, { headersTimeoutMs });
    // As main.ts: live streams are upgrades of the same server.
    listen = attachListen(s, { clients, log, keyCache, oauth, app, ...(listenIdleMs ? { idleMs: listenIdleMs } : {}) });
    s.listen(0, '127.0.0.1', () => resolve(s));
  });
  oauth.publicUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl: oauth.publicUrl,
    oauth,
    claims,
    listen,
    requestLog,
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await requestLog.stop();
      await listener?.stop();
    },
  };
}

export interface TestSystem {
  baseUrl: string;
  /** The gateway's protected-resource settings (set `authorizationServer` to an app's URL for OAuth). */
  oauth: OAuthResourceOptions;
  /** GET /api/v1/listen of the first gateway. */
  listen: ListenEndpoint;
  /** The first gateway's request-log queue (`flush()` before reading GET /requests). */
  requestLog: RequestLogQueue;
  /** The gateway's clients (workload gateway: their calls for a user need a principal in context). */
  clients: ServiceClients;
  /** The app's admin clients: users, keys, credits, seeding and reading anyone's data, as the admin CLI does. */
  admin: ServiceClients;
  /** Where the services listen (for processes under test, such as the admin CLI). */
  addresses: ServiceAddresses;
  /** The Idempotency-Keys the gateway's requests have claimed (wait for one instead of sleeping). */
  claims: ClaimWatch;
  /** The clock of the auth service (key expiry); starts at the real now. */
  authClock: ManualClock;
  /** The store of auth's verification cache (Redis), when Redis runs: a test can see what auth has cached. */
  authCache?: KeyValueCache;
  /** The folder of queued jobs' audio (empty when no job is live). */
  audioDir: string;
  /** The transcription service's own schema (with `ai`), for tests that look at what it stores. */
  transcriptionDb?: Database;
  /**
   * Another gateway replica over the same services (its own key cache and listener); with
   * `billingReplica`, over a billing replica of its own too (the same database, and with
   * `rateLimitsOnRedis` the same Redis rate limiter) and, with `ai`, a conversion replica that
   * charges through that billing replica: what replicas share then really crosses instances, as
   * between the pods of a deployment.
   */
  extraGateway(opts?: { billingReplica?: boolean }): Promise<TestGateway>;
  /** Creates a user and a key; returns both. */
  newUser(email: string, expiry?: auth.KeyExpiry): Promise<{ user: auth.User; key: string; keyId: string }>;
  stop(): Promise<void>;
}

export interface SystemOptions {
  /** Also run transcription (pocketsphinx) and conversion (local engine), for the AI routes. */
  ai?: boolean;
  /** Billing's clock (rate-limit windows, periods); the real one when omitted. */
  billingClock?: ManualClock;
  /** The gateway's body idle timeout (MURMUR_BODY_IDLE_TIMEOUT_MS), short in tests of stalled bodies. */
  bodyIdleTimeoutMs?: number;
  /** How long the gateway's server waits for a header section (http/server.ts), short in tests of stalled headers. */
  headersTimeoutMs?: number;
  /** A live stream's idle limit (listen-socket.ts), short in its test. */
  listenIdleMs?: number;
  /** Temp dir of the transcription service and the gateway's spool, so a test can see what is left. */
  tmpDir?: string;
  /** A Postgres of the test's own (fault tests); default DATABASE_URL, else embedded. */
  databaseUrl?: string;
  /**
   * A Redis of the test's own (fault tests); default REDIS_URL, else none. Given here, billing's
   * rate limiter also runs on it, as main.ts wires it.
   */
  redisUrl?: string;
  /**
   * Billing's rate limiter on the system's Redis (REDIS_URL, else a redis-server of its own), as
   * main.ts wires it whenever Redis is configured; default in-process unless `redisUrl` is given.
   * Without any Redis here it fails to start (a test asks for it only where Redis can be had).
   */
  rateLimitsOnRedis?: boolean;
  /** Where every component logs (fault tests read it); default silent unless TEST_LOG_LEVEL. */
  log?: Logger;
  /** Overrides of the transcription jobs' settings (with `ai`). */
  jobs?: Partial<Omit<JobsDeps, 'db' | 'library'>>;
  /**
   * Puts something in front of the real library client the jobs' worker uses (with `ai`): a test
   * holds a call there to land another request at an exact point of a job's end.
   */
  jobLibrary?: (library: LibraryPort) => LibraryPort;
  /** Puts something in front of the transcription engine (with `ai`): a test holds a recognition there (engine-gate.ts). */
  engine?: (engine: SpeechEngine) => SpeechEngine;
  /** Where an `audio_url` may point (the gateway's MURMUR_AUDIO_URL_*); default the production policy. */
  audioUrlPolicy?: AudioUrlPolicy;
  /** Who finds speakers (with `ai`); without it `diarize` is refused naming the missing models. */
  diarization?: DiarizationPort;
}

export async function startSystem(opts: SystemOptions = {}): Promise<TestSystem> {
  const log = opts.log ?? createLogger('test', process.env.TEST_LOG_LEVEL ?? 'silent');
  const dbs: Database[] = await Promise.all([
    openTestDatabase('auth', AUTH_MIGRATIONS_DIR, opts.databaseUrl),
    openTestDatabase('billing', BILLING_MIGRATIONS_DIR, opts.databaseUrl),
    openTestDatabase('library', LIBRARY_MIGRATIONS_DIR, opts.databaseUrl),
    ...(opts.ai ? [openTestDatabase('transcription', TRANSCRIPTION_MIGRATIONS_DIR, opts.databaseUrl, ['_queue'])] : []),
  ]);
  const [authDb, billingDb, libraryDb, transcriptionDb] = dbs as [Database, Database, Database, Database | undefined];
  // Redis as in CI: the given URL, REDIS_URL, else a redis-server of our own, so the verified-key
  // cache and the revocation channel exist on a developer machine too; in-process only where
  // none can run, and never in CI (realRedis() then fails, naming what to install).
  const redisServer: RealServer | undefined = opts.redisUrl
    ? { url: opts.redisUrl, release: async () => undefined }
    : realRedisUnavailable() && !prerequisitesRequired() && !opts.rateLimitsOnRedis ? undefined : await realRedis();
  const redis: Redis | undefined = redisServer ? await connectRedis(redisServer.url, log) : undefined;
  const authClock = new ManualClock(new Date());
  const prefix = `murmur:test:${Date.now()}:${Math.random().toString(36).slice(2)}:`;
  const authCache = redis ? new RedisCache(redis, `${prefix}auth:`) : undefined;
  const authSvc = await startAuthService({
    identity: testIdentity('auth'),
    db: authDb,
    log,
    address: '127.0.0.1:0',
    clock: authClock,
    cache: authCache,
    announceRevocation: redis ? async (keyId) => void (await publishRevocation(redis, keyId)) : undefined,
  });
  // Every service checks its callers as in production: workload tokens, principal assertions,
  // and developer keys verified through auth's VerifyKey by the service's own auth client.
  const authAddr = `127.0.0.1:${authSvc.port}`;
  const internal: { close(): void }[] = [];
  const accessOf = (w: Workload) => {
    const client = createClient(authProto.AuthServiceClient, authAddr, { identity: testMinter(w) });
    internal.push(client);
    return testAccess(w, keyVerifierVia(client));
  };
  const startBilling = () =>
    startBillingService({
      access: accessOf('billing'),
      db: billingDb,
      log,
      address: '127.0.0.1:0',
      clock: opts.billingClock,
      rateLimiter: (opts.redisUrl || opts.rateLimitsOnRedis) && redis ? new RedisRateLimiter(redis, { keyPrefix: `${prefix}ratelimit:` }) : undefined,
    });
  const billingSvc = await startBilling();
  const billingReplicas: Array<Awaited<ReturnType<typeof startBilling>>> = [];
  const librarySvc = await startLibraryService({ access: accessOf('library'), db: libraryDb, log, address: '127.0.0.1:0' });
  // The AI services call billing and library as their own workloads: real clients, real servers.
  const clientsOf = (w: Workload, billingPort = billingSvc.port) => {
    const c = {
      billing: createClient(billingProto.BillingServiceClient, `127.0.0.1:${billingPort}`, { identity: testMinter(w) }),
      library: createClient(libraryProto.LibraryServiceClient, `127.0.0.1:${librarySvc.port}`, { identity: testMinter(w), maxReceiveMessageBytes: 64 * 1024 * 1024 }),
    };
    internal.push(c.billing, c.library);
    return c;
  };
  // Where queued jobs' audio waits (MURMUR_AUDIO_DIR); a test can see what is left in it.
  const audioDir = await mkdtemp(path.join(os.tmpdir(), 'murmur-test-audio-'));
  const conversionClients = clientsOf('conversion');
  const transcriptionClients = clientsOf('transcription');
  const startConversion = (c: typeof conversionClients) =>
    startConversionService({ access: accessOf('conversion'), log, address: '127.0.0.1:0', billing: c.billing, library: c.library, engine: new LocalEngine() });
  const conversionSvc = opts.ai ? await startConversion(conversionClients) : undefined;
  const conversionReplicas: Array<Awaited<ReturnType<typeof startConversion>>> = [];
  const transcriptionSvc = opts.ai
    ? await startTranscriptionService({
        access: accessOf('transcription'),
        log,
        address: '127.0.0.1:0',
        billing: transcriptionClients.billing,
        engine: opts.engine ? opts.engine(createPocketsphinxEngine()) : createPocketsphinxEngine(),
        tmpDir: opts.tmpDir,
        ...(opts.diarization ? { diarization: opts.diarization } : {}),
        jobs: {
          db: transcriptionDb!,
          audio: await FileAudioStore.open(audioDir),
          library: opts.jobLibrary ? opts.jobLibrary(transcriptionClients.library) : transcriptionClients.library,
          cursorSecret: 'murmur-test-cursor-secret',
          queue: { superviseSeconds: 1, heartbeatSeconds: 10, retryDelaySeconds: 0 },
          webhookSecrets: SecretSealer.fromText(newSecretKeyEntry('test')),
          // The per-user caps count in Redis whenever the system has one, as main.ts wires them.
          ...(redis ? { leases: new RedisLeaseSet(redis, `${prefix}leases:`) } : {}),
          ...opts.jobs,
        },
      })
    : undefined;
  const addresses = {
    AUTH_ADDR: `127.0.0.1:${authSvc.port}`,
    BILLING_ADDR: `127.0.0.1:${billingSvc.port}`,
    LIBRARY_ADDR: `127.0.0.1:${librarySvc.port}`,
    TRANSCRIPTION_ADDR: transcriptionSvc ? `127.0.0.1:${transcriptionSvc.port}` : '127.0.0.1:1',
    CONVERSION_ADDR: conversionSvc ? `127.0.0.1:${conversionSvc.port}` : '127.0.0.1:1',
  };
  const clients = createServiceClients(addresses, { deadlineMs: 10_000, identity: testMinter('gateway') });
  const admin = createServiceClients(addresses, { deadlineMs: 10_000, identity: testMinter('app') });
  const gateway = await startGateway(clients, log, authClock, redis, prefix, {
    bodyIdleTimeoutMs: opts.bodyIdleTimeoutMs,
    spoolDir: opts.tmpDir,
    audioUrlPolicy: opts.audioUrlPolicy,
    headersTimeoutMs: opts.headersTimeoutMs,
    ...(opts.listenIdleMs ? { listenIdleMs: opts.listenIdleMs } : {}),
  });
  const baseUrl = gateway.baseUrl;
  const extraGateways: TestGateway[] = [];
  const replicaClients: ServiceClients[] = [];

  return {
    baseUrl,
    oauth: gateway.oauth,
    claims: gateway.claims,
    listen: gateway.listen,
    requestLog: gateway.requestLog,
    clients,
    admin,
    audioDir,
    transcriptionDb,
    addresses,
    authClock,
    authCache,
    async newUser(email, expiry = auth.KeyExpiry.KEY_EXPIRY_90_DAYS) {
      const { user } = await admin.auth.createUser({ email, name: email.split('@')[0] ?? '' });
      const res = await admin.auth.createApiKey({ userId: user!.id, name: 'test', expiry, scopes: [] });
      return { user: user!, key: res.key, keyId: res.apiKey!.id };
    },
    async extraGateway(extra = {}) {
      let over = clients;
      if (extra.billingReplica) {
        const billingReplica = await startBilling();
        billingReplicas.push(billingReplica);
        const conversionReplica = opts.ai ? await startConversion(clientsOf('conversion', billingReplica.port)) : undefined;
        if (conversionReplica) conversionReplicas.push(conversionReplica);
        over = createServiceClients(
          {
            ...addresses,
            BILLING_ADDR: `127.0.0.1:${billingReplica.port}`,
            ...(conversionReplica ? { CONVERSION_ADDR: `127.0.0.1:${conversionReplica.port}` } : {}),
          },
          { deadlineMs: 10_000, identity: testMinter('gateway') },
        );
        replicaClients.push(over);
      }
      const g = await startGateway(over, log, authClock, redis, prefix);
      extraGateways.push(g);
      return g;
    },
    async stop() {
      await Promise.all([gateway, ...extraGateways].map((g) => g.stop()));
      for (const c of replicaClients) closeServiceClients(c);
      closeServiceClients(clients);
      closeServiceClients(admin);
      await Promise.all([conversionSvc?.stop(), ...conversionReplicas.map((c) => c.stop()), transcriptionSvc?.stop()]);
      for (const c of internal) c.close();
      await Promise.all([authSvc.stop(), billingSvc.stop(), ...billingReplicas.map((b) => b.stop()), librarySvc.stop()]);
      await redis?.close();
      await redisServer?.release();
      await Promise.all(dbs.map((d) => d.close()));
      await rm(audioDir, { recursive: true, force: true });
      assertResponsesDocumented();
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
