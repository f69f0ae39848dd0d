/**
 * `npm start` as a person runs it: the built launcher as a child process in a process group of
 * its own (so a test can stop or kill everything it started, as Ctrl-C or a crash would), on free
 * ports, over a data folder the test chooses.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { freePort } from '@murmur/kit/testing';
import type { ServiceAddresses } from '@murmur/kit';

const ROOT = path.resolve(__dirname, '..', '..', '..');

/** The variables of one `npm start` on free ports over `dataDir` (embedded stores unless `extra` says otherwise). */
export async function launcherEnv(dataDir: string, extra: NodeJS.ProcessEnv = {}): Promise<NodeJS.ProcessEnv & ServiceAddresses & { PORT: string }> {
  const addr = async () => `127.0.0.1:${await freePort()}`;
  return {
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
    ...extra,
  };
}

export interface LauncherRun {
  child: ChildProcess;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** Resolves with the output once `text` appears; rejects if the launcher exits first. */
  printed(text: string): Promise<string>;
  /** The pid of its child running `script` (e.g. services/library/dist/main.js), from /proc. */
  pidOf(script: string): number;
  /** Sends `signal` to the whole group and waits until the launcher has exited. */
  signal(signal: NodeJS.Signals): Promise<void>;
}

export function startLauncher(env: NodeJS.ProcessEnv): LauncherRun {
  const child = spawn(process.execPath, [path.join(ROOT, 'launcher/dist/main.js')], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const listeners = new Set<() => void>();
  const append = (d: Buffer) => {
    out += d.toString();
    for (const l of listeners) l();
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  return {
    child,
    output: () => out,
    printed: (text) =>
      new Promise<string>((resolve, reject) => {
        const check = () => {
          if (!out.includes(text)) return;
          listeners.delete(check);
          resolve(out);
        };
        listeners.add(check);
        check();
        void exited.then(() => {
          if (listeners.delete(check)) reject(new Error(`npm start exited (${child.exitCode ?? child.signalCode}) before printing "${text}":\n${out}`));
        });
      }),
    pidOf(script) {
      const pid = childrenOf(child.pid!).find((p) => nulSeparated(`/proc/${p}/cmdline`).some((a) => a.endsWith(script)));
      if (pid === undefined) throw new Error(`no process running ${script} under the launcher`);
      return pid;
    },
    async signal(signal) {
      if (child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(-child.pid!, signal);
        } catch {
          // ESRCH: the whole group has ended
        }
        await exited;
      }
    },
  };
}

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
