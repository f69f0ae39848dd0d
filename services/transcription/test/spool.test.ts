/**
 * Spool folders of killed instances: a restarted (or sibling) process removes the folders of
 * dead instances — and only those — so a killed call's audio never stays on disk.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { createLogger } from '@murmur/kit';
import { openInstanceSpool, SPOOL_FOLDER } from '../src/spool';
import { tempDir } from './fixtures';

const log = createLogger('spool-test', 'silent');

/** A pid that existed and is gone: a child that already exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '']);
  return child.pid!;
}

async function instanceFolder(root: string, name: string, owner: { pid: number; host: string } | null, ageMs = 0): Promise<string> {
  const dir = path.join(root, SPOOL_FOLDER, name);
  await mkdir(path.join(dir, 'trn-call'), { recursive: true });
  await writeFile(path.join(dir, 'trn-call', 'upload.wav'), 'audio');
  if (owner) await writeFile(path.join(dir, 'owner.json'), JSON.stringify(owner));
  const t = new Date(Date.now() - ageMs);
  if (owner) await utimes(path.join(dir, 'owner.json'), t, t);
  await utimes(dir, t, t);
  return dir;
}

describe('per-instance spool folders', () => {
  it('removes the folders of dead instances at start, keeps live ones, and removes its own on close', async () => {
    const tmp = await tempDir('murmur-spool-');
    try {
      const host = os.hostname();
      const killed = await instanceFolder(tmp.dir, 'killed', { pid: deadPid(), host });
      const restartedContainer = await instanceFolder(tmp.dir, 'same-pid', { pid: process.pid, host });
      const live = await instanceFolder(tmp.dir, 'live', { pid: process.ppid, host }, 10 * 60_000);
      const otherHostFresh = await instanceFolder(tmp.dir, 'other-fresh', { pid: 1, host: `${host}-other` });
      const otherHostStale = await instanceFolder(tmp.dir, 'other-stale', { pid: 1, host: `${host}-other` }, 120_000);
      const ownerless = await instanceFolder(tmp.dir, 'ownerless', null, 120_000);

      const spool = await openInstanceSpool(tmp.dir, { log, staleMs: 60_000 });
      expect(existsSync(spool.dir)).toBe(true);
      expect(path.dirname(spool.dir)).toBe(path.join(tmp.dir, SPOOL_FOLDER));
      for (const gone of [killed, restartedContainer, otherHostStale, ownerless]) expect(existsSync(gone)).toBe(false);
      for (const kept of [live, otherHostFresh]) expect(existsSync(kept)).toBe(true);

      await spool.close();
      expect(existsSync(spool.dir)).toBe(false);
    } finally {
      await tmp.remove();
    }
  });

  it('sweeps again on its heartbeat: a sibling that dies later is cleaned without a restart', async () => {
    const tmp = await tempDir('murmur-spool-');
    const spool = await openInstanceSpool(tmp.dir, { log, staleMs: 300 });
    try {
      const sibling = await instanceFolder(tmp.dir, 'sibling', { pid: deadPid(), host: os.hostname() });
      const deadline = Date.now() + 10_000;
      while (existsSync(sibling) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(existsSync(sibling)).toBe(false);
      expect(existsSync(spool.dir)).toBe(true);
    } finally {
      await spool.close();
      await tmp.remove();
    }
  });
});
