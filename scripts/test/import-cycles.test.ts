/**
 * No two files of a package's src/ import each other, directly or around a longer circle (issue
 * 12: library's store.ts ↔ store-*.ts was one; issue 31: the gateway's rest/ held a four-file one). The detector itself is tested on folders written
 * here, so the check over the real tree is known to bite.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

interface CycleChecker {
  findImportCycles(dir: string): string[][];
  packageSourceDirs(): string[];
}

const REPO = path.resolve(__dirname, '..', '..');
// The checker is plain JS (it runs without a build: `node scripts/import-cycles.js`); its exports are typed above.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { findImportCycles, packageSourceDirs } = require(path.join(REPO, 'scripts/import-cycles.js')) as CycleChecker;

describe('import cycles', () => {
  let dir: string;

  /** Writes a throwaway source folder: file name → content. */
  function folder(files: Record<string, string>): string {
    for (const [name, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      fs.writeFileSync(path.join(dir, name), text);
    }
    return dir;
  }

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'import-cycles-'));
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('finds a circle of type-only imports through a re-export (the shape library had)', () => {
    folder({
      'store.ts': "import { recordings } from './store-recordings';\nexport interface Row { id: string }\nexport const all = [recordings];\n",
      'store-recordings.ts': "import type { Row } from './store';\nexport const recordings = (r: Row) => r.id;\n",
      'index.ts': "export { all } from './store';\n",
    });
    expect(findImportCycles(dir)).toEqual([['store-recordings.ts', 'store.ts', 'store-recordings.ts']]);
  });

  it('finds a longer circle through a folder index and `export * from`', () => {
    folder({
      'a.ts': "export * from './sub';\n",
      'sub/index.ts': "import { c } from '../c';\nexport const b = c;\n",
      'c.ts': "import type {} from './a.js';\nexport const c = 1;\n",
    });
    expect(findImportCycles(dir)).toEqual([['a.ts', 'sub/index.ts', 'c.ts', 'a.ts']]);
  });

  it('finds nothing when imports run one way, and ignores package imports', () => {
    folder({
      'store.ts': "import type { Database } from '@murmur/kit';\nexport interface Row { db: Database }\n",
      'store-recordings.ts': "import type { Row } from './store';\nexport const recordings = (r: Row) => r;\n",
      'store-postgres.ts': "import { recordings } from './store-recordings';\nexport const all = [recordings];\n",
    });
    expect(findImportCycles(dir)).toEqual([]);
  });

  it('finds none in the src/ of any package', () => {
    const dirs = packageSourceDirs();
    expect(dirs.map((d) => path.relative(REPO, d))).toEqual(
      expect.arrayContaining(['services/billing/src', 'services/library/src', 'services/contract/src', 'gateway/src', 'app/src', 'launcher/src', 'bench/src']),
    );
    const cycles = dirs.flatMap((d) => findImportCycles(d).map((cycle) => `${path.relative(REPO, d)}: ${cycle.join(' → ')}`));
    expect(cycles).toEqual([]);
  });
});
