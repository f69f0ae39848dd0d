/**
 * `npm start`: runs auth, billing, library, transcription, conversion, the gateway and the app's
 * web pages (APP_PORT, 8081) as child
 * processes under a small supervisor (prefixed logs, restart with backoff, clean stop on
 * Ctrl-C / SIGTERM). With
 * DATABASE_URL unset every service embeds its own Postgres (PGlite) under ./data; with
 * REDIS_URL unset caches and limits are in-process. PORT sets the gateway port (8080);
 * MURMUR_METRICS_PORT, when set, the first of the processes' metrics ports (metrics-addresses.ts).
 *
 * Every workload's key is kept in the key store under MURMUR_IDENTITY_DIR (default
 * MURMUR_DATA_DIR/identity; kit access/identity-store.ts), made on the first start and moved
 * there from an earlier version's layout; each child is handed its own key only
 * (child-identity.ts).
 *
 * It announces "Murmur is up" only once the gateway it started answers HTTP and, on a first start,
 * the demo user's data and key are there (first-run.ts; it seeds while the gateway starts). A
 * first start stopped before that is taken up again by the next start. A port that cannot
 * be bound (another program holds it), or a process that keeps crashing, stops everything with
 * a message naming the process and the variable to change, and a non-zero exit.
 */
import * as path from 'node:path';
import { type Workload } from '@murmur/contract';
import {
  clusterTemplateFile,
  EXIT_CANNOT_BIND,
  identityDirOf,
  identityStoreAt,
  loadConfig,
  prepareClusterTemplate,
  prepareIdentityStore,
  serviceAddressSchema,
  storageSchema,
  waitForGrpcServing,
  waitUntil,
  z,
} from '@murmur/kit';
import { appPublicUrl, appWebSchema } from '@murmur/app';
import { childIdentity } from './child-identity';
import { firstStartMark } from './first-start-mark';
import { firstRun } from './first-run';
import { firstUnbindable, parseHostPort, type ListenAddress } from './listen-addresses';
import { METRICS_PORT_VARIABLE, METRICS_PROCESSES, metricsAddresses, metricsEnv, metricsLine } from './metrics-addresses';
import { Supervisor, type ChildSpec } from './supervisor';
import { webhookSecretKeyEnv } from './webhook-secret-key';

const root = path.resolve(__dirname, '..', '..');
const cfg = loadConfig({
  ...serviceAddressSchema,
  ...storageSchema,
  ...appWebSchema,
  PORT: z.coerce.number().int().min(1).max(65535).default(8080),
  /** The gateway's own default (it listens on every interface). */
  HOST: z.string().default('0.0.0.0'),
  /** The first of six consecutive loopback ports for the processes' metrics; unset, none (metrics-addresses.ts). */
  MURMUR_METRICS_PORT: z.coerce.number().int().min(1).max(65535 - METRICS_PROCESSES.length + 1).optional(),
});
const print = (line: string) => process.stdout.write(`${line}\n`);
const identityStore = identityStoreAt(identityDirOf(cfg));
const mark = firstStartMark(cfg.MURMUR_DATA_DIR);

const SERVICES = [
  { name: 'auth', addr: cfg.AUTH_ADDR, variable: 'AUTH_ADDR' },
  { name: 'billing', addr: cfg.BILLING_ADDR, variable: 'BILLING_ADDR' },
  { name: 'library', addr: cfg.LIBRARY_ADDR, variable: 'LIBRARY_ADDR' },
  { name: 'transcription', addr: cfg.TRANSCRIPTION_ADDR, variable: 'TRANSCRIPTION_ADDR' },
  { name: 'conversion', addr: cfg.CONVERSION_ADDR, variable: 'CONVERSION_ADDR' },
] as const satisfies readonly { name: Workload; addr: string; variable: string }[];

const METRICS_ADDRESSES = metricsAddresses(cfg.MURMUR_METRICS_PORT);

