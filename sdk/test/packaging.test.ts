/**
 * The packages as a developer gets them (issue 35): `npm pack` of @murmur/sdk and @murmur/ai-sdk
 * (built by `tsc -b`, which `npm test` runs first), their contents checked, then both tarballs
 * installed into a scratch project outside the repository — dependencies from the registry as
 * for any user — where an ES module and a CommonJS script call a live Murmur through them.
 */
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startSystem, type TestSystem } from '../../gateway/test/support/system';

const ROOT = path.resolve(__dirname, '../..');
const WAV = '/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav';

/** The ```ts blocks of a README: each is one example, run as it is printed. */
function examples(readme: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, readme), 'utf8');
  return [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
}
const NPM_TIMEOUT_MS = 240_000;

/**
 * Runs a script of the scratch project with Node. Asynchronously: the Murmur it calls runs in
 * this process, whose event loop a synchronous child would block.
 */
async function run(cwd: string, file: string, env: NodeJS.ProcessEnv): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [file], { cwd, env, encoding: 'utf8', timeout: 120_000 });
  return stdout;
}

interface Packed {
  filename: string;
  files: Array<{ path: string }>;
}

/** `npm pack` of a workspace into `dest`; answers what npm reports of it. */
function pack(workspace: string, dest: string): Packed {
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', dest], { cwd: path.join(ROOT, workspace), encoding: 'utf8', timeout: NPM_TIMEOUT_MS });
  return (JSON.parse(out) as Packed[])[0]!;
}

describe('the packed SDKs', () => {
  let sys: TestSystem;
  let key: string;
  let scratch: string;
  let sdk: Packed;
  let aiSdk: Packed;

  beforeAll(async () => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'murmur-sdk-scratch-'));
    sdk = pack('sdk', scratch);
    aiSdk = pack('ai-sdk', scratch);
    sys = await startSystem({ ai: true });
    key = (await sys.newUser('packaging@example.com')).key;
  }, NPM_TIMEOUT_MS);
  afterAll(async () => {
    await sys?.stop();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('hold the built code, its types, the README and package.json, and nothing else', () => {
    for (const packed of [sdk, aiSdk]) {
      const files = packed.files.map((f) => f.path);
      expect(files).toContain('package.json');
      expect(files).toContain('README.md');
      expect(files).toContain('dist/index.js');
      expect(files).toContain('dist/index.d.ts');
      for (const f of files) expect(f).toMatch(/^(package\.json|README\.md|dist\/.+\.(js|d\.ts))$/);
    }
    expect(sdk.files.map((f) => f.path)).toEqual(expect.arrayContaining(['dist/generated/openapi.d.ts', 'dist/browser.js', 'dist/browser.d.ts', 'dist/live.js']));
  });

  it('install into a project of their own and call a live Murmur from ESM and CommonJS', async () => {
    fs.writeFileSync(path.join(scratch, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }));
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', `./${sdk.filename}`, `./${aiSdk.filename}`], { cwd: scratch, stdio: 'pipe', timeout: NPM_TIMEOUT_MS });
    fs.writeFileSync(
      path.join(scratch, 'esm.js'),
      [
        "import { Murmur, NotFoundError } from '@murmur/sdk';",
        "import { createMurmur } from '@murmur/ai-sdk';",
        'const murmur = new Murmur();',
        'const usage = await murmur.usage();',
        "const missing = await murmur.recordings.get('rec_00000000000000000000000000').catch((e) => e);",
        "const model = createMurmur().transcription('default');",
        'console.log(JSON.stringify({ plan: usage.plan.id, notFound: missing instanceof NotFoundError, spec: model.specificationVersion }));',
      ].join('\n'),
    );
    fs.writeFileSync(path.join(scratch, 'cjs.cjs'), "const { Murmur } = require('@murmur/sdk');\nnew Murmur().me().then((me) => console.log(JSON.stringify({ object: me.object })));\n");
    const env = { ...process.env, MURMUR_API_KEY: key, MURMUR_BASE_URL: sys.baseUrl };
    const esm = JSON.parse(await run(scratch, 'esm.js', env));
    expect(esm).toEqual({ plan: 'free', notFound: true, spec: 'v4' });
    const cjs = JSON.parse(await run(scratch, 'cjs.cjs', env));
    expect(cjs).toEqual({ object: 'user' });
    // What a bundler for browsers or workers resolves (Node's --conditions stands in for it), and Node itself.
    fs.writeFileSync(path.join(scratch, 'resolve.js'), "console.log(import.meta.resolve('@murmur/sdk'));\n");
    const resolved = async (...flags: string[]) => (await promisify(execFile)(process.execPath, [...flags, 'resolve.js'], { cwd: scratch, encoding: 'utf8' })).stdout.trim();
    expect(await resolved('--conditions=browser')).toMatch(/\/node_modules\/@murmur\/sdk\/dist\/browser\.js$/);
    expect(await resolved('--conditions=worker')).toMatch(/\/dist\/browser\.js$/);
    expect(await resolved()).toMatch(/\/node_modules\/@murmur\/sdk\/dist\/index\.js$/);
  }, NPM_TIMEOUT_MS);

  it.each([['README.md'], ['sdk/README.md'], ['ai-sdk/README.md']])('runs every example of %s against the live Murmur', async (readme) => {
    // The AI SDK itself, as its README says to install it (from the registry, as for any user).
    if (!fs.existsSync(path.join(scratch, 'node_modules', 'ai'))) {
      execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', 'ai@7'], { cwd: scratch, stdio: 'pipe', timeout: NPM_TIMEOUT_MS });
    }
    fs.copyFileSync(WAV, path.join(scratch, 'standup.wav'));
    const env = { ...process.env, MURMUR_API_KEY: key, MURMUR_BASE_URL: sys.baseUrl };
    const blocks = examples(readme);
    expect(blocks.length).toBeGreaterThan(0);
    for (const [i, code] of blocks.entries()) {
      const file = `example-${path.dirname(readme) === '.' ? 'root' : path.dirname(readme)}-${i}.ts`;
      fs.writeFileSync(path.join(scratch, file), code);
      try {
        await run(scratch, file, env);
      } catch (err) {
        const e = err as { stderr?: string; stdout?: string };
        throw new Error(`${readme}, example ${i + 1} failed:\n${code}\n--- stderr ---\n${e.stderr ?? ''}${e.stdout ?? ''}`);
      }
    }
  }, NPM_TIMEOUT_MS);
});
