/**
 * Downloads whisper.cpp ggml models into MURMUR_MODELS_DIR: `ggml-<name>.bin` from
 * MURMUR_MODELS_BASE_URL (Hugging Face's ggerganov/whisper.cpp by default), streamed to a
 * `.part` file beside the target while SHA-1 and SHA-256 are computed, verified, then renamed
 * into place (atomic on one file system), so a failed, truncated or tampered download never
 * leaves a file the service would load.
 *
 * Checksums, in this order of trust:
 * - SHA-1 of the models whisper.cpp publishes in its models/README.md (table below, copied
 *   from upstream): checked whenever the name is known;
 * - SHA-256 from `--sha256`, else from a `<file>.sha256` sidecar next to the file on the
 *   server, else from Hugging Face's `X-Linked-Etag` header (the SHA-256 of the LFS object);
 * At least one must be available and every available one must match; a model with no known
 * checksum at all is refused unless `--sha256` is given. No SHA-256 table is shipped because
 * upstream publishes none we could verify here.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { once } from 'node:events';
import * as path from 'node:path';
import { closeQuietly } from './audio-files';

export const DEFAULT_MODELS_BASE_URL = 'https://huggingface.co/ggerganov/whisper.cpp/resolve/main';

/** SHA-1 of the ggml models, from whisper.cpp models/README.md ("Available models"). */
export const KNOWN_MODELS: Readonly<Record<string, { sha1: string; size: string }>> = Object.freeze({
  tiny: { sha1: 'bd577a113a864445d4c299885e0cb97d4ba92b5f', size: '75 MiB' },
  'tiny.en': { sha1: 'c78c86eb1a8faa21b369bcd33207cc90d64ae9df', size: '75 MiB' },
  base: { sha1: '465707469ff3a37a2b9b8d8f89f2f99de7299dac', size: '142 MiB' },
  'base.en': { sha1: '137c40403d78fd54d454da0f9bd998f78703390c', size: '142 MiB' },
  small: { sha1: '55356645c2b361a969dfd0ef2c5a50d530afd8d5', size: '466 MiB' },
  'small.en': { sha1: 'db8a495a91d927739e50b3fc1cc4c6b8f6c2d022', size: '466 MiB' },
  'small.en-tdrz': { sha1: 'b6c6e7e89af1a35c08e6de56b66ca6a02a2fdfa1', size: '465 MiB' },
  medium: { sha1: 'fd9727b6e1217c2f614f9b698455c4ffd82463b4', size: '1.5 GiB' },
  'medium.en': { sha1: '8c30f0e44ce9560643ebd10bbe50cd20eafd3723', size: '1.5 GiB' },
  'large-v1': { sha1: 'b1caaf735c4cc1429223d5a74f0f4d0b9b59a299', size: '2.9 GiB' },
  'large-v2': { sha1: '0f4c8e34f21cf1a914c59d8b3ce882345ad349d6', size: '2.9 GiB' },
  'large-v2-q5_0': { sha1: '00e39f2196344e901b3a2bd5814807a769bd1630', size: '1.1 GiB' },
  'large-v3': { sha1: 'ad82bf6a9043ceed055076d0fd39f5f186ff8062', size: '2.9 GiB' },
  'large-v3-q5_0': { sha1: 'e6e2ed78495d403bef4b7cff42ef4aaadcfea8de', size: '1.1 GiB' },
  'large-v3-turbo': { sha1: '4af2b29d7ec73d781377bfd1758ca957a807e941', size: '1.5 GiB' },
  'large-v3-turbo-q5_0': { sha1: 'e050f7970618a659205450ad97eb95a18d69c9ee', size: '547 MiB' },
});

export interface FetchModelOptions {
  /** "base.en", "tiny", … (or a full "ggml-….bin" file name). */
  name: string;
  /** MURMUR_MODELS_DIR. */
  dir: string;
  baseUrl?: string;
  /** Expected SHA-256 (hex), e.g. from the model card; overrides the server's. */
  sha256?: string;
  /** Replace a file that is already there. */
  force?: boolean;
  /** Called as bytes arrive; `total` when the server sent Content-Length. */
  onProgress?: (received: number, total: number | undefined) => void;
  /** SHA-1 table (default {@link KNOWN_MODELS}); tests pass their own. */
  knownModels?: Readonly<Record<string, { sha1: string }>>;
  signal?: AbortSignal;
}

export interface FetchedModel {
  path: string;
  bytes: number;
  sha256: string;
  /** Which checksums were checked, e.g. ["sha1 (whisper.cpp table)", "sha256 (sidecar)"]. */
  verified: string[];
  /** True when the file was already there and nothing was downloaded. */
  alreadyPresent: boolean;
}

/** A download or verification failure with a message meant for the operator. */
export class ModelFetchError extends Error {}

const HEX64 = /^[0-9a-f]{64}$/;

/** The file name of a model name: "base.en" → "ggml-base.en.bin". */
export function modelFileName(name: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) throw new ModelFetchError(`not a model name: "${name}"`);
  return /^ggml-.+\.bin$/.test(name) ? name : `ggml-${name}.bin`;
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}

