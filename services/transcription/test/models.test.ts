/**
 * `npm run models -- fetch …` against a local HTTP server standing in for Hugging Face: good
 * downloads land atomically, every bad one (wrong checksum, 404, truncated body, no checksum
 * at all) fails with a clear message and leaves no file behind.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { Writable } from 'node:stream';
import { fetchModel, KNOWN_MODELS, modelFileName, ModelFetchError } from '../src/models';
import { runModelsCli } from '../src/models-cli';
import { tempDir } from './fixtures';

const MODEL = Buffer.alloc(3 * 1024 * 1024 + 17, 7);
MODEL.write('lmgg', 0, 'ascii');
const sha256Of = (data: Buffer) => createHash('sha256').update(data).digest('hex');
const SHA256 = sha256Of(MODEL);
const SHA1 = createHash('sha1').update(MODEL).digest('hex');
const WRONG = 'f'.repeat(64);

type Route = (req: IncomingMessage, res: ServerResponse) => void;
const routes = new Map<string, Route>();
let server: Server;
let base: string;
let tmp: Awaited<ReturnType<typeof tempDir>>;
let dirCount = 0;
const newDir = () => path.join(tmp.dir, `models-${++dirCount}`);

const serveModel: Route = (_req, res) => {
  res.writeHead(200, { 'content-length': String(MODEL.length), 'content-type': 'application/octet-stream' });
  res.end(MODEL);
};
const serveText = (text: string): Route => (_req, res) => res.end(text);

beforeAll(async () => {
  server = createServer((req, res) => {
    // A client that stops reading (checksum refused, truncation test) may leave a write failing.
    res.on('error', () => undefined);
    const route = routes.get(req.url ?? '');
    if (route) route(req, res);
    else {
      res.writeHead(404);
      res.end('Entry not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  tmp = await tempDir('murmur-models-');
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await tmp.remove();
});
beforeEach(() => routes.clear());

async function files(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => []);
}

describe('fetchModel', () => {
  it('downloads, verifies the SHA-256 of the server’s .sha256 sidecar, and renames into place', async () => {
    routes.set('/ggml-tiny-test.bin', serveModel);
    routes.set('/ggml-tiny-test.bin.sha256', serveText(`${SHA256}  ggml-tiny-test.bin\n`));
    const dir = newDir();
    const progress: number[] = [];
    const got = await fetchModel({ name: 'tiny-test', dir, baseUrl: base, onProgress: (n, total) => (expect(total).toBe(MODEL.length), progress.push(n)) });
    expect(got).toMatchObject({ path: path.join(dir, 'ggml-tiny-test.bin'), bytes: MODEL.length, sha256: SHA256, verified: ['sha256 (sidecar)'], alreadyPresent: false });
    expect(sha256Of(await readFile(got.path))).toBe(SHA256);
    expect(await files(dir)).toEqual(['ggml-tiny-test.bin']);
    expect(progress[progress.length - 1]).toBe(MODEL.length);
    expect(progress.length).toBeGreaterThan(1);
  });

  it('accepts --sha256 instead of a sidecar, and checks the whisper.cpp SHA-1 of a known name', async () => {
    routes.set('/ggml-known.bin', serveModel);
    const dir = newDir();
    const got = await fetchModel({ name: 'known', dir, baseUrl: base, sha256: SHA256.toUpperCase(), knownModels: { known: { sha1: SHA1 } } });
    expect(got.verified).toEqual(['sha1 (whisper.cpp table)', 'sha256 (--sha256)']);
  });

  it('trusts Hugging Face’s X-Linked-Etag (SHA-256 of the LFS object) across its redirect', async () => {
    routes.set('/ggml-hf.bin', (_req, res) => {
      res.writeHead(302, { location: '/cdn/ggml-hf.bin', 'x-linked-etag': `"${SHA256}"` });
      res.end();
    });
    routes.set('/cdn/ggml-hf.bin', serveModel);
    const got = await fetchModel({ name: 'hf', dir: newDir(), baseUrl: base });
    expect(got.verified).toEqual(['sha256 (X-Linked-Etag)']);
  });

  it.each<[string, () => void, Partial<Parameters<typeof fetchModel>[0]>, RegExp]>([
    [
      'a SHA-256 mismatch',
      () => {
        routes.set('/ggml-m.bin', serveModel);
        routes.set('/ggml-m.bin.sha256', serveText(WRONG));
      },
      {},
      /checksum mismatch for ggml-m\.bin: sha256/,
    ],
    ['a --sha256 mismatch', () => routes.set('/ggml-m.bin', serveModel), { sha256: WRONG }, /expected f{64} \(--sha256\)/],
    ['a SHA-1 mismatch with the table', () => routes.set('/ggml-m.bin', serveModel), { knownModels: { m: { sha1: '0'.repeat(40) } } }, /sha1 .* whisper\.cpp publishes 0{40}/],
    ['a 404', () => undefined, { sha256: SHA256 }, /no model "m" at .*ggml-m\.bin \(HTTP 404\)/],
    ['a 500', () => routes.set('/ggml-m.bin', (_q, res) => (res.writeHead(500), res.end())), { sha256: SHA256 }, /answered HTTP 500/],
    [
      'a truncated body',
      () =>
        routes.set('/ggml-m.bin', (_req, res) => {
          res.writeHead(200, { 'content-length': String(MODEL.length) });
          res.write(MODEL.subarray(0, 1024 * 1024), () => res.destroy());
        }),
      { sha256: SHA256 },
      /broke off after \d+ bytes|truncated/,
    ],
    ['no checksum from anywhere', () => routes.set('/ggml-m.bin', serveModel), {}, /no checksum is known for ggml-m\.bin: pass --sha256/],
    ['a malformed --sha256', () => routes.set('/ggml-m.bin', serveModel), { sha256: 'abc' }, /64 hex characters/],
  ])('fails on %s and leaves no file behind', async (_name, setup, extra, message) => {
    setup();
    const dir = newDir();
    const err = await fetchModel({ name: 'm', dir, baseUrl: base, knownModels: {}, ...extra }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelFetchError);
    expect((err as Error).message).toMatch(message);
    expect(await files(dir)).toEqual([]);
  });

  it('leaves an existing model alone unless forced', async () => {
    const dir = newDir();
    routes.set('/ggml-x.bin', serveModel);
    await fetchModel({ name: 'x', dir, baseUrl: base, sha256: SHA256 });
    await writeFile(path.join(dir, 'ggml-x.bin'), 'old');
    expect((await fetchModel({ name: 'x', dir, baseUrl: base, sha256: SHA256 })).alreadyPresent).toBe(true);
    expect(await readFile(path.join(dir, 'ggml-x.bin'), 'utf8')).toBe('old');
    await fetchModel({ name: 'x', dir, baseUrl: base, sha256: SHA256, force: true });
    expect(sha256Of(await readFile(path.join(dir, 'ggml-x.bin')))).toBe(SHA256);
  });

  it.each([
    ['base.en', 'ggml-base.en.bin'],
    ['ggml-small.bin', 'ggml-small.bin'],
  ])('names %s → %s', (name, file) => expect(modelFileName(name)).toBe(file));

  it.each(['../etc/passwd', 'a/b', '', '.hidden'])('refuses the name %j', (name) => expect(() => modelFileName(name)).toThrow(ModelFetchError));

  it('ships the SHA-1 table of whisper.cpp models/README.md', () => {
    expect(KNOWN_MODELS['base.en']?.sha1).toBe('137c40403d78fd54d454da0f9bd998f78703390c');
    for (const { sha1 } of Object.values(KNOWN_MODELS)) expect(sha1).toMatch(/^[0-9a-f]{40}$/);
  });
});

describe('models CLI', () => {
  const capture = () => {
    let text = '';
    const stream = new Writable({
      write(chunk: Buffer, _enc, cb) {
        text += chunk.toString();
        cb();
      },
    });
    return { stream, text: () => text };
  };

  it('fetch prints progress on stderr and exits 0', async () => {
    routes.set('/ggml-cli.bin', serveModel);
    routes.set('/ggml-cli.bin.sha256', serveText(SHA256));
    const dir = newDir();
    const err = capture();
    const code = await runModelsCli(['fetch', 'cli'], { MURMUR_MODELS_DIR: dir, MURMUR_MODELS_BASE_URL: base }, err.stream);
    expect(code).toBe(0);
    expect(err.text()).toMatch(/ggml-cli\.bin {2}\d+\.\d \/ 3\.0 MiB {2}100%/);
    expect(err.text()).toContain('verified sha256 (sidecar)');
    expect(await files(dir)).toEqual(['ggml-cli.bin']);
  });

  it('fetch exits 1 with one line on a bad checksum', async () => {
    routes.set('/ggml-cli.bin', serveModel);
    const err = capture();
    const code = await runModelsCli(['fetch', 'cli', '--sha256', WRONG], { MURMUR_MODELS_DIR: newDir(), MURMUR_MODELS_BASE_URL: base }, err.stream);
    expect(code).toBe(1);
    expect(err.text()).toMatch(/^models: checksum mismatch/m);
  });

  it('prints usage and exits 2 without a command', async () => {
    const err = capture();
    expect(await runModelsCli([], { MURMUR_MODELS_DIR: newDir() }, err.stream)).toBe(2);
    expect(err.text()).toContain('usage: npm run models -- fetch <name>');
  });

  it('lists the installed models', async () => {
    const dir = newDir();
    routes.set('/ggml-l.bin', serveModel);
    await fetchModel({ name: 'l', dir, baseUrl: base, sha256: SHA256 });
    const err = capture();
    expect(await runModelsCli(['list'], { MURMUR_MODELS_DIR: dir }, err.stream)).toBe(0);
    expect(err.text()).toContain('ggml-l.bin  3.0 MiB');
  });
});
