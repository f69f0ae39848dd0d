/**
 * `@murmur/contract` holds rules, never I/O: its sources import nothing but each other and the
 * generated protobuf messages (for job statuses and the RPC table) — no node: module, no
 * database, Redis or gRPC library — and the kit, the runtime, does not hand its names out again,
 * so every rule has one home to import it from.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as contract from '@murmur/contract';
import * as kit from '@murmur/kit';

const SRC = path.resolve(__dirname, '../src');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
}

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm;

describe('the contract package', () => {
  it('imports only itself and @murmur/proto', () => {
    const files = sources(SRC);
    expect(files.map((f) => path.basename(f))).toEqual(expect.arrayContaining(['errors.ts', 'limits.ts', 'rpc-policy.ts']));
    const foreign = files.flatMap((file) =>
      [...fs.readFileSync(file, 'utf8').matchAll(SPECIFIER)]
        .map((m) => m[1]!)
        .filter((spec) => !spec.startsWith('./') && spec !== '@murmur/proto')
        .map((spec) => `${path.relative(SRC, file)}: ${spec}`),
    );
    expect(foreign).toEqual([]);
  });

  it('is not re-exported by the kit', () => {
    const both = Object.keys(contract).filter((name) => name in kit);
    expect(Object.keys(contract)).toEqual(expect.arrayContaining(['MurmurError', 'ERROR_CODES', 'MAX_PAGE_LIMIT', 'RPC_RULES']));
    expect(both).toEqual([]);
  });
});
