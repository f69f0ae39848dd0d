/**
 * Where the diarization models are looked for (`diarizationModelsOf`, so the service can name
 * what is missing) and `npm run models -- fetch diarization` against a local HTTP server laid
 * out like sherpa-onnx's releases: a .tar.bz2 (made here with Debian's tar and bzip2) and a
 * plain .onnx, pinned by the test. Good downloads land where `diarizationModelsOf` finds them
 * and load in the diarizer; a wrong archive, a wrong file inside it or a missing entry fails
 * with a clear message and leaves nothing behind. The CLI is checked against the real pins.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { Writable } from 'node:stream';
import { ModelFetchError } from '../src/models';
import { runModelsCli } from '../src/models-cli';
import { createDiarizer, diarizationModelsOf, EMBEDDING_FILE, SEGMENTATION_FILES, type PinnedDownload } from '../src/diarization';
import { fetchDiarizationModels } from '../src/diarization/fetch-models';
import { run, tempDir } from './fixtures';
import { standInEmbeddingModel, standInSegmentationModel } from './stand-in-models';

const sha256Of = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');
const SEGMENTATION = Buffer.from(standInSegmentationModel());
const EMBEDDING = Buffer.from(standInEmbeddingModel());
const ARCHIVE_DIR = 'sherpa-onnx-pyannote-segmentation-3-0';

let tmp: Awaited<ReturnType<typeof tempDir>>;
let server: Server;
let base: string;
let archive: Buffer;
let archiveWithoutModel: Buffer;
const routes = new Map<string, (req: IncomingMessage, res: ServerResponse) => void>();
const requests: string[] = [];
let dirs = 0;
const newDir = () => path.join(tmp.dir, `models-${++dirs}`);
const serve = (body: Buffer) => (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(200, { 'content-length': String(body.length) });
  res.end(body);
};

/** A .tar.bz2 of `files` (relative path → content), made with tar -cjf. */
async function tarBz2(name: string, files: Record<string, Buffer>): Promise<Buffer> {
  const root = path.join(tmp.dir, `${name}-src`);
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), content);
  }
  const out = path.join(tmp.dir, `${name}.tar.bz2`);
  await run('tar', ['-cjf', out, '-C', root, ...Object.keys(files)]);
  return readFile(out);
}

/** Pins of the test's files, served under the same paths as the real ones. */
function pins(over: { archive?: Buffer; modelSha256?: string } = {}): PinnedDownload[] {
  const a = over.archive ?? archive;
  return [
    {
      url: 'https://github.com/k2-fsa/sherpa-onnx/releases/download/speaker-segmentation-models/sherpa-onnx-pyannote-segmentation-3-0.tar.bz2',
      bytes: a.length,
      sha256: sha256Of(a),
      extract: [
        { entry: `${ARCHIVE_DIR}/model.int8.onnx`, file: SEGMENTATION_FILES[0], sha256: over.modelSha256 ?? sha256Of(SEGMENTATION) },
        { entry: `${ARCHIVE_DIR}/LICENSE`, file: `${ARCHIVE_DIR}/LICENSE` },
      ],
      license: 'test',
    },
    {
      url: `https://github.com/k2-fsa/sherpa-onnx/releases/download/speaker-recongition-models/${EMBEDDING_FILE}`,
      bytes: EMBEDDING.length,
      sha256: sha256Of(EMBEDDING),
      file: EMBEDDING_FILE,
      license: 'test',
    },
  ];
}

async function tree(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name))).sort();
}

