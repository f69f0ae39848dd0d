/**
 * `npm run models -- fetch diarization`: downloads the pinned diarization files
 * ({@link DIARIZATION_DOWNLOADS}) from sherpa-onnx's GitHub releases (or a mirror of them,
 * MURMUR_SHERPA_RELEASES_URL) into MURMUR_MODELS_DIR. Every download is checked against its
 * SHA-256 before anything is used; a .tar.bz2 is then read with unbzip2-stream and tar, and
 * only the entries named in the pin are written (never a path the archive chose), each to a
 * `.part` file renamed into place once its own checksum (when pinned) matches. A failed,
 * truncated or tampered download leaves nothing the service would load.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { once } from 'node:events';
import * as path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Parser, type ReadEntry } from 'tar';
import bz2 from 'unbzip2-stream';
import { ModelFetchError } from '../models';
import { DIARIZATION_DOWNLOADS, type PinnedDownload } from './models';

export const SHERPA_RELEASES_URL = 'https://github.com/k2-fsa/sherpa-onnx/releases/download';

export interface FetchDiarizationOptions {
  /** MURMUR_MODELS_DIR. */
  dir: string;
  /** Replaces {@link SHERPA_RELEASES_URL} at the start of each pinned URL (a mirror; tests). */
  releasesUrl?: string;
  /** Download again what is already there. */
  force?: boolean;
  onProgress?: (file: string, received: number, total: number | undefined) => void;
  /** The pins (default {@link DIARIZATION_DOWNLOADS}); tests pass their own. */
  downloads?: readonly PinnedDownload[];
  signal?: AbortSignal;
}

export interface FetchedDiarizationFile {
  /** Relative to the models folder. */
  file: string;
  bytes: number;
  alreadyPresent: boolean;
}

const exists = (file: string) => stat(file).then(() => true, () => false);
const partOf = (file: string) => `${file}.part-${randomBytes(4).toString('hex')}`;

/** Streams `url` into `dest` (a temp file), returning its SHA-256 and size. */
async function download(url: string, dest: string, label: string, opts: FetchDiarizationOptions): Promise<{ sha256: string; bytes: number }> {
  const res = await fetch(url, opts.signal ? { signal: opts.signal } : {});
  if (!res.ok || !res.body) {
    await res.body?.cancel();
    throw new ModelFetchError(`${url} answered HTTP ${res.status}`);
  }
  const lengthHeader = res.headers.get('content-length');
  const total = lengthHeader && /^\d+$/.test(lengthHeader) ? Number(lengthHeader) : undefined;
  const hash = createHash('sha256');
  let received = 0;
  const out = createWriteStream(dest);
  try {
    for await (const block of res.body as unknown as AsyncIterable<Uint8Array>) {
      hash.update(block);
      received += block.length;
      if (!out.write(block)) await once(out, 'drain');
      opts.onProgress?.(label, received, total);
    }
  } catch (err) {
    out.destroy();
    throw new ModelFetchError(`the download of ${label} broke off after ${received} bytes: ${(err as Error).message}`);
  }
  out.end();
  await once(out, 'finish');
  if (total !== undefined && received !== total) throw new ModelFetchError(`the download of ${label} is truncated: ${received} of ${total} bytes`);
  return { sha256: hash.digest('hex'), bytes: received };
}

function checkPin(label: string, got: { sha256: string; bytes?: number }, pin: { sha256?: string; bytes?: number }): void {
  if (pin.bytes !== undefined && got.bytes !== undefined && got.bytes !== pin.bytes) {
    throw new ModelFetchError(`${label} is ${got.bytes} bytes, the pinned file ${pin.bytes}`);
  }
  if (pin.sha256 && got.sha256 !== pin.sha256) throw new ModelFetchError(`checksum mismatch for ${label}: sha256 ${got.sha256}, pinned ${pin.sha256}`);
}

