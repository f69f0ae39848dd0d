/**
 * The real Murmur topology for a benchmark: a clean bench database, the chosen services and the
 * gateway as separate Node processes under the launcher's Supervisor (exactly as `npm start`
 * runs them), each on a free port, plus optional plain children (the read-path baseline); and
 * the gRPC clients the admin CLI uses, to seed users, keys, recordings and credits through the
 * real RPCs. Shared by read-path, mcp, convert and transcribe.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from 'pg';
import { type Workload } from '@murmur/contract';
import { closeServiceClients, createServiceClients, identityStoreAt, type ServiceAddresses, type ServiceClients, waitForGrpcServing, waitForHttpOk } from '@murmur/kit';
import { testIdentityStore, testMinter } from '@murmur/kit/testing';
import { admin } from '@murmur/app';
import { childIdentity, type ChildSpec } from '@murmur/launcher';
import { freePorts, redactUrl } from './benchmark';
import { ProcessSet } from './processes';

export const ROOT = path.resolve(__dirname, '..', '..');
export const BENCH_DATABASE = 'murmur_bench';
const DEFAULT_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
/** The library signs cursors with it; the read-path baseline signs the same way. */
export const CURSOR_SECRET = 'murmur-bench-cursor-secret';
/** Schemas the services own in the bench database (conversion has none; transcription's jobs and their pg-boss queue). */
const SCHEMAS = ['auth', 'billing', 'library', 'transcription', 'transcription_queue'];

/** The five gRPC services; the gateway is always started after the ones a benchmark names. */
export type ServiceName = 'auth' | 'billing' | 'library' | 'transcription' | 'conversion';

/** An error's message, AggregateErrors (connection refused on every address) included. */
export const describe = (err: unknown): string => {
  if (err instanceof AggregateError) return err.errors.map(describe).join('; ');
  if (err instanceof Error) return err.message || ((err as NodeJS.ErrnoException).code ?? err.name);
  return String(err);
};

export interface PreparedDatabase {
  url: string;
  serverVersion: string;
}

/**
 * Creates `murmur_bench` when absent and empties it of every Murmur schema, so each run seeds
 * into the same clean state; the services then apply their own migrations.
 */
export async function prepareDatabase(adminUrl: string): Promise<PreparedDatabase> {
  const connect = async (url: string) => {
    const client = new Client({ connectionString: url, connectionTimeoutMillis: 5_000, application_name: 'murmur-bench' });
    try {
      await client.connect();
    } catch (err) {
      await client.end().catch(() => undefined);
      throw new Error(
        `Postgres is unreachable at ${redactUrl(url)}: ${describe(err)}. Start Postgres, or set BENCH_DATABASE_URL ` +
          `to a server where this user may create databases (the benchmark uses a database named ${BENCH_DATABASE}).`,
      );
    }
    return client;
  };

  let benchUrl: string;
  try {
    const u = new URL(adminUrl);
    u.pathname = `/${BENCH_DATABASE}`;
    benchUrl = u.toString();
  } catch {
    throw new Error(`BENCH_DATABASE_URL / DATABASE_URL is not a valid URL: ${redactUrl(adminUrl)}`);
  }

  const adminClient = await connect(adminUrl);
  try {
    const { rowCount } = await adminClient.query('SELECT 1 FROM pg_database WHERE datname = $1', [BENCH_DATABASE]);
    if (rowCount === 0) {
      await adminClient.query(`CREATE DATABASE ${BENCH_DATABASE}`).catch((err: unknown) => {
        // Created meanwhile by a concurrent run: fine.
        if ((err as { code?: string }).code !== '42P04') throw new Error(`could not create database ${BENCH_DATABASE}: ${describe(err)}`);
      });
    }
  } finally {
    await adminClient.end();
  }

  const bench = await connect(benchUrl);
  try {
    await bench.query(`SET lock_timeout = '10s'`);
    await bench.query(`DROP SCHEMA IF EXISTS ${SCHEMAS.join(', ')} CASCADE`);
    const { rows } = await bench.query<{ server_version: string }>('SHOW server_version');
    return { url: benchUrl, serverVersion: rows[0]?.server_version ?? 'unknown' };
  } finally {
    await bench.end();
  }
}

/**
 * ANALYZE of every service schema. A production database has statistics (autovacuum analyzes
 * within a minute of a bulk load); without them the list query sorts every row of the owner
 * instead of walking the (owner_id, created_at, id) index, and a result would depend on when
 * autovacuum wakes up.
 */
export async function analyze(url: string): Promise<void> {
  const client = new Client({ connectionString: url, application_name: 'murmur-bench' });
  await client.connect();
  try {
    for (const schema of SCHEMAS) {
      const { rows } = await client.query<{ name: string }>(`SELECT quote_ident(schemaname) || '.' || quote_ident(tablename) AS name FROM pg_tables WHERE schemaname = $1`, [schema]);
      for (const { name } of rows) await client.query(`ANALYZE ${name}`);
    }
  } finally {
    await client.end();
  }
}