beforeAll(async () => {
  tmp = await tempDir('murmur-diarization-models-');
  archive = await tarBz2('good', {
    [`${ARCHIVE_DIR}/model.int8.onnx`]: SEGMENTATION,
    [`${ARCHIVE_DIR}/LICENSE`]: Buffer.from('MIT License\n'),
    [`${ARCHIVE_DIR}/README.md`]: Buffer.from('not extracted\n'),
  });
  archiveWithoutModel = await tarBz2('no-model', { [`${ARCHIVE_DIR}/LICENSE`]: Buffer.from('MIT License\n') });
  server = createServer((req, res) => {
    res.on('error', () => undefined);
    requests.push(req.url ?? '');
    const route = routes.get(req.url ?? '');
    if (route) route(req, res);
    else {
      res.writeHead(404);
      res.end('Not Found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await tmp?.remove();
});
beforeEach(() => {
  routes.clear();
  requests.length = 0;
  routes.set('/speaker-segmentation-models/sherpa-onnx-pyannote-segmentation-3-0.tar.bz2', serve(archive));
  routes.set(`/speaker-recongition-models/${EMBEDDING_FILE}`, serve(EMBEDDING));
});

describe('diarizationModelsOf', () => {
  it('names both files when the folder has neither (or does not exist)', () => {
    expect(diarizationModelsOf(path.join(tmp.dir, 'nowhere'))).toEqual({ missing: [SEGMENTATION_FILES[0], EMBEDDING_FILE] });
  });

  it('names the embedding model when only the segmentation model is there', async () => {
    const dir = newDir();
    await mkdir(path.join(dir, ARCHIVE_DIR), { recursive: true });
    await writeFile(path.join(dir, SEGMENTATION_FILES[0]), SEGMENTATION);
    expect(diarizationModelsOf(dir)).toEqual({ missing: ['3dspeaker_speech_campplus_sv_en_voxceleb_16k.onnx'] });
  });

  it('takes the float segmentation model when there is no int8 one, and answers absolute paths', async () => {
    const dir = newDir();
    await mkdir(path.join(dir, ARCHIVE_DIR), { recursive: true });
    await writeFile(path.join(dir, SEGMENTATION_FILES[1]), SEGMENTATION);
    await writeFile(path.join(dir, EMBEDDING_FILE), EMBEDDING);
    expect(diarizationModelsOf(path.relative(process.cwd(), dir))).toEqual({
      segmentation: path.join(dir, ARCHIVE_DIR, 'model.onnx'),
      embedding: path.join(dir, EMBEDDING_FILE),
    });
  });

  it('does not take a folder for a model file', async () => {
    const dir = newDir();
    await mkdir(path.join(dir, SEGMENTATION_FILES[0]), { recursive: true });
    await writeFile(path.join(dir, EMBEDDING_FILE), EMBEDDING);
    expect(diarizationModelsOf(dir)).toEqual({ missing: [SEGMENTATION_FILES[0]] });
  });
});

describe('fetchDiarizationModels', () => {
  it('downloads, verifies and installs the pinned files where diarizationModelsOf finds them, and they load', async () => {
    const dir = newDir();
    const progress = new Set<string>();
    const got = await fetchDiarizationModels({ dir, releasesUrl: base, downloads: pins(), onProgress: (file) => progress.add(file) });
    expect(got).toEqual([
      { file: SEGMENTATION_FILES[0], bytes: SEGMENTATION.length, alreadyPresent: false },
      { file: `${ARCHIVE_DIR}/LICENSE`, bytes: 12, alreadyPresent: false },
      { file: EMBEDDING_FILE, bytes: EMBEDDING.length, alreadyPresent: false },
    ]);
    expect(await tree(dir)).toEqual([EMBEDDING_FILE, `${ARCHIVE_DIR}/LICENSE`, SEGMENTATION_FILES[0]].sort());
    expect(sha256Of(await readFile(path.join(dir, SEGMENTATION_FILES[0])))).toBe(sha256Of(SEGMENTATION));
    expect([...progress]).toEqual(['sherpa-onnx-pyannote-segmentation-3-0.tar.bz2', EMBEDDING_FILE]);
    const models = diarizationModelsOf(dir);
    if ('missing' in models) throw new Error(`missing ${models.missing.join(', ')}`);
    const diarizer = await createDiarizer(models);
    await diarizer.close();
  });

  it('fetches nothing that is already there, unless forced', async () => {
    const dir = newDir();
    await fetchDiarizationModels({ dir, releasesUrl: base, downloads: pins() });
    requests.length = 0;
    const again = await fetchDiarizationModels({ dir, releasesUrl: base, downloads: pins() });
    expect(again.every((f) => f.alreadyPresent)).toBe(true);
    expect(requests).toEqual([]);
    await fetchDiarizationModels({ dir, releasesUrl: base, downloads: pins(), force: true });
    expect(requests).toHaveLength(2);
  });

  it('refuses an archive whose checksum is not the pinned one, and leaves nothing', async () => {
    const dir = newDir();
    routes.set('/speaker-segmentation-models/sherpa-onnx-pyannote-segmentation-3-0.tar.bz2', serve(archiveWithoutModel));
    await expect(fetchDiarizationModels({ dir, releasesUrl: base, downloads: pins() })).rejects.toThrow(
      /sherpa-onnx-pyannote-segmentation-3-0\.tar\.bz2 is \d+ bytes, the pinned file \d+|checksum mismatch/,
    );
    expect(await tree(dir)).toEqual([]);
  });

  it('refuses a model inside the archive whose checksum is not the pinned one, and leaves nothing', async () => {
    const dir = newDir();
    const failure = fetchDiarizationModels({ dir, releasesUrl: base, downloads: pins({ modelSha256: 'f'.repeat(64) }) });
    await expect(failure).rejects.toBeInstanceOf(ModelFetchError);
    await expect(failure).rejects.toThrow(`checksum mismatch for ${SEGMENTATION_FILES[0]}`);
    expect(await tree(dir)).toEqual([]);
  });

  it('refuses an archive that lacks a pinned entry', async () => {
    const dir = newDir();
    routes.set('/speaker-segmentation-models/sherpa-onnx-pyannote-segmentation-3-0.tar.bz2', serve(archiveWithoutModel));
    await expect(fetchDiarizationModels({ dir, releasesUrl: base, downloads: pins({ archive: archiveWithoutModel }) })).rejects.toThrow(`lacks ${ARCHIVE_DIR}/model.int8.onnx`);
    expect(await tree(dir)).toEqual([]);
  });

  it('says which URL failed when the server has no such file', async () => {
    routes.clear();
    await expect(fetchDiarizationModels({ dir: newDir(), releasesUrl: base, downloads: pins() })).rejects.toThrow(/sherpa-onnx-pyannote-segmentation-3-0\.tar\.bz2 answered HTTP 404/);
  });
});

describe('models CLI: fetch diarization', () => {
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

  it('holds downloads to the real pins: other bytes under the release paths are refused with exit 1', async () => {
    const dir = newDir();
    const err = capture();
    const code = await runModelsCli(['fetch', 'diarization'], { MURMUR_MODELS_DIR: dir, MURMUR_SHERPA_RELEASES_URL: base }, err.stream);
    expect(code).toBe(1);
    expect(err.text()).toContain(`fetching the diarization models from ${base}`);
    expect(err.text()).toMatch(/^models: sherpa-onnx-pyannote-segmentation-3-0\.tar\.bz2 is \d+ bytes, the pinned file 6958444$/m);
    expect(await tree(dir)).toEqual([]);
  });

  it('takes no --sha256 for diarization, and list says what is missing', async () => {
    const err = capture();
    expect(await runModelsCli(['fetch', 'diarization', '--sha256', 'a'.repeat(64)], { MURMUR_MODELS_DIR: newDir() }, err.stream)).toBe(2);
    expect(err.text()).toContain('--sha256 does not apply to diarization');
    const list = capture();
    expect(await runModelsCli(['list'], { MURMUR_MODELS_DIR: newDir() }, list.stream)).toBe(0);
    expect(list.text()).toContain(`diarization: missing ${SEGMENTATION_FILES[0]}, ${EMBEDDING_FILE} (fetch diarization, 34.9 MiB)`);
  });
});