const LISTEN_ADDRESSES: ListenAddress[] = [
  { name: 'gateway', variable: 'PORT', host: cfg.HOST, port: cfg.PORT },
  { name: 'app', variable: 'APP_PORT', host: cfg.APP_HOST, port: cfg.APP_PORT },
  ...SERVICES.flatMap((s) => {
    const hostPort = parseHostPort(s.addr);
    return hostPort ? [{ name: s.name, variable: s.variable, ...hostPort }] : [];
  }),
  ...METRICS_ADDRESSES,
];

/** The key sealing webhook signing secrets, made once under the data folder (unless the operator set one): transcription's alone. */
const webhookKey = webhookSecretKeyEnv(cfg.MURMUR_DATA_DIR);
const withWebhookKey = (child: ChildSpec): ChildSpec => (child.name === 'transcription' ? { ...child, env: { ...child.env, ...webhookKey.env } } : child);

/** A start that cannot succeed: its message is for the person who ran `npm start`. */
class LaunchFailure extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/** What to say when `name` will not be restarted. */
function gaveUpMessage(name: string, cannotBind: boolean): string {
  if (!cannotBind) return `${name} keeps crashing (its messages are above); stopping.`;
  const where = LISTEN_ADDRESSES.find((a) => a.name === name);
  const variable = where?.variable ?? `${name.toUpperCase()}_ADDR`;
  const address = where ? `${where.host}:${where.port}` : 'its address';
  const metrics = METRICS_ADDRESSES.find((a) => a.name === name);
  const also = metrics ? ` (or ${METRICS_PORT_VARIABLE}, if it was its metrics port ${metrics.port})` : '';
  return `${name} cannot listen on ${address} (its own message is above). Stop the program holding that port or set ${variable}${also} to a free port.`;
}

/** Readable stacks of our own code in every child, without the dependencies' source maps (own-source-maps.ts). */
const OWN_SOURCE_MAPS = path.join(__dirname, 'own-source-maps.js');

function spec(name: Workload, script: string): ChildSpec {
  const identity = childIdentity(identityStore, name);
  return {
    name,
    command: process.execPath,
    args: ['--require', OWN_SOURCE_MAPS, path.join(root, script)],
    env: {
      ...process.env,
      AUTH_ADDR: cfg.AUTH_ADDR,
      BILLING_ADDR: cfg.BILLING_ADDR,
      LIBRARY_ADDR: cfg.LIBRARY_ADDR,
      TRANSCRIPTION_ADDR: cfg.TRANSCRIPTION_ADDR,
      CONVERSION_ADDR: cfg.CONVERSION_ADDR,
      PORT: String(cfg.PORT),
      APP_PORT: String(cfg.APP_PORT),
      APP_HOST: cfg.APP_HOST,
      MURMUR_DATA_DIR: cfg.MURMUR_DATA_DIR,
      ...metricsEnv(METRICS_ADDRESSES, name),
      ...identity.env,
    },
    key: identity.key,
  };
}

