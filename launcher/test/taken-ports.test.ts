/**
 * A port another program holds: the built launcher, gateway and a service run as child processes
 * (as `npm start` runs them) on free ports with a scratch data folder, while this test holds one
 * of their ports with a plain TCP server. Each must exit non-zero naming the address and the
 * variable to change, and the launcher must never announce "Murmur is up".
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { EXIT_CANNOT_BIND, waitForGrpcServing } from '@murmur/kit';
import { freePort, testIdentityDir } from '@murmur/kit/testing';
import { assertNoSecretsLogged, processLines } from './support/log-secrets';

const ROOT = path.resolve(__dirname, '..', '..');
/** Only generous enough to catch a hang: services migrate PGlite on a busy machine first. */
const EXIT_WITHIN_MS = 90_000;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('a port that cannot be bound', () => {
  /** Process groups this test started: a launcher that died may have left children in its group. */
  const groups: number[] = [];
  const holders: net.Server[] = [];
  /** Every process's lines: the launcher's children as it relays them, a process started alone as `[its name] …`. */
  const printed: string[] = [];
  /** What each started process is: launcher, gateway or a service's name. */
  const names = new Map<ChildProcess, string>();
  let dataDir: string;
  let env: NodeJS.ProcessEnv;

  /** A plain TCP server of this test on a free loopback port: the "other program". */
  async function holdPort(): Promise<number> {
    const server = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    holders.push(server);
    return (server.address() as net.AddressInfo).port;
  }

  function start(script: string, extra: NodeJS.ProcessEnv): ChildProcess {
    // Its own process group, so afterAll also reaches whatever a launcher left running.
    const child = spawn(process.execPath, [path.join(ROOT, script)], { env: { ...env, ...extra }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    groups.push(child.pid!);
    names.set(child, path.basename(path.dirname(path.dirname(script))));
    return child;
  }

  function finish(child: ChildProcess): Promise<Run> {
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    return new Promise((resolve, reject) => {
      const hang = setTimeout(() => reject(new Error(`still running after ${EXIT_WITHIN_MS} ms:\n${stdout}\n${stderr}`)), EXIT_WITHIN_MS);
      child.on('exit', (code) => {
        clearTimeout(hang);
        const lines = `${stdout}\n${stderr}`.split('\n');
        const name = names.get(child)!;
        printed.push(...(name === 'launcher' ? processLines(lines) : lines.filter(Boolean).map((l) => `[${name}] ${l}`)));
        resolve({ code, stdout, stderr });
      });
    });
  }

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'murmur-ports-'));
    const addr = async () => `127.0.0.1:${await freePort()}`;
    env = {
      ...process.env,
      AUTH_ADDR: await addr(),
      BILLING_ADDR: await addr(),
      LIBRARY_ADDR: await addr(),
      TRANSCRIPTION_ADDR: await addr(),
      CONVERSION_ADDR: await addr(),
      PORT: String(await freePort()),
      GRPC_LISTEN_ADDR: '',
      LOG_LEVEL: 'warn',
      DATABASE_URL: '',
      REDIS_URL: '',
      MURMUR_DATA_DIR: dataDir,
    };
  });

  afterAll(async () => {
    for (const group of groups) {
      try {
        process.kill(-group, 'SIGKILL');
      } catch {
        // ESRCH: every process of that group has ended
      }
    }
    await Promise.all(holders.map((h) => new Promise<void>((resolve) => h.close(() => resolve()))));
    fs.rmSync(dataDir, { recursive: true, force: true });
    assertNoSecretsLogged(printed);
  });

  it('npm start stops with a message naming PORT when another program holds the gateway port', async () => {
    const port = await holdPort();
    // The gateway's default HOST (every interface) collides with the other program's loopback port.
    const run = await finish(start('launcher/dist/main.js', { PORT: String(port) }));
    expect(run.code).toBe(EXIT_CANNOT_BIND);
    expect(run.stderr).toContain(`cannot listen on 0.0.0.0:${port}`);
    expect(run.stderr).toContain('set PORT to a free port');
    expect(run.stdout).not.toContain('Murmur is up');
  });

  it('npm start stops with a message naming AUTH_ADDR when another program holds the auth port', async () => {
    const auth = `127.0.0.1:${await holdPort()}`;
    const run = await finish(start('launcher/dist/main.js', { AUTH_ADDR: auth }));
    expect(run.code).toBe(EXIT_CANNOT_BIND);
    expect(run.stderr).toContain(`cannot listen on ${auth}`);
    expect(run.stderr).toContain('set AUTH_ADDR to a free port');
    expect(run.stdout).not.toContain('Murmur is up');
  });

  it('the gateway exits 78 naming PORT, instead of exiting 0 as if it had served', async () => {
    const port = await holdPort();
    const run = await finish(start('gateway/dist/main.js', { PORT: String(port), HOST: '127.0.0.1', MURMUR_IDENTITY_DIR: testIdentityDir('gateway') }));
    expect(run.code).toBe(EXIT_CANNOT_BIND);
    expect(run.stderr).toContain(`gateway failed to start: cannot listen on 127.0.0.1:${port}: the port is already in use by another program. Stop that program or set PORT to a free port.`);
  });

  it('a service started twice on one address: the second exits 78 naming CONVERSION_ADDR, the first keeps serving', async () => {
    const identity = { MURMUR_IDENTITY_DIR: testIdentityDir('conversion') };
    const first = start('services/conversion/dist/main.js', identity);
    const firstExit = finish(first);
    await waitForGrpcServing(env.CONVERSION_ADDR!, EXIT_WITHIN_MS);
    const run = await finish(start('services/conversion/dist/main.js', identity));
    expect(run.code).toBe(EXIT_CANNOT_BIND);
    expect(run.stderr).toContain(`conversion failed to start: cannot listen on ${env.CONVERSION_ADDR}: the port is already in use by another program. Stop that program or set CONVERSION_ADDR to a free port.`);
    await waitForGrpcServing(env.CONVERSION_ADDR!, 5_000);
    first.kill('SIGTERM');
    expect((await firstExit).code).toBe(0);
  });
});
