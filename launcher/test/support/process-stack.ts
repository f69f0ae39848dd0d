/**
 * The whole of Murmur as real child processes (the built dist, as in production) under the
 * launcher's Supervisor, each on a free port: the five services, then the gateway once they
 * serve. Each child keeps its own embedded Postgres in a fresh folder unless the caller passes
 * a DATABASE_URL of its own (a test cluster it may restart). Shared by the cross-process tests.
 * Every line every process prints is kept, and searched for secrets when the stack stops
 * (log-secrets.ts): a test that leaks a key, a token or transcript words into a log fails.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type Workload } from '@murmur/contract';
import { closeServiceClients, createServiceClients, identityStoreAt, type ServiceAddresses, type ServiceClients, waitForGrpcServing, waitForHttpOk } from '@murmur/kit';
import { freePort, testIdentityStore, testMinter } from '@murmur/kit/testing';
import { childIdentity } from '../../src/child-identity';
import { Supervisor, type ChildSpec } from '../../src/supervisor';
import { assertNoSecretsLogged, knownSecrets, type KnownSecrets } from './log-secrets';

export const ROOT = path.resolve(__dirname, '..', '..', '..');
export const SERVICES = ['auth', 'billing', 'library', 'transcription', 'conversion'] as const;
export type ServiceName = (typeof SERVICES)[number];
export type ProcessName = ServiceName | 'gateway';

export interface ProcessStack {
  /** http://127.0.0.1:<port> of the gateway. */
  base: string;
  addrs: ServiceAddresses;
  addrOf: Record<ServiceName, string>;
  supervisor: Supervisor;
  /** Admin view of every service (users, keys, usage, ledger). */
  clients: ServiceClients;
  /** Fresh folder of this stack (embedded databases, spool), removed by stop(). */
  dataDir: string;
  /** Waits until `name` answers again (gRPC health, or the gateway's /healthz). */
  waitReady(name: ProcessName, timeoutMs?: number): Promise<void>;
  /** Stops every process (SIGTERM, SIGKILL after `graceMs`) and starts them all again on the same data. */
  restart(graceMs?: number): Promise<void>;
  /** The extra transcription replicas' names (`transcription-2`, …). */
  replicas: string[];
  /** Every line the processes printed so far (`[name] …`). */
  lines: string[];
  /** What else must never appear in them (a test adds the values and words it knows). */
  secrets: KnownSecrets;
  /** Stops every process, then fails if any line carried a secret (log-secrets.ts). */
  stop(): Promise<void>;
}

export async function startProcessStack(
  opts: { env?: NodeJS.ProcessEnv; out?: (line: string) => void; /** Extra transcription replicas (they need a shared DATABASE_URL). */ transcriptionReplicas?: number } = {},
): Promise<ProcessStack> {
  const ports: number[] = [];
  const extra = opts.transcriptionReplicas ?? 0;
  for (let i = 0; i < SERVICES.length + 1 + extra; i += 1) ports.push(await freePort());
  const addr = (i: number) => `127.0.0.1:${ports[i]}`;
  const addrs: ServiceAddresses = { AUTH_ADDR: addr(0), BILLING_ADDR: addr(1), LIBRARY_ADDR: addr(2), TRANSCRIPTION_ADDR: addr(3), CONVERSION_ADDR: addr(4) };
  const addrOf: Record<ServiceName, string> = {
    auth: addrs.AUTH_ADDR,
    billing: addrs.BILLING_ADDR,
    library: addrs.LIBRARY_ADDR,
    transcription: addrs.TRANSCRIPTION_ADDR,
    conversion: addrs.CONVERSION_ADDR,
  };
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'murmur-procs-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...addrs,
    PORT: String(ports[5]),
    HOST: '127.0.0.1',
    GRPC_LISTEN_ADDR: '',
    LOG_LEVEL: 'warn',
    // Embedded Postgres per child in a fresh folder unless the caller brings its own: a test
    // must not meet the rows of other runs (CI sets DATABASE_URL/REDIS_URL for the in-process suites).
    DATABASE_URL: '',
    REDIS_URL: '',
    MURMUR_DATA_DIR: dataDir,
    MURMUR_TRANSCRIPTION_ENGINE: 'pocketsphinx',
    // The key sealing webhook signing secrets (`npm start` keeps one under ./data); the same across restarts.
    MURMUR_WEBHOOK_SECRET_KEY: `test:${randomBytes(32).toString('base64')}`,
    ...opts.env,
  };
  // Each child is handed its own workload key as `npm start` hands it; the test calls as the app's admin with the same keys.
  const keys = identityStoreAt(testIdentityStore());
  const spec = (name: string, script: string, workload: Workload, extra: NodeJS.ProcessEnv = {}): ChildSpec => {
    const identity = childIdentity(keys, workload);
    return { name, command: process.execPath, args: [path.join(ROOT, script)], env: { ...env, ...identity.env, ...extra }, key: identity.key };
  };
  const replicas = Array.from({ length: extra }, (_, i) => ({ name: `transcription-${i + 2}`, addr: addr(6 + i) }));
  const tail: string[] = [];
  const lines: string[] = [];
  const secrets = knownSecrets();
  const supervisor = new Supervisor(
    [
      ...SERVICES.map((s) => spec(s, `services/${s}/dist/main.js`, s)),
      ...replicas.map((r) => spec(r.name, 'services/transcription/dist/main.js', 'transcription', { GRPC_LISTEN_ADDR: r.addr })),
      spec('gateway', 'gateway/dist/main.js', 'gateway'),
    ],
    (line) => {
      // The last lines every process printed, for the error of a stack that does not come up.
      tail.push(line);
      if (tail.length > 60) tail.shift();
      lines.push(line);
      opts.out?.(line);
    },
  );
  const base = `http://127.0.0.1:${ports[5]}`;
  const waitReady = (name: ProcessName, timeoutMs = 90_000) =>
    name === 'gateway' ? waitForHttpOk(`${base}/healthz`, timeoutMs) : waitForGrpcServing(addrOf[name], timeoutMs);
  const startAll = async () => {
    for (const s of SERVICES) supervisor.start(s);
    for (const r of replicas) supervisor.start(r.name);
    try {
      await Promise.all([...SERVICES.map((s) => waitReady(s)), ...replicas.map((r) => waitForGrpcServing(r.addr, 90_000))]);
      supervisor.start('gateway');
      // As long as the services get: a busy 2-core machine (another suite's stack) starts slowly.
      await waitReady('gateway', 90_000);
    } catch (err) {
      throw new Error(`${(err as Error).message}; the processes' last lines:\n${tail.join('\n')}`);
    }
  };
  try {
    await startAll();
  } catch (err) {
    await supervisor.stopAll(5_000);
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const clients = createServiceClients(addrs, { deadlineMs: 30_000, identity: testMinter('app') });
  return {
    base,
    addrs,
    addrOf,
    supervisor,
    clients,
    dataDir,
    waitReady,
    replicas: replicas.map((r) => r.name),
    lines,
    secrets,
    async restart(graceMs = 5_000) {
      await supervisor.stopAll(graceMs);
      await startAll();
    },
    async stop() {
      closeServiceClients(clients);
      await supervisor.stopAll(5_000);
      fs.rmSync(dataDir, { recursive: true, force: true });
      assertNoSecretsLogged(lines, secrets);
    },
  };
}
