/**
 * What each process of `npm start` is given of the workload keys (docs/authorization.md#keys):
 * the built launcher as a child process, on free ports, with a data folder holding a key store of
 * an earlier version (every workload's `.key` and `.pub` in one folder). The launcher must move
 * it, keeping every key; every process it starts must be pointed at the public keys only, with no
 * path to a private key in its environment or arguments and no key file open; a service pointed at
 * a folder of other workloads' private keys must refuse to start; the admin CLI must work beside it.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { auth } from '@murmur/proto';
import { WORKLOADS, type Workload } from '@murmur/contract';
import { createClient, generateWorkloadKeyPair, signingKeyFromPem, TokenMinter, waitForGrpcServing } from '@murmur/kit';
import { freePort } from '@murmur/kit/testing';
import { assertNoSecretsLogged, processLines } from './support/log-secrets';

const ROOT = path.resolve(__dirname, '..', '..');
const run = promisify(execFile);
/** The script each process of `npm start` runs, by workload. */
const SCRIPTS: Record<Workload, string> = {
  auth: 'services/auth/dist/main.js',
  billing: 'services/billing/dist/main.js',
  library: 'services/library/dist/main.js',
  transcription: 'services/transcription/dist/main.js',
  conversion: 'services/conversion/dist/main.js',
  gateway: 'gateway/dist/main.js',
  app: 'app/dist/web/main.js',
};
const onLinux = process.platform === 'linux';

/** Pids of the processes whose parent is `parent`, from /proc. */
function childrenOf(parent: number): number[] {
  return fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent;
      } catch {
        return false; // ended meanwhile
      }
    })
    .map(Number);
}

const nulSeparated = (file: string) => fs.readFileSync(file, 'utf8').split('\0').filter(Boolean);