/** A plain child started beside the topology (never restarted), on its own free port (PORT). */
export interface ExtraProcess {
  name: string;
  /** Script relative to the repository root, e.g. bench/dist/baseline-server.js. */
  script: string;
  env?: NodeJS.ProcessEnv;
}

export interface StackOptions {
  /** Services to start (the gateway always starts, once they all serve). */
  services: readonly ServiceName[];
  /** Extra environment of every process (engine choice, concurrency, …). */
  env?: NodeJS.ProcessEnv;
  extras?: readonly ExtraProcess[];
  /** LOG_LEVEL of every process (default warn). */
  logLevel?: string;
  /** Postgres to create the bench database on (default BENCH_DATABASE_URL, DATABASE_URL, then the local server). */
  adminUrl?: string;
  /** Extra transcription processes (`transcription-2`, …) on the same database: more workers of the job queue. */
  transcriptionReplicas?: number;
  /**
   * More gateway processes over the same services, each with its own environment on top of the
   * shared one (a gateway with the request log off, to measure the log): served like the
   * gateway, named in `extras`.
   */
  gateways?: ReadonlyArray<{ name: string; env: NodeJS.ProcessEnv }>;
}

/** The running topology; stop it with {@link Stack.stop} (also on failure). */
export interface Stack {
  db: PreparedDatabase;
  /** Every service has an address, started or not, so the gateway's lazy clients never reach another `npm start`. */
  addrs: ServiceAddresses;
  /** http://127.0.0.1:<port> of the gateway. */
  gateway: string;
  /** http://127.0.0.1:<port> of each extra process, by name. */
  extras: Record<string, string>;
  procs: ProcessSet;
  /** REDIS_URL was set: auth's verification cache, billing's rate-limit windows, the gateway's verified-key cache and idempotency records use Redis. */
  redis: boolean;
  /** gRPC clients of every service as the app's admin (the admin commands' view); closed by stop(). */
  clients: ServiceClients;
  /** The same as the gateway's workload: calls for a user need that user as the principal in context (kit runWithContext). */
  gatewayClients: ServiceClients;
  services: readonly ServiceName[];
  stop(): Promise<void>;
}

/**
 * Cleans the bench database, starts the services (and extras) under the Supervisor, waits for
 * gRPC health, then starts the gateway and waits for /healthz.
 */
