/**
 * Test support: a Postgres cluster and a Redis server of a test's own, on free loopback ports,
 * that the test may stop, kill and restart (fault tests, race tests that need real locking).
 * The shared servers on 5432/6379 are never touched.
 *
 * Postgres comes from Debian's `pg_createcluster` (postgresql-common), Redis from
 * `redis-server`. Where either is missing (or we are not root, which pg_createcluster needs),
 * `testPostgresUnavailable()` / `testRedisUnavailable()` say why and what to install, so a test
 * can fail (CI) or skip with that reason printed instead of passing by construction
 * (describeIfReal, test-prerequisites.ts).
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, readdirSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { randomBytes } from 'node:crypto';

/** A free TCP port on 127.0.0.1 (taken by nobody at the moment of asking). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts TCP connections on the port (rejects after `timeoutMs`). */
export async function waitForPort(port: number, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function onPath(cmd: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function postgresVersion(): string | undefined {
  const dir = '/usr/lib/postgresql';
  if (!existsSync(dir)) return undefined;
  return readdirSync(dir)
    .filter((v) => existsSync(`${dir}/${v}/bin/postgres`))
    .sort((a, b) => Number(b) - Number(a))[0];
}

/** Why a Postgres of the test's own cannot be started here, or undefined when it can. */
export function testPostgresUnavailable(): string | undefined {
  if (!onPath('pg_createcluster')) return 'pg_createcluster is not installed (apt-get install postgresql)';
  if (!postgresVersion()) return 'no PostgreSQL server under /usr/lib/postgresql (apt-get install postgresql)';
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'pg_createcluster needs root (run the tests as root)';
  return undefined;
}

/** Why a Redis of the test's own cannot be started here, or undefined when it can. */
export function testRedisUnavailable(): string | undefined {
  return onPath('redis-server') ? undefined : 'redis-server is not installed (apt-get install redis-server)';
}

export interface TestPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust auth on loopback). */
  url: string;
  port: number;
  /** Stops the server at once (`-m immediate`: no clean shutdown, like a crash). */
  kill(): Promise<void>;
  /** Starts it again on the same port and data; resolves when it accepts connections. */
  start(): Promise<void>;
  /** Stops and deletes the cluster. */
  drop(): Promise<void>;
}

const clusters = new Set<string>();
let exitHookInstalled = false;

/** Creates and starts a fresh Postgres cluster on a free port (see testPostgresUnavailable). */
export async function startTestPostgres(): Promise<TestPostgres> {
  const why = testPostgresUnavailable();
  if (why) throw new Error(`cannot start a test Postgres: ${why}`);
  const version = postgresVersion()!;
  const port = await freePort();
  const name = `murmur_t${randomBytes(4).toString('hex')}`;
  const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  run('pg_createcluster', [version, name, '--port', String(port), '--start', '--', '--auth=trust', '--no-sync']);
  clusters.add(`${version}/${name}`);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const c of clusters) {
        const [v, n] = c.split('/') as [string, string];
        try {
          execFileSync('pg_dropcluster', [v, n, '--stop'], { stdio: 'ignore' });
        } catch {
          /* already gone */
        }
      }
    });
  }
  await waitForPort(port);
  // Asynchronous: a fault test's services run in the test's process and must keep serving
  // (and failing) while the cluster stops and starts, not freeze with it.
  const ctl = async (action: string, ...extra: string[]) =>
    void (await promisify(execFile)('pg_ctlcluster', ['--skip-systemctl-redirect', version, name, action, ...extra]));
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async kill() {
      await ctl('stop', '-m', 'immediate');
    },
    async start() {
      await ctl('start');
      await waitForPort(port);
    },
    async drop() {
      try {
        run('pg_dropcluster', [version, name, '--stop']);
      } finally {
        clusters.delete(`${version}/${name}`);
      }
    },
  };
}

export interface TestRedis {
  /** `redis://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** SIGKILLs the server (its data is gone: it keeps nothing on disk). */
  kill(): Promise<void>;
  /** Starts it again on the same port; resolves when it accepts connections. */
  start(): Promise<void>;
  /** Stops it for good. */
  stop(): Promise<void>;
}

/** Starts `redis-server` on a free port, in memory only (see testRedisUnavailable). */
export async function startTestRedis(): Promise<TestRedis> {
  const why = testRedisUnavailable();
  if (why) throw new Error(`cannot start a test Redis: ${why}`);
  const port = await freePort();
  let child: ChildProcess | undefined;
  const launch = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    await waitForPort(port);
  };
  const halt = async (signal: NodeJS.Signals) => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill(signal);
    });
  };
  await launch();
  const ensureGone = () => child?.kill('SIGKILL');
  process.once('exit', ensureGone);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill: () => halt('SIGKILL'),
    start: launch,
    async stop() {
      process.off('exit', ensureGone);
      await halt('SIGTERM');
    },
  };
}
