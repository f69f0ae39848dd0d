/**
 * Kit's public surface (issue 12, item 7): `@murmur/kit` is production code only, every test
 * helper is `@murmur/kit/testing`, and nothing a service, the gateway or the launcher runs loads
 * the testing side — so no deployed process carries test code. The source is read as text, so
 * a type-only export or a test module pulled in by a production one is caught too.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as kit from '@murmur/kit';
import * as testing from '@murmur/kit/testing';

const ROOT = path.resolve(__dirname, '../../..');
const KIT_SRC = path.join(ROOT, 'services/kit/src');

/**
 * Outside production on purpose: the benchmark harness kills and restarts its own Postgres to
 * measure recovery (bench/src/faults.ts), and is never deployed.
 */
const HARNESSES = ['bench/src'];

/** The relative modules a kit source file imports or re-exports (`./x` → `x`). */
function relativeImports(file: string): string[] {
  const src = fs.readFileSync(path.join(KIT_SRC, `${file}.ts`), 'utf8');
  return [...src.matchAll(/(?:from|import)\s*\(?\s*'\.\/([\w-]+)'/g)].map((m) => m[1]!);
}

/** Every kit module `entry` loads, itself included. */
function reachable(entry: string): Set<string> {
  const seen = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const m = queue.pop()!;
    if (seen.has(m)) continue;
    seen.add(m);
    queue.push(...relativeImports(m));
  }
  return seen;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'dist' ? [] : sourceFiles(p);
    return /\.(ts|js|mjs|cjs)$/.test(e.name) ? [p] : [];
  });
}

/** `*\/src` and `services/*\/src`: every package's production source. */
function productionSourceDirs(): string[] {
  const parents = [ROOT, path.join(ROOT, 'services')];
  return parents
    .flatMap((parent) => fs.readdirSync(parent).map((name) => path.join(parent, name, 'src')))
    .filter((dir) => fs.existsSync(dir) && fs.statSync(dir).isDirectory());
}

const testingModules = relativeImports('testing');

describe("kit's public surface", () => {
  it('gathers the test helpers under @murmur/kit/testing', () => {
    expect(testingModules.length).toBeGreaterThan(0);
    for (const helper of ['openTestDatabase', 'failure', 'startTestPostgres', 'startTestRedis', 'realRedis', 'describeIfReal', 'ManualClock', 'callsServedOn']) {
      expect(Object.keys(testing)).toContain(helper);
    }
  });

  it('exports no test helper from @murmur/kit', () => {
    const both = Object.keys(testing).filter((name) => name in kit);
    expect(both).toEqual([]);
  });

  it('loads no test module from @murmur/kit or @murmur/kit/tracing, not even for a type', () => {
    for (const entry of ['index', 'tracing']) {
      const loaded = [...reachable(entry)].filter((m) => testingModules.includes(m) || m === 'testing');
      expect({ entry, loaded }).toEqual({ entry, loaded: [] });
    }
  });

  it('maps each subpath to its entry, types included', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'services/kit/package.json'), 'utf8')) as { exports: Record<string, unknown> };
    expect(pkg.exports).toEqual({
      '.': { types: './dist/index.d.ts', default: './dist/index.js' },
      './tracing': { types: './dist/tracing.d.ts', default: './dist/tracing.js' },
      './testing': { types: './dist/testing.d.ts', default: './dist/testing.js' },
      './package.json': './package.json',
    });
  });

  it('is never imported from its testing side, or deep, by production source', () => {
    const offenders: string[] = [];
    for (const dir of productionSourceDirs()) {
      const rel = path.relative(ROOT, dir);
      if (HARNESSES.includes(rel) || rel === 'services/kit/src') continue;
      for (const file of sourceFiles(dir)) {
        const src = fs.readFileSync(file, 'utf8');
        if (/['"]@murmur\/kit\/(testing|dist|src)\b/.test(src)) offenders.push(path.relative(ROOT, file));
      }
    }
    expect(productionSourceDirs().map((d) => path.relative(ROOT, d))).toEqual(expect.arrayContaining(['gateway/src', 'services/auth/src', 'launcher/src']));
    expect(offenders).toEqual([]);
  });
});