export async function startStack(log: (line: string) => void, opts: StackOptions): Promise<Stack> {
  const adminUrl = opts.adminUrl || process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL || DEFAULT_ADMIN_URL;
  const scripts = [...opts.services.map((s) => `services/${s}/dist/main.js`), 'gateway/dist/main.js', ...(opts.extras ?? []).map((e) => e.script)];
  for (const script of scripts) {
    if (!fs.existsSync(path.join(ROOT, script))) throw new Error(`${script} is missing: build first (npm run build).`);
  }

  log(`database: ${redactUrl(adminUrl)} → ${BENCH_DATABASE} (schemas ${SCHEMAS.join(', ')} dropped first)`);
  const db = await prepareDatabase(adminUrl);

  const extras = opts.extras ?? [];
  const replicas = opts.transcriptionReplicas ?? 0;
  const gateways = opts.gateways ?? [];
  const ports = await freePorts(6 + extras.length + replicas + gateways.length);
  const [authPort, billingPort, libraryPort, transcriptionPort, conversionPort, gatewayPort] = ports as [number, number, number, number, number, number];
  const addrs: ServiceAddresses = {
    AUTH_ADDR: `127.0.0.1:${authPort}`,
    BILLING_ADDR: `127.0.0.1:${billingPort}`,
    LIBRARY_ADDR: `127.0.0.1:${libraryPort}`,
    TRANSCRIPTION_ADDR: `127.0.0.1:${transcriptionPort}`,
    CONVERSION_ADDR: `127.0.0.1:${conversionPort}`,
  };
  const addrOf: Record<ServiceName, string> = {
    auth: addrs.AUTH_ADDR,
    billing: addrs.BILLING_ADDR,
    library: addrs.LIBRARY_ADDR,
    transcription: addrs.TRANSCRIPTION_ADDR,
    conversion: addrs.CONVERSION_ADDR,
  };
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...addrs,
    DATABASE_URL: db.url,
    PORT: String(gatewayPort),
    HOST: '127.0.0.1',
    LOG_LEVEL: opts.logLevel ?? 'warn',
    // The key sealing webhook signing secrets (one per bench run).
    MURMUR_WEBHOOK_SECRET_KEY: `bench:${randomBytes(32).toString('base64')}`,
    MURMUR_CURSOR_SECRET: CURSOR_SECRET,
    // Each service listens on its own *_ADDR, whatever the caller's shell says.
    GRPC_LISTEN_ADDR: '',
    ...opts.env,
  };
  const redis = Boolean(env.REDIS_URL);
  // Each process is handed its own workload key as `npm start` hands it (made once per bench run); the bench's own clients use the same keys.
  const keys = identityStoreAt(testIdentityStore());
  // Started as the images start them: no source maps (they would keep 8.6–12.5 MB more in each
  // heap than production carries; docs/operations.md#source-maps).
  const node = (name: string, script: string, workload: Workload, extra: NodeJS.ProcessEnv = {}): ChildSpec => {
    const identity = childIdentity(keys, workload);
    return { name, command: process.execPath, args: [path.join(ROOT, script)], env: { ...env, ...identity.env, ...extra }, key: identity.key };
  };
  const replicaAddrs = Array.from({ length: replicas }, (_, i) => ({ name: `transcription-${i + 2}`, addr: `127.0.0.1:${ports[6 + extras.length + i]!}` }));
  const procs = new ProcessSet(
    [
      ...opts.services.map((s) => node(s, `services/${s}/dist/main.js`, s)),
      ...replicaAddrs.map((r) => node(r.name, 'services/transcription/dist/main.js', 'transcription', { GRPC_LISTEN_ADDR: r.addr })),
      node('gateway', 'gateway/dist/main.js', 'gateway'),
      ...gateways.map((g, i) => node(g.name, 'gateway/dist/main.js', 'gateway', { ...g.env, PORT: String(ports[6 + extras.length + replicas + i]!) })),
    ],
    log,
  );

  let clients: ServiceClients | undefined;
  try {
    log(`starting ${[...opts.services, 'gateway', ...extras.map((e) => e.name)].join(', ')} (Postgres ${db.serverVersion}, ${redis ? 'Redis at REDIS_URL' : 'no Redis: in-process caches and limiter'})`);
    for (const s of opts.services) procs.start(s);
    for (const r of replicaAddrs) procs.start(r.name);
    const extraOrigins: Record<string, string> = {};
    extras.forEach((extra, i) => {
      const port = ports[6 + i]!;
      procs.spawnPlain({
        name: extra.name,
        command: process.execPath,
        args: [path.join(ROOT, extra.script)],
        env: { ...env, ...extra.env, PORT: String(port) },
      });
      extraOrigins[extra.name] = `http://127.0.0.1:${port}`;
    });
    await procs.whileAlive(Promise.all([...opts.services.map((s) => waitForGrpcServing(addrOf[s], 60_000)), ...replicaAddrs.map((r) => waitForGrpcServing(r.addr, 60_000))]));
    procs.start('gateway');
    gateways.forEach((g, i) => {
      procs.start(g.name);
      extraOrigins[g.name] = `http://127.0.0.1:${ports[6 + extras.length + replicas + i]!}`;
    });
    const gateway = `http://127.0.0.1:${gatewayPort}`;
    await procs.whileAlive(Promise.all([gateway, ...Object.values(extraOrigins)].map((origin) => waitForHttpOk(`${origin}/healthz`, 60_000))));
    const c = createServiceClients(addrs, { deadlineMs: 60_000, identity: testMinter('app') });
    const g = createServiceClients(addrs, { deadlineMs: 60_000, identity: testMinter('gateway') });
    clients = c;
    return {
      db,
      addrs,
      gateway,
      extras: extraOrigins,
      procs,
      redis,
      clients: c,
      gatewayClients: g,
      services: opts.services,
      async stop() {
        closeServiceClients(c);
        closeServiceClients(g);
        await procs.stopAll();
      },
    };
  } catch (err) {
    if (clients) closeServiceClients(clients);
    await procs.stopAll();
    throw err;
  }
}

/** A user made through the real RPCs, with one API key. */
export interface BenchUser {
  email: string;
  userId: string;
  key: string;
  /** `{ authorization: 'Bearer …' }` */
  headers: Record<string, string>;
}

/**
 * Creates a user (free plan) and a 90-day key through the admin commands; `recordings` seeds
 * the demo library around them; `monthlyCredits` sets the monthly balance through
 * billing.AdjustCredits, so a benchmark's paid calls never run out (and draw no prepaid credits,
 * which the free plan's spending cap of 0 would refuse).
 */
export async function createBenchUser(stack: Stack, email: string, opts: { recordings?: number; monthlyCredits?: number } = {}): Promise<BenchUser> {
  const { clients, procs } = stack;
  const user = await procs.whileAlive(admin.createUser(clients, email, 'Bench', undefined));
  if (opts.recordings) await procs.whileAlive(admin.seed(clients, email, opts.recordings));
  if (opts.monthlyCredits !== undefined) {
    await procs.whileAlive(clients.billing.adjustCredits({ userId: user.id, monthlyCredits: opts.monthlyCredits, note: 'benchmark credits' }));
  }
  const { key } = await procs.whileAlive(admin.createKey(clients, email, '90', 'bench'));
  return { email, userId: user.id, key, headers: { authorization: `Bearer ${key}` } };
}

/** What the JSON says about the caches and limiter in use. */
export function redisNote(redis: boolean): string {
  return redis
    ? 'REDIS_URL set (production configuration): the gateway caches verified keys in-process for 30 s with revocations pushed over Redis (most requests skip the auth hop); auth verification cache, billing rate-limit windows and idempotency records in Redis'
    : 'REDIS_URL unset: no gateway key cache (every request calls auth.VerifyKey, whose cache is in-process); in-process rate limiter and idempotency records';
}