async function main(): Promise<void> {
  // Every process's workload key, made once (kept in the data folder, owner-only).
  const keys = prepareIdentityStore(identityStore.root);
  if (keys.moved.length > 0) print(`Moved the workload keys under ${identityStore.root} into public/, private/ and admin/ (the app's): no process is given another's key.`);
  if (keys.made.length > 0) print(`Made the workload keys of ${keys.made.join(', ')} under ${identityStore.root}.`);
  print(`Murmur: ${cfg.DATABASE_URL ? 'Postgres at DATABASE_URL' : `embedded Postgres (PGlite) under ${cfg.MURMUR_DATA_DIR}`}, ${cfg.REDIS_URL ? 'Redis at REDIS_URL' : 'in-process limiter and cache'}.`);
  const taken = await firstUnbindable(LISTEN_ADDRESSES);
  if (taken) throw new LaunchFailure(taken.message, EXIT_CANNOT_BIND);
  // One initdb for the four embedded databases about to be made, not one each (first run only).
  if (!cfg.DATABASE_URL && (await prepareClusterTemplate())) print(`Made an empty Postgres cluster for new embedded databases to start from: ${clusterTemplateFile()}.`);
  if (webhookKey.made) print(`Made the key that seals webhook signing secrets: ${webhookKey.made}.`);

  let gaveUp: (failure: LaunchFailure) => void = () => undefined;
  const failed = new Promise<never>((_, reject) => (gaveUp = reject));
  failed.catch(() => undefined); // heard through the races below
  const supervisor = new Supervisor(
    [...SERVICES.map((s) => withWebhookKey(spec(s.name, `services/${s.name}/dist/main.js`))), spec('gateway', 'gateway/dist/main.js'), spec('app', 'app/dist/web/main.js')],
    undefined,
    { onGiveUp: (name, { cannotBind }) => gaveUp(new LaunchFailure(gaveUpMessage(name, cannotBind), cannotBind ? EXIT_CANNOT_BIND : 1)) },
  );
  let stopping = false;
  let up = false;
  const stop = async (signal: string, exitCode: number, message?: string) => {
    if (stopping) return;
    stopping = true;
    print(message ?? `\n${signal}: stopping every process…`);
    if (!up && mark.pending()) print('The first start did not finish (the demo data and key are not all there yet): the next `npm start` completes it and prints a key.');
    await supervisor.stopAll();
    process.exit(exitCode);
  };
  process.on('SIGINT', () => void stop('SIGINT', 0));
  process.on('SIGTERM', () => void stop('SIGTERM', 0));

  try {
    for (const s of SERVICES) supervisor.start(s.name);
    await Promise.race([Promise.all(SERVICES.map((s) => waitForGrpcServing(s.addr, 120_000))), failed]);
    supervisor.start('gateway');
    supervisor.start('app');
    const baseUrl = `http://localhost:${cfg.PORT}`;
    const appUrl = appPublicUrl(cfg);
    // Ours answers with a request id of ours, and only while the gateway we started runs.
    const answers = async () => {
      const res = await fetch(`${baseUrl}/healthz`);
      return res.ok && /^req_/.test(res.headers.get('x-request-id') ?? '') && supervisor.pid('gateway') !== undefined;
    };
    const appAnswers = async () => (await fetch(`http://${cfg.APP_HOST}:${cfg.APP_PORT}/healthz`)).ok && supervisor.pid('app') !== undefined;
    // The demo user's data and key are made over gRPC while the gateway and the app start; as the
    // admin CLI beside `npm start` does, with the store's admin key.
    const identity = { MURMUR_IDENTITY_DIR: identityStore.root, MURMUR_IDENTITY_KEY_FILE: undefined, MURMUR_IDENTITY_KEY_FD: undefined };
    const [welcome] = await Promise.race([
      Promise.all([firstRun({ ...cfg, ...identity }, baseUrl, appUrl, mark), waitUntil(`the gateway at ${baseUrl}`, answers, 60_000), waitUntil(`the app at ${appUrl}`, appAnswers, 60_000)]),
      failed,
    ]);
    if (stopping) return;
    up = true;
    print('');
    print(`Murmur is up: REST at ${baseUrl}/api/v1`);
    for (const line of welcome.lines) print(line);
    const metrics = metricsLine(METRICS_ADDRESSES);
    if (metrics) print(metrics);
    try {
      welcome.printed();
    } catch (err) {
      print(`Could not remove ${mark.file} (${(err as Error).message}): the next start will take the first start up again and print a new key.`);
    }
    print('Press Ctrl-C to stop.');
  } catch (err) {
    if (stopping) return; // Ctrl-C meanwhile: what failed is the stop's doing
    const failure = err instanceof LaunchFailure ? err : new LaunchFailure((err as Error).message, 1);
    process.stderr.write(`npm start failed: ${failure.message}\n`);
    await stop('', failure.exitCode, 'Stopping every process…');
  }
  // A process that gives up after the start stops the whole system too.
  failed.catch((failure: LaunchFailure) => {
    process.stderr.write(`Murmur stopped: ${failure.message}\n`);
    void stop('', failure.exitCode, 'Stopping every process…');
  });
}

main().catch((err: unknown) => {
  const code = err instanceof LaunchFailure ? err.exitCode : 1;
  console.error(`npm start failed: ${(err as Error).message}`);
  process.exit(code);
});
