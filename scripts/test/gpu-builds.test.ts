/**
 * The speech and language engines run on the CPU only (whisper.node with `useGpu: false`,
 * node-llama-cpp with `gpu: false`), so their GPU builds are never installed: package.json
 * overrides each of their CUDA and Vulkan builds, for every platform, with an empty package, and
 * the lock holds none of them (docs/decisions/0043-cpu-only-engine-builds.md).
 * An engine upgrade that adds a GPU build fails here until it is overridden too.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

const REPO = path.resolve(__dirname, '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { overrides?: Record<string, string> };
const lock = JSON.parse(fs.readFileSync(path.join(REPO, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { optionalDependencies?: Record<string, string> }>;
};

const ENGINES = ['node_modules/node-llama-cpp', 'node_modules/@fugood/whisper.node'];
/** A CUDA or Vulkan build (Metal is the only build node-llama-cpp has for Apple silicon). */
const GPU_BUILD = /-(cuda|vulkan)(-ext)?$/;
const EMPTY = 'npm:empty-npm-package@1.0.0';

const gpuBuilds = ENGINES.flatMap((engine) => Object.keys(lock.packages[engine]?.optionalDependencies ?? {}).filter((name) => GPU_BUILD.test(name)));

describe('GPU builds of the engines', () => {
  it('are known: both engines list some in the lock', () => {
    for (const engine of ENGINES) expect(lock.packages[engine]).toBeDefined();
    expect(gpuBuilds).toEqual(expect.arrayContaining(['@node-llama-cpp/linux-x64-cuda', '@fugood/node-whisper-linux-x64-vulkan']));
  });

  it('are each overridden with an empty package and absent from the lock', () => {
    for (const name of gpuBuilds) {
      expect({ name, override: pkg.overrides?.[name] }).toEqual({ name, override: EMPTY });
      expect(Object.keys(lock.packages).filter((key) => key.endsWith(`node_modules/${name}`))).toEqual([]);
    }
  });

  it('are never asked for by the code that loads the engines', () => {
    const llama = fs.readFileSync(path.join(REPO, 'services/conversion/src/engines/llama.ts'), 'utf8');
    const whisper = fs.readFileSync(path.join(REPO, 'services/transcription/src/engines/whisper.ts'), 'utf8');
    expect(llama).toMatch(/getLlama\(\{[^}]*gpu: false/);
    expect(llama).toMatch(/gpuLayers: 0/);
    expect(whisper).toMatch(/initWhisper\(\{[^}]*useGpu: false/);
  });
});
