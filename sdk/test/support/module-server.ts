/**
 * A page that imports the SDK's browser entry as a browser loads it without a bundler (there is
 * none in this repository): the built ES modules of sdk/dist over HTTP, bare specifiers resolved by
 * an import map from each package's `exports` (the `browser` condition first, as bundlers pick
 * it), and a CommonJS dependency wrapped as an ES module — what a bundler does with it. A module
 * the page cannot resolve (a `node:` import, say) fails the page's module script.
 */
import * as fs from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');
const requireHere = createRequire(__filename);

type Exports = string | { [condition: string]: Exports };

/** The file a package's `exports` gives for `.` under `conditions` (the first matching key, in the map's order). */
export function resolveExport(packageDir: string, conditions: readonly string[]): string {
  const pkg = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as { exports?: Record<string, Exports>; main?: string; module?: string };
  let target: Exports | undefined = pkg.exports?.['.'];
  while (target && typeof target === 'object') {
    const key: string | undefined = Object.keys(target).find((k) => conditions.includes(k));
    target = key === undefined ? undefined : target[key];
  }
  return path.join(packageDir, typeof target === 'string' ? target : (pkg.main ?? 'index.js'));
}

/** A CommonJS file as an ES module: its `require`s imported first, its exports named. */
function commonJsAsModule(file: string): string {
  const source = fs.readFileSync(file, 'utf8');
  const requireThere = createRequire(file);
  const specifiers = [...new Set([...source.matchAll(/require\((["'])([^"']+)\1\)/g)].map((m) => m[2]!))];
  const names = Object.keys(requireThere(file) as object).filter((n) => /^[A-Za-z_$][\w$]*$/.test(n) && n !== 'default' && n !== '__esModule');
  return [
    ...specifiers.map((s, i) => `import __dep${i} from ${JSON.stringify(`/cjs${requireThere.resolve(s)}`)};`),
    `const __deps = {${specifiers.map((s, i) => `${JSON.stringify(s)}: __dep${i}`).join(', ')}};`,
    'const module = { exports: {} };',
    `(function (module, exports, require) {\n${source}\n}).call(module.exports, module, module.exports, (s) => __deps[s]);`,
    'export default module.exports;',
    ...names.map((n) => `export const ${n} = module.exports.${n};`),
  ].join('\n');
}

export interface ModuleServer {
  url: string;
  /** Every path the page asked for. */
  requested: string[];
  close(): Promise<void>;
}

/**
 * Serves `/` (a page whose module script imports `@murmur/sdk` and sets `window.sdk`), the files
 * under sdk/ and node_modules/ at their paths, CommonJS at `/cjs/<file>`, and `extra` paths.
 */
export async function startModuleServer(extra: Record<string, Buffer> = {}): Promise<ModuleServer> {
  const browserConditions = ['browser', 'import', 'default'];
  const at = (file: string) => `/${path.relative(ROOT, file).split(path.sep).join('/')}`;
  const importMap = {
    imports: {
      '@murmur/sdk': at(resolveExport(path.join(ROOT, 'sdk'), browserConditions)),
      'eventsource-parser': at(resolveExport(path.join(ROOT, 'node_modules/eventsource-parser'), browserConditions)),
      // A CommonJS package: wrapped as a bundler would.
      standardwebhooks: `/cjs${requireHere.resolve('standardwebhooks')}`,
    },
  };
  const page = [
    '<!doctype html><html><head><meta charset="utf-8"><title>sdk</title>',
    `<script type="importmap">${JSON.stringify(importMap)}</script>`,
    "<script type=\"module\">import * as sdk from '@murmur/sdk'; window.sdk = sdk;</script>",
    '</head><body></body></html>',
  ].join('\n');
  const requested: string[] = [];
  const server: Server = createServer((req, res) => {
    const pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    requested.push(pathname);
    const js = (body: string) => res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(body);
    if (pathname === '/') return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
    if (extra[pathname]) return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(extra[pathname]);
    const file = pathname.startsWith('/cjs/') ? pathname.slice('/cjs'.length) : path.join(ROOT, pathname);
    const allowed = [path.join(ROOT, 'sdk/dist'), path.join(ROOT, 'node_modules')].some((dir) => path.resolve(file).startsWith(dir + path.sep));
    if (!allowed || !fs.existsSync(file)) return void res.writeHead(404).end();
    if (pathname.startsWith('/cjs/')) return js(commonJsAsModule(file));
    js(fs.readFileSync(file, 'utf8'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requested,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
