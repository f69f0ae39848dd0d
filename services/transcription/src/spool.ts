/**
 * Where a transcription process spools uploads: one folder per process instance,
 * `<MURMUR_TRANSCRIBE_TMP_DIR>/murmur-transcription/<instance>/`, holding the per-call temp
 * folders. A call removes its own folder when it ends, but a process killed mid-call (kill -9,
 * OOM, a node lost) cannot: its users' audio would stay on disk for ever. So every process,
 * when it starts and then every heartbeat, removes the folders of dead instances — never those
 * of a live one, since several replicas may share the temp dir (one host, or one volume).
 *
 * An instance is dead when its owner file names this host and a pid that is gone (or our own
 * pid: a restarted container is pid 1 again); an instance of another host (a shared volume)
 * when its owner file has not been touched for `staleMs`, as is a folder without one.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Logger } from '@murmur/kit';

/** Folder under the temp dir that holds one folder per instance. */
export const SPOOL_FOLDER = 'murmur-transcription';
/** An instance folder whose owner file is this old is taken for dead (its heartbeat touches it every third of this). */
export const DEFAULT_SPOOL_STALE_MS = 60_000;
const OWNER_FILE = 'owner.json';

interface Owner {
  pid: number;
  host: string;
}

/** This process's spool: the parent of its calls' temp folders. */
export interface InstanceSpool {
  /** Instance id, also the folder name. */
  instanceId: string;
  /** Pass as the service's tmpDir. */
  dir: string;
  /** Stops the heartbeat and removes this instance's folder (on a clean shutdown). */
  close(): Promise<void>;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: alive, owned by someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function readOwner(dir: string): Promise<{ owner: Owner; touchedMs: number } | undefined> {
  try {
    const file = path.join(dir, OWNER_FILE);
    const [text, info] = await Promise.all([readFile(file, 'utf8'), stat(file)]);
    const owner = JSON.parse(text) as Partial<Owner>;
    if (typeof owner.pid !== 'number' || typeof owner.host !== 'string') return undefined;
    return { owner: { pid: owner.pid, host: owner.host }, touchedMs: info.mtimeMs };
  } catch {
    return undefined;
  }
}

/** Whether the instance folder `dir` belongs to a dead process (see the module comment). */
async function isDead(dir: string, staleMs: number, now: number): Promise<boolean> {
  const found = await readOwner(dir);
  if (!found) {
    // A folder whose owner file is not written yet is only a few milliseconds old.
    const info = await stat(dir).catch(() => undefined);
    return info !== undefined && now - info.mtimeMs > staleMs;
  }
  const { owner, touchedMs } = found;
  // On this host the pid is the truth (a stalled but live process keeps its files).
  if (owner.host === os.hostname()) return owner.pid === process.pid || !isAlive(owner.pid);
  return now - touchedMs > staleMs;
}

/**
 * Removes the folders of dead instances under `root`, except `self`; returns the removed
 * instance ids. Safe to run from several processes at once.
 */
export async function removeDeadSpools(root: string, opts: { self?: string; staleMs?: number; now?: number } = {}): Promise<string[]> {
  const staleMs = opts.staleMs ?? DEFAULT_SPOOL_STALE_MS;
  const now = opts.now ?? Date.now();
  const names = await readdir(root).catch(() => [] as string[]);
  const removed: string[] = [];
  for (const name of names) {
    if (name === opts.self) continue;
    const dir = path.join(root, name);
    if (await isDead(dir, staleMs, now)) {
      await rm(dir, { recursive: true, force: true, maxRetries: 3 });
      removed.push(name);
    }
  }
  return removed;
}

/**
 * Creates this process's instance folder under `<parent>/murmur-transcription`, removes the
 * folders of dead instances, and keeps a heartbeat that marks this one alive and sweeps again.
 */
export async function openInstanceSpool(parent: string, opts: { log: Logger; staleMs?: number }): Promise<InstanceSpool> {
  const staleMs = opts.staleMs ?? DEFAULT_SPOOL_STALE_MS;
  const root = path.join(parent, SPOOL_FOLDER);
  const instanceId = `${process.pid}-${randomBytes(4).toString('hex')}`;
  const dir = path.join(root, instanceId);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const ownerFile = path.join(dir, OWNER_FILE);
  await writeFile(ownerFile, JSON.stringify({ pid: process.pid, host: os.hostname() } satisfies Owner));

  const sweep = async () => {
    const removed = await removeDeadSpools(root, { self: instanceId, staleMs });
    if (removed.length > 0) opts.log.info({ instances: removed.length }, 'removed the spool folders of dead instances');
  };
  await sweep();
  let beating: Promise<void> | undefined;
  const timer = setInterval(() => {
    beating ??= (async () => {
      const t = new Date();
      await utimes(ownerFile, t, t);
      await sweep();
    })()
      .catch((err: unknown) => opts.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'spool heartbeat failed'))
      .finally(() => {
        beating = undefined;
      });
  }, Math.max(50, Math.floor(staleMs / 3)));
  timer.unref();

  return {
    instanceId,
    dir,
    async close() {
      clearInterval(timer);
      await beating;
      await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}