describe('workload keys under npm start', () => {
  let launcher: ChildProcess;
  let dataDir: string;
  let identityDir: string;
  let out = '';
  let env: NodeJS.ProcessEnv;
  const earlier = new Map<Workload, { privatePem: string; publicPem: string }>();

  /** The running child of the launcher that runs `w`'s script. */
  const pidOf = (w: Workload): number => {
    const pid = childrenOf(launcher.pid!).find((p) => nulSeparated(`/proc/${p}/cmdline`).some((a) => a.endsWith(SCRIPTS[w])));
    if (pid === undefined) throw new Error(`no process of ${w} under the launcher`);
    return pid;
  };

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'murmur-workload-keys-'));
    identityDir = path.join(dataDir, 'identity');
    // What `npm start` made before: every workload's key pair side by side.
    fs.mkdirSync(identityDir, { mode: 0o700 });
    for (const w of WORKLOADS) {
      const pair = generateWorkloadKeyPair();
      earlier.set(w, pair);
      fs.writeFileSync(path.join(identityDir, `${w}.key`), pair.privatePem, { mode: 0o600 });
      fs.writeFileSync(path.join(identityDir, `${w}.pub`), pair.publicPem);
    }
    const addr = async () => `127.0.0.1:${await freePort()}`;
    env = {
      ...process.env,
      AUTH_ADDR: await addr(),
      BILLING_ADDR: await addr(),
      LIBRARY_ADDR: await addr(),
      TRANSCRIPTION_ADDR: await addr(),
      CONVERSION_ADDR: await addr(),
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      APP_PORT: String(await freePort()),
      GRPC_LISTEN_ADDR: '',
      LOG_LEVEL: 'warn',
      DATABASE_URL: '',
      REDIS_URL: '',
      MURMUR_DATA_DIR: dataDir,
      MURMUR_IDENTITY_DIR: '',
      MURMUR_IDENTITY_KEY_FILE: '',
    };
    // Its own process group, so afterAll stops every process it started.
    launcher = spawn(process.execPath, [path.join(ROOT, 'launcher/dist/main.js')], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    await new Promise<void>((resolve, reject) => {
      launcher.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('Press Ctrl-C to stop.')) resolve();
      });
      launcher.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      launcher.on('exit', (code) => reject(new Error(`npm start exited (${code}):\n${out}`)));
    });
  }, 180_000);

  afterAll(async () => {
    if (launcher?.exitCode === null) {
      const exited = new Promise((resolve) => launcher.once('exit', resolve));
      process.kill(-launcher.pid!, 'SIGTERM');
      await exited;
    }
    try {
      process.kill(-launcher.pid!, 'SIGKILL'); // anything a failed launcher left behind
    } catch {
      // ESRCH: the whole group has ended
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
    assertNoSecretsLogged(processLines(out));
  });

  it('moves the keys of an earlier version into public/, private/ and admin/, keeping every key', () => {
    expect(out).toContain(`Moved the workload keys under ${identityDir}`);
    expect(out).toContain('MURMUR_API_KEY=svc_'); // the first run seeded through the services with the moved keys
    expect(fs.readdirSync(identityDir).sort()).toEqual(['admin', 'private', 'public']);
    expect(fs.readdirSync(path.join(identityDir, 'admin'))).toEqual(['app.key']);
    for (const w of WORKLOADS) {
      const keyFile = path.join(identityDir, w === 'app' ? 'admin' : 'private', `${w}.key`);
      expect(fs.readFileSync(keyFile, 'utf8')).toBe(earlier.get(w)!.privatePem);
      expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
      expect(fs.readFileSync(path.join(identityDir, 'public', `${w}.pub`), 'utf8')).toBe(earlier.get(w)!.publicPem);
    }
  });

  (onLinux ? it : it.skip)('points every process at the public keys only: no private key path in its environment or arguments, no key file open', () => {
    const privateDirs = [path.join(identityDir, 'private'), path.join(identityDir, 'admin')];
    for (const w of WORKLOADS) {
      const pid = pidOf(w);
      const environ = nulSeparated(`/proc/${pid}/environ`);
      const vars = Object.fromEntries(environ.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
      expect({ w, dir: vars.MURMUR_IDENTITY_DIR, fd: vars.MURMUR_IDENTITY_KEY_FD, file: vars.MURMUR_IDENTITY_KEY_FILE }).toEqual({ w, dir: path.join(identityDir, 'public'), fd: '3', file: undefined });
      const everything = [...environ, ...nulSeparated(`/proc/${pid}/cmdline`)].join('\n');
      for (const dir of privateDirs) expect(everything).not.toContain(dir);
      expect(everything).not.toContain('PRIVATE KEY');
      const folder = fs.readdirSync(vars.MURMUR_IDENTITY_DIR!);
      expect(folder.sort()).toEqual(WORKLOADS.map((x) => `${x}.pub`).sort());
      for (const f of folder) expect(fs.readFileSync(path.join(vars.MURMUR_IDENTITY_DIR!, f), 'utf8')).not.toContain('PRIVATE KEY');
      const open = fs.readdirSync(`/proc/${pid}/fd`).map((fd) => {
        try {
          return fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
        } catch {
          return ''; // closed meanwhile
        }
      });
      expect(open.filter((target) => target.startsWith(identityDir))).toEqual([]);
    }
  });

  it("refuses a token signed with a key the services do not trust, and takes the app's own from admin/", async () => {
    const listUsers = async (pem: string) => {
      const client = createClient(auth.AuthServiceClient, env.AUTH_ADDR!, { identity: new TokenMinter(signingKeyFromPem('app', pem), ['admin']) });
      try {
        return await client.listUsers({ pageSize: 1, pageToken: '' });
      } finally {
        client.close();
      }
    };
    await expect(listUsers(generateWorkloadKeyPair().privatePem)).rejects.toThrow('(invalid_credentials)');
    expect((await listUsers(fs.readFileSync(path.join(identityDir, 'admin', 'app.key'), 'utf8'))).users).toHaveLength(1);
  });

  it('runs the admin CLI beside it with no identity variable set', async () => {
    const { stdout } = await run(process.execPath, [path.join(ROOT, 'app/dist/admin/main.js'), 'keys', 'list', '--email', 'demo@murmur.local'], { env });
    expect(stdout).toContain('quick start');
  });

  (onLinux ? it : it.skip)('hands a restarted process its key again', async () => {
    const before = pidOf('conversion');
    process.kill(before, 'SIGKILL');
    await new Promise<void>((resolve, reject) => {
      const hang = setTimeout(() => reject(new Error(`conversion was not restarted:\n${out}`)), 60_000);
      const poll = setInterval(() => {
        const now = childrenOf(launcher.pid!).find((p) => p !== before && nulSeparated(`/proc/${p}/cmdline`).some((a) => a.endsWith(SCRIPTS.conversion)));
        if (now === undefined) return;
        clearInterval(poll);
        clearTimeout(hang);
        resolve();
      }, 200);
    });
    await waitForGrpcServing(env.CONVERSION_ADDR!, 60_000);
    expect(out).not.toContain('workload key cannot be read');
  });

  it.each([
    ['a folder of every workload\'s private key (the layout of earlier versions)', () => {
      const flat = fs.mkdtempSync(path.join(os.tmpdir(), 'murmur-flat-identity-'));
      for (const [w, p] of earlier) {
        fs.writeFileSync(path.join(flat, `${w}.key`), p.privatePem, { mode: 0o600 });
        fs.writeFileSync(path.join(flat, `${w}.pub`), p.publicPem);
      }
      return flat;
    }, 'holds private keys of other workloads (app.key, auth.key, billing.key, gateway.key, library.key, transcription.key)'],
    ["npm start's key store", () => identityDir, `is npm start's key store, which hands conversion its own key`],
  ])('a service pointed at %s refuses to start, naming it', async (_, dir, message) => {
    const child = spawn(process.execPath, [path.join(ROOT, SCRIPTS.conversion)], {
      env: { ...env, CONVERSION_ADDR: `127.0.0.1:${await freePort()}`, MURMUR_IDENTITY_DIR: dir() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => {
      // Only to end a service that started anyway (it would serve forever).
      const hang = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.on('exit', (c) => {
        clearTimeout(hang);
        resolve(c);
      });
    });
    expect(code).toBe(1);
    expect(stderr).toContain('conversion failed to start: ');
    expect(stderr).toContain(message);
  });
});
