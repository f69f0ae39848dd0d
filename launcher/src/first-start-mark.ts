/**
 * The mark of a first start that has not finished: made in the data folder before the demo user
 * is, removed once its key has been printed. While it is there, every `npm start` takes up the
 * first start again (first-run.ts): it completes the demo data and prints a new key, since the
 * key of an interrupted start was never shown. Written and removed durably (fsync of the file
 * and of the folder), so a crash right after cannot lose it.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import * as path from 'node:path';

export const FIRST_START_MARK_FILE = 'first-start.pending';

export interface FirstStartMark {
  readonly file: string;
  /** A first start began here and has not printed its key yet. */
  pending(): boolean;
  begin(): void;
  finish(): void;
}

export function firstStartMark(dataDir: string): FirstStartMark {
  const dir = path.resolve(dataDir);
  const file = path.join(dir, FIRST_START_MARK_FILE);
  const syncDir = () => {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  };
  return {
    file,
    pending: () => existsSync(file),
    begin() {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const fd = openSync(file, 'w', 0o600);
      try {
        writeSync(fd, 'The first `npm start` here has not finished: the next one completes the demo data and prints a new key.\n');
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      syncDir();
    },
    finish() {
      rmSync(file, { force: true });
      syncDir();
    },
  };
}
