/**
 * Where the audio of queued jobs waits until a worker takes it: behind one interface, so a
 * single machine keeps it on its disk and replicas on several machines share an S3-compatible
 * bucket. A job's audio is deleted when the job ends (completed, failed or canceled); the
 * sweeper (jobs/maintenance.ts) deletes whatever a crash left behind.
 *
 * Keys are job ids (`trn_…`), checked here so a key can never name a path outside the store.
 */
import { copyFile, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import * as path from 'node:path';
import { isId } from '@murmur/contract';

export interface AudioStore {
  /** Stores the file at `localPath` under `key`; the file is moved or copied (the caller removes its copy either way). */
  put(key: string, localPath: string): Promise<void>;
  /** A local file holding the audio of `key`, for ffmpeg: the stored file itself, or a copy made in `scratchDir`. */
  localFile(key: string, scratchDir: string): Promise<string>;
  /** Removes the audio of `key`; a missing one is no error. */
  delete(key: string): Promise<void>;
  /** Every key stored, with when it was stored (the sweeper spares the newest: their jobs may be committing). */
  list(): Promise<Array<{ key: string; storedAt: Date }>>;
  /** Releases connections (S3), if any. */
  close?(): void;
}

export function checkAudioKey(key: string): string {
  if (!isId('trn', key)) throw new Error(`not an audio key: ${key}`);
  return key;
}

/** The default store: files under one folder (MURMUR_DATA_DIR/transcription/audio). */
export class FileAudioStore implements AudioStore {
  constructor(private readonly root: string) {}

  static async open(root: string): Promise<FileAudioStore> {
    await mkdir(root, { recursive: true });
    return new FileAudioStore(root);
  }

  private pathOf(key: string): string {
    return path.join(this.root, checkAudioKey(key));
  }

  async put(key: string, localPath: string): Promise<void> {
    const target = this.pathOf(key);
    try {
      await rename(localPath, target);
    } catch (err) {
      // Another filesystem (a temp dir on tmpfs): copy through a temporary name, so a crash never
      // leaves a half-written file under the key.
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
      const partial = `${target}.partial`;
      await copyFile(localPath, partial);
      await rename(partial, target);
    }
  }

  async localFile(key: string): Promise<string> {
    const file = this.pathOf(key);
    await stat(file);
    return file;
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async list(): Promise<Array<{ key: string; storedAt: Date }>> {
    const out: Array<{ key: string; storedAt: Date }> = [];
    for (const name of await readdir(this.root)) {
      const key = name.endsWith('.partial') ? name.slice(0, -'.partial'.length) : name;
      if (!isId('trn', key)) continue;
      const info = await stat(path.join(this.root, name)).catch(() => undefined);
      if (!info) continue;
      if (name !== key) {
        // A copy cut short by a crash: never a job's audio.
        await rm(path.join(this.root, name), { force: true });
        continue;
      }
      out.push({ key, storedAt: info.mtime });
    }
    return out;
  }
}