/** GET following redirects by hand, so headers of the hops (Hugging Face's X-Linked-Etag) are seen. */
async function getFollowing(url: string, signal: AbortSignal | undefined): Promise<{ res: Response; linkedSha256?: string }> {
  let current = url;
  let linkedSha256: string | undefined;
  for (let hop = 0; hop < 10; hop++) {
    const res = await fetch(current, { redirect: 'manual', ...(signal ? { signal } : {}) });
    const etag = (res.headers.get('x-linked-etag') ?? '').replace(/^W\//, '').replace(/"/g, '').toLowerCase();
    if (HEX64.test(etag)) linkedSha256 = etag;
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      await res.body?.cancel();
      current = new URL(location, current).toString();
      continue;
    }
    return { res, ...(linkedSha256 ? { linkedSha256 } : {}) };
  }
  throw new ModelFetchError(`too many redirects fetching ${url}`);
}

async function sidecarSha256(url: string, signal: AbortSignal | undefined): Promise<string | undefined> {
  const { res } = await getFollowing(`${url}.sha256`, signal);
  if (res.status === 404 || res.status === 403) {
    await res.body?.cancel();
    return undefined;
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new ModelFetchError(`${url}.sha256 answered HTTP ${res.status}`);
  }
  const token = (await res.text()).trim().split(/\s+/)[0]?.toLowerCase() ?? '';
  if (!HEX64.test(token)) throw new ModelFetchError(`${url}.sha256 does not hold a SHA-256`);
  return token;
}

/** Downloads, verifies and installs one model (see the module comment for the checksum rules). */
export async function fetchModel(opts: FetchModelOptions): Promise<FetchedModel> {
  const file = modelFileName(opts.name);
  const shortName = file.replace(/^ggml-/, '').replace(/\.bin$/, '');
  const dest = path.join(opts.dir, file);
  if (!opts.force && (await exists(dest))) {
    const size = (await stat(dest)).size;
    return { path: dest, bytes: size, sha256: '', verified: [], alreadyPresent: true };
  }
  const flagSha256 = opts.sha256?.trim().toLowerCase();
  if (flagSha256 !== undefined && !HEX64.test(flagSha256)) throw new ModelFetchError('--sha256 must be 64 hex characters');
  const baseUrl = (opts.baseUrl ?? DEFAULT_MODELS_BASE_URL).replace(/\/+$/, '');
  const url = `${baseUrl}/${file}`;
  const knownSha1 = (opts.knownModels ?? KNOWN_MODELS)[shortName]?.sha1;

  await mkdir(opts.dir, { recursive: true });
  const sidecar = flagSha256 ? undefined : await sidecarSha256(url, opts.signal);
  const { res, linkedSha256 } = await getFollowing(url, opts.signal);
  if (!res.ok || !res.body) {
    await res.body?.cancel();
    throw new ModelFetchError(res.status === 404 ? `no model "${opts.name}" at ${url} (HTTP 404)` : `${url} answered HTTP ${res.status}`);
  }
  const expected256 = flagSha256 ?? sidecar ?? linkedSha256;
  const source256 = flagSha256 ? '--sha256' : sidecar ? 'sidecar' : linkedSha256 ? 'X-Linked-Etag' : undefined;
  if (!expected256 && !knownSha1) {
    await res.body.cancel();
    throw new ModelFetchError(`no checksum is known for ${file}: pass --sha256 <hex> from the model's page`);
  }

  const lengthHeader = res.headers.get('content-length');
  const total = lengthHeader && /^\d+$/.test(lengthHeader) ? Number(lengthHeader) : undefined;
  const part = `${dest}.part-${randomBytes(4).toString('hex')}`;
  const sha1 = createHash('sha1');
  const sha256 = createHash('sha256');
  let received = 0;
  const out = createWriteStream(part);
  try {
    try {
      for await (const block of res.body as unknown as AsyncIterable<Uint8Array>) {
        sha1.update(block);
        sha256.update(block);
        received += block.length;
        if (!out.write(block)) await once(out, 'drain');
        opts.onProgress?.(received, total);
      }
    } catch (err) {
      throw new ModelFetchError(`the download of ${file} broke off after ${received} bytes: ${(err as Error).message}`);
    }
    out.end();
    await once(out, 'finish');
    if (total !== undefined && received !== total) {
      throw new ModelFetchError(`the download of ${file} is truncated: ${received} of ${total} bytes`);
    }
    const got1 = sha1.digest('hex');
    const got256 = sha256.digest('hex');
    const verified: string[] = [];
    if (knownSha1) {
      if (got1 !== knownSha1) throw new ModelFetchError(`checksum mismatch for ${file}: sha1 ${got1}, whisper.cpp publishes ${knownSha1}`);
      verified.push('sha1 (whisper.cpp table)');
    }
    if (expected256) {
      if (got256 !== expected256) throw new ModelFetchError(`checksum mismatch for ${file}: sha256 ${got256}, expected ${expected256} (${source256})`);
      verified.push(`sha256 (${source256})`);
    }
    await rename(part, dest);
    return { path: dest, bytes: received, sha256: got256, verified, alreadyPresent: false };
  } finally {
    await closeQuietly(out);
    await rm(part, { force: true });
  }
}
