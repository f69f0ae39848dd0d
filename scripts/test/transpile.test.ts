/**
 * `npm start`'s build (scripts/transpile.js): every project of a tsconfig.json's references,
 * src → dist with swc, CommonJS or ES modules by package.json, only what changed, with source
 * maps naming the sources as tsc does. Run on a scratch workspace of two small projects; the
 * outputs are then run by Node.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const { transpile } = require('../transpile.js') as { transpile: (o: { root: string }) => Promise<number> };

function write(root: string, file: string, text: string) {
  fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
  fs.writeFileSync(path.join(root, file), text);
}

describe('scripts/transpile.js', () => {
  let root: string;

  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'murmur-transpile-'));
    write(root, 'tsconfig.json', JSON.stringify({ files: [], references: [{ path: 'cjs' }, { path: 'esm' }] }));
    for (const dir of ['cjs', 'esm']) {
      write(root, `${dir}/tsconfig.json`, JSON.stringify({ compilerOptions: { rootDir: 'src', outDir: 'dist' }, include: ['src'] }));
    }
    write(root, 'cjs/package.json', JSON.stringify({ name: 'cjs', private: true }));
    write(root, 'cjs/src/limits.ts', 'export enum Unit { Second = 1, Minute = 60 }\nexport const LIMIT: number = 10 * Unit.Minute;\n');
    write(root, 'cjs/src/deep/main.ts', [
      "import { LIMIT, Unit } from '../limits';",
      'interface Answer { limit: number; unit: string }',
      'const answer: Answer = { limit: LIMIT, unit: Unit[Unit.Minute]! };',
      'console.log(JSON.stringify(answer));',
      '',
    ].join('\n'));
    write(root, 'cjs/src/types.d.ts', 'declare const nothing: never;\n');
    write(root, 'esm/package.json', JSON.stringify({ name: 'esm', private: true, type: 'module' }));
    write(root, 'esm/src/index.ts', "import { twice } from './twice.js';\nconsole.log(twice(21) satisfies number);\n");
    write(root, 'esm/src/twice.ts', 'export const twice = (n: number): number => n * 2;\n');
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  const node = (file: string) => execFileSync(process.execPath, [path.join(root, file)], { encoding: 'utf8' }).trim();

  it('builds every project into runnable CommonJS or ES modules, with source maps', async () => {
    expect(await transpile({ root })).toBe(4);
    expect(node('cjs/dist/deep/main.js')).toBe('{"limit":600,"unit":"Minute"}');
    expect(node('esm/dist/index.js')).toBe('42');
    expect(fs.existsSync(path.join(root, 'cjs/dist/types.js'))).toBe(false);
    const map = JSON.parse(fs.readFileSync(path.join(root, 'cjs/dist/deep/main.js.map'), 'utf8'));
    expect(map.sources).toEqual(['../../src/deep/main.ts']);
    expect(map.sourcesContent).toBeUndefined();
    expect(fs.readFileSync(path.join(root, 'cjs/dist/deep/main.js'), 'utf8')).toMatch(/\n\/\/# sourceMappingURL=main\.js\.map\n$/);
  });

  it('writes only what changed since', async () => {
    expect(await transpile({ root })).toBe(0);
    const later = new Date(Date.now() + 2000);
    write(root, 'cjs/src/limits.ts', 'export enum Unit { Second = 1, Minute = 60 }\nexport const LIMIT: number = 2 * Unit.Minute;\n');
    fs.utimesSync(path.join(root, 'cjs/src/limits.ts'), later, later);
    expect(await transpile({ root })).toBe(1);
    expect(node('cjs/dist/deep/main.js')).toBe('{"limit":120,"unit":"Minute"}');
  });
});
