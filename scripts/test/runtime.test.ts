/**
 * `npm test` (and every npm script) runs on the Node.js the lock pins — the `node` devDependency,
 * first on npm scripts' PATH — not on whatever the machine has (Node 20 here): this file fails
 * when jest is started by an older node, as it was before package.json asked for Node 24.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

const REPO = path.resolve(__dirname, '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(fs.readFileSync(path.join(REPO, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string }>;
};

describe('runtime', () => {
  it('is the Node.js that package.json engines names and the lock pins', () => {
    process.stderr.write(`tests run on Node.js ${process.version} (${process.execPath})\n`);
    const wantedMajor = Number(/^>=\s*(\d+)/.exec(pkg.engines.node)?.[1]);
    expect(wantedMajor).toBeGreaterThanOrEqual(24);
    expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(wantedMajor);
    expect(process.versions.node).toBe(lock.packages['node_modules/node']?.version);
  });
});
