/**
 * The app's side stays out of the public gateway: the gateway neither depends on this package
 * nor carries a program of its own besides the server, so its image (which copies gateway/dist and
 * the gateway's production closure) holds no admin CLI and no seed content. And the other way:
 * the app, the launcher and the bench take their gRPC clients from the kit, so none of them
 * imports the public gateway (the admin CLI once loaded all of it for its clients).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

const REPO = path.resolve(__dirname, '..', '..');
const GATEWAY_SRC = path.join(REPO, 'gateway', 'src');

function sourcesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => path.join(dir, f));
}

describe('the boundary between the gateway and the app', () => {
  it('the gateway package declares no dependency on @murmur/app, of any kind', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'gateway', 'package.json'), 'utf8')) as Record<string, unknown>;
    const declared = ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies'].flatMap((field) =>
      Object.keys((pkg[field] as Record<string, string> | undefined) ?? {}).map((name) => `${field}: ${name}`),
    );
    expect(declared.filter((d) => d.endsWith(' @murmur/app'))).toEqual([]);
  });

  it('no gateway source imports the app, by name or by path', () => {
    const offenders = sourcesUnder(GATEWAY_SRC).filter((f) => /['"](@murmur\/app(\/[^'"]*)?|(\.\.\/)+app\/[^'"]*)['"]/.test(fs.readFileSync(f, 'utf8')));
    expect(offenders.map((f) => path.relative(REPO, f))).toEqual([]);
  });

  it('the gateway compiles one program, its server: no CLI or seeding rides along in its image', () => {
    const programs = sourcesUnder(GATEWAY_SRC).filter((f) => path.basename(f) === 'main.ts' || /\bseed/.test(path.basename(f)));
    expect(programs.map((f) => path.relative(REPO, f))).toEqual(['gateway/src/main.ts']);
  });
});

describe('the app, the launcher and the bench stand apart from the gateway', () => {
  const FRONT = ['app', 'launcher', 'bench'];
  const GATEWAY_IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"](@murmur\/gateway(\/[^'"]*)?|(\.\.\/)+gateway\/[^'"]*)['"]/m;

  it.each(FRONT)('%s declares no dependency on @murmur/gateway', (dir) => {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO, dir, 'package.json'), 'utf8')) as Record<string, unknown>;
    const declared = ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies'].flatMap((field) => Object.keys((pkg[field] as Record<string, string> | undefined) ?? {}));
    expect(declared).toContain('@murmur/kit');
    expect(declared).not.toContain('@murmur/gateway');
  });

  it.each(FRONT)('no %s source imports the gateway, by name or by path', (dir) => {
    const sources = sourcesUnder(path.join(REPO, dir, 'src'));
    expect(sources.length).toBeGreaterThan(0);
    expect(sources.filter((f) => GATEWAY_IMPORT.test(fs.readFileSync(f, 'utf8'))).map((f) => path.relative(REPO, f))).toEqual([]);
  });
});