/** Writes the archive's pinned entries to temp files; returns them with their checksums. */
async function extractEntries(archive: string, d: PinnedDownload & { extract: NonNullable<PinnedDownload['extract']> }, dir: string): Promise<Array<{ part: string; dest: string; file: string; sha256: string; bytes: number }>> {
  const wanted = new Map(d.extract.map((e) => [e.entry.replace(/^\.\//, ''), e]));
  const written: Array<Promise<{ part: string; dest: string; file: string; sha256: string; bytes: number }>> = [];
  const parser = new Parser({
    strict: true,
    onReadEntry(entry: ReadEntry) {
      const pin = wanted.get(entry.path.replace(/^\.\//, ''));
      if (!pin || entry.type !== 'File') {
        entry.resume();
        return;
      }
      wanted.delete(pin.entry);
      const dest = path.join(dir, pin.file);
      const part = partOf(dest);
      const hash = createHash('sha256');
      let bytes = 0;
      // Both consumers attached at once, before the entry flows.
      const file = createWriteStream(part);
      entry.on('data', (b: Buffer) => {
        hash.update(b);
        bytes += b.length;
      });
      entry.pipe(file);
      written.push(
        new Promise((resolve, reject) => {
          file.on('error', reject);
          file.on('close', () => resolve({ part, dest, file: pin.file, sha256: hash.digest('hex'), bytes }));
        }),
      );
    },
  });
  await Promise.all(d.extract.map((e) => mkdir(path.dirname(path.join(dir, e.file)), { recursive: true })));
  try {
    await pipeline(createReadStream(archive), bz2(), parser as unknown as NodeJS.WritableStream);
    const files = await Promise.all(written);
    if (wanted.size) throw new ModelFetchError(`the archive ${path.basename(d.url)} lacks ${[...wanted.keys()].join(', ')}`);
    return files;
  } catch (err) {
    const settled = await Promise.allSettled(written);
    await Promise.all(settled.map((s) => (s.status === 'fulfilled' ? rm(s.value.part, { force: true }) : undefined)));
    if (err instanceof ModelFetchError) throw err;
    throw new ModelFetchError(`the archive ${path.basename(d.url)} could not be read: ${(err as Error).message}`);
  }
}

/** Downloads and installs what is missing (everything with `force`); see the module comment. */
export async function fetchDiarizationModels(opts: FetchDiarizationOptions): Promise<FetchedDiarizationFile[]> {
  const dir = path.resolve(opts.dir);
  await mkdir(dir, { recursive: true });
  const out: FetchedDiarizationFile[] = [];
  for (const d of opts.downloads ?? DIARIZATION_DOWNLOADS) {
    const targets = d.extract ? d.extract.map((e) => e.file) : d.file ? [d.file] : [];
    const present = await Promise.all(targets.map((f) => exists(path.join(dir, f))));
    if (!opts.force && present.every(Boolean)) {
      for (const file of targets) out.push({ file, bytes: (await stat(path.join(dir, file))).size, alreadyPresent: true });
      continue;
    }
    const url = opts.releasesUrl ? d.url.replace(SHERPA_RELEASES_URL, opts.releasesUrl.replace(/\/+$/, '')) : d.url;
    const label = path.basename(d.url);
    const downloaded = partOf(path.join(dir, label));
    try {
      checkPin(label, await download(url, downloaded, label, opts), d);
      if (d.extract) {
        const files = await extractEntries(downloaded, { ...d, extract: d.extract }, dir);
        try {
          for (const f of files) checkPin(f.file, f, d.extract.find((e) => e.file === f.file) ?? {});
          for (const f of files) {
            await rename(f.part, f.dest);
            out.push({ file: f.file, bytes: f.bytes, alreadyPresent: false });
          }
        } finally {
          await Promise.all(files.map((f) => rm(f.part, { force: true })));
        }
      } else if (d.file) {
        const dest = path.join(dir, d.file);
        await mkdir(path.dirname(dest), { recursive: true });
        await rename(downloaded, dest);
        out.push({ file: d.file, bytes: d.bytes, alreadyPresent: false });
      }
    } finally {
      await rm(downloaded, { force: true });
    }
  }
  return out;
}

/**
 * Any pinned files (the Silero VAD of live streams, live/silero-vad.ts) by the same rules: checked
 * against their SHA-256 before they are moved into place.
 */
export function fetchPinnedModels(downloads: readonly PinnedDownload[], opts: Omit<FetchDiarizationOptions, 'downloads' | 'releasesUrl'>): Promise<FetchedDiarizationFile[]> {
  return fetchDiarizationModels({ ...opts, downloads });
}
