/**
 * The preload `npm start` gives its children (launcher/src/own-source-maps.ts): a stack through
 * our compiled code names the TypeScript line, one through a dependency's the JavaScript it runs
 * (its source map is never read, so never kept in the heap).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import * as ts from 'typescript';

const PRELOAD = path.resolve(__dirname, '../dist/own-source-maps.js');
const SOURCE = 'export function boom(): never {\n  throw new Error("boom");\n}\n';

/** Compiles SOURCE into `dir/boom.js` with its source map beside it, as tsc -b does. */
function compiled(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const out = ts.transpileModule(SOURCE, { fileName: 'boom.ts', compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, sourceMap: true } });
  writeFileSync(path.join(dir, 'boom.js'), out.outputText);
  writeFileSync(path.join(dir, 'boom.js.map'), out.sourceMapText!);
  return path.join(dir, 'boom.js');
}

/** The frame of `boom` in the stack of each module's error, in a fresh process started with `args`. */
function boomFrames(args: string[], modules: string[]): string[] {
  const script = `for (const m of ${JSON.stringify(modules)}) { try { require(m).boom(); } catch (e) { console.log(e.stack.split('\\n')[1].trim()); } }`;
  const run = spawnSync(process.execPath, [...args, '-e', script], { encoding: 'utf8' });
  expect(run.stderr).toBe('');
  return run.stdout.trim().split('\n');
}

describe('own source maps', () => {
  let dir: string;
  let ours: string;
  let dependency: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'murmur-source-maps-'));
    ours = compiled(path.join(dir, 'services', 'x', 'dist'));
    dependency = compiled(path.join(dir, 'node_modules', 'dep', 'dist'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('maps our compiled code to its TypeScript and leaves a dependency as it runs', () => {
    const [own, dep] = boomFrames(['--require', PRELOAD], [ours, dependency]);
    expect(own).toMatch(/services\/x\/dist\/boom\.ts:2:/);
    expect(dep).toMatch(/node_modules\/dep\/dist\/boom\.js:\d+:/);
  });

  it('maps nothing without it', () => {
    expect(boomFrames([], [ours])[0]).toMatch(/boom\.js:\d+:/);
  });
});
