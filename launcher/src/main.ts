/**
 * `npm start`: runs auth, billing, library, transcription, conversion and the gateway as child
 * processes under a small supervisor (prefixed logs, restart with backoff, clean stop on
 * Ctrl-C / SIGTERM). With
 * DATABASE_URL unset every service embeds its own Postgres (PGlite) under ./data; with
 * REDIS_URL unset caches and limits are in-process. PORT sets the gateway port (8080).
 */
import * as path from 'node:path';
import { loadConfig, serviceAddressSchema, storageSchema, waitForGrpcServing, waitForHttpOk, z } from '@murmur/kit';
import { firstRun } from './first-run';
import { Supervisor, type ChildSpec } from './supervisor';

const root = path.resolve(__dirname, '..', '..');
const cfg = loadConfig({ ...serviceAddressSchema, ...storageSchema, PORT: z.coerce.number().int().min(1).max(65535).default(8080) });
const print = (line: string) => process.stdout.write(`${line}\n`);

const SERVICES = [
  { name: 'auth', addr: cfg.AUTH_ADDR },
  { name: 'billing', addr: cfg.BILLING_ADDR },
  { name: 'library', addr: cfg.LIBRARY_ADDR },
  { name: 'transcription', addr: cfg.TRANSCRIPTION_ADDR },
  { name: 'conversion', addr: cfg.CONVERSION_ADDR },
];

function spec(name: string, script: string): ChildSpec {
  return {
    name,
    command: process.execPath,
    args: ['--enable-source-maps', path.join(root, script)],
    env: {
      ...process.env,
      AUTH_ADDR: cfg.AUTH_ADDR,
      BILLING_ADDR: cfg.BILLING_ADDR,
      LIBRARY_ADDR: cfg.LIBRARY_ADDR,
      TRANSCRIPTION_ADDR: cfg.TRANSCRIPTION_ADDR,
      CONVERSION_ADDR: cfg.CONVERSION_ADDR,
      PORT: String(cfg.PORT),
      MURMUR_DATA_DIR: cfg.MURMUR_DATA_DIR,
    },
  };
}

async function main(): Promise<void> {
  print(`Murmur: ${cfg.DATABASE_URL ? 'Postgres at DATABASE_URL' : `embedded Postgres (PGlite) under ${cfg.MURMUR_DATA_DIR}`}, ${cfg.REDIS_URL ? 'Redis at REDIS_URL' : 'in-process limiter and cache'}.`);
  const supervisor = new Supervisor([
    ...SERVICES.map((s) => spec(s.name, `services/${s.name}/dist/main.js`)),
    spec('gateway', 'gateway/dist/main.js'),
  ]);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    print(`\n${signal}: stopping every process…`);
    await supervisor.stopAll();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  for (const s of SERVICES) supervisor.start(s.name);
  await Promise.all(SERVICES.map((s) => waitForGrpcServing(s.addr, 120_000)));
  supervisor.start('gateway');
  const baseUrl = `http://localhost:${cfg.PORT}`;
  await waitForHttpOk(`${baseUrl}/healthz`, 60_000);
  print('');
  print(`Murmur is up: REST at ${baseUrl}/api/v1`);
  await firstRun(cfg, baseUrl, print);
  print('Press Ctrl-C to stop.');
}

main().catch((err: unknown) => {
  console.error(`npm start failed: ${(err as Error).message}`);
  process.exit(1);
});
