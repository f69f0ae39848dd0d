/**
 * A copy of an upload's audio on disk, kept while `language` may still follow the audio: if it
 * does, the transcription is started again from this copy with that language. Written at the
 * upload's pace (memory stays flat for 500 MB) and always removed by the request that made it.
 * A spool that cannot be written (a full disk) is given up, not the upload: it is only needed
 * in the rare case of a late `language`.
 */
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';

export class AudioSpool {
  private failed = false;
  private removed = false;

  private constructor(
    private readonly dir: string,
    private readonly file: string,
    private readonly out: WriteStream,
  ) {
    out.on('error', () => {
      this.failed = true;
    });
  }

  /** In `parent` (default the OS temp dir, TMPDIR). */
  static async create(parent = tmpdir()): Promise<AudioSpool> {
    const dir = await mkdtemp(path.join(parent, 'murmur-upload-'));
    const file = path.join(dir, 'audio');
    return new AudioSpool(dir, file, createWriteStream(file));
  }

  /** Appends `chunk`; resolves once the disk has caught up enough to take more. Never rejects. */
  write(chunk: Buffer): Promise<void> {
    if (this.failed || this.removed) return Promise.resolve();
    if (this.out.write(chunk)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.out.off('drain', done);
        this.out.off('error', done);
        this.out.off('close', done);
        resolve();
      };
      this.out.on('drain', done);
      this.out.on('error', done);
      this.out.on('close', done);
    });
  }

  /** Flushes the copy; false when it could not be written whole. */
  async finish(): Promise<boolean> {
    if (this.failed || this.removed) return false;
    await new Promise<void>((resolve) => this.out.end(() => resolve()));
    return !this.failed;
  }

  /** The audio again, from the start. */
  read(): Readable {
    return createReadStream(this.file, { highWaterMark: 256 * 1024 });
  }

  async remove(): Promise<void> {
    this.removed = true;
    this.out.destroy();
    await rm(this.dir, { recursive: true, force: true });
  }
}
