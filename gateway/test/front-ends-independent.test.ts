/**
 * The two front ends stand side by side on one floor: `rest/` and `mcp/` never import each
 * other, and the floors they share (`http/`, and `upload/`, the upload machinery both read
 * audio with) import neither. Read from the sources' import
 * statements (static, dynamic and require), resolved against each file's folder.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const SRC = resolve(__dirname, '../src');

/** Every .ts file under `dir`. */
function sourcesOf(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourcesOf(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm;

/** The folder of src/ (rest, mcp, http, …) each relative import of `file` lands in. */
function foldersImportedBy(file: string): Array<{ specifier: string; folder: string }> {
  const text = readFileSync(file, 'utf8');
  const out: Array<{ specifier: string; folder: string }> = [];
  for (const match of text.matchAll(SPECIFIER)) {
    const specifier = match[1]!;
    if (!specifier.startsWith('.')) continue;
    const target = relative(SRC, resolve(dirname(file), specifier));
    out.push({ specifier, folder: target.split(sep)[0]! });
  }
  return out;
}

/** `from`'s files that import a file of one of `forbidden`, as "file: specifier". */
function crossImports(from: string, forbidden: string[]): string[] {
  return sourcesOf(join(SRC, from)).flatMap((file) =>
    foldersImportedBy(file)
      .filter(({ folder }) => forbidden.includes(folder))
      .map(({ specifier }) => `${relative(SRC, file)}: ${specifier}`),
  );
}

describe('the gateway front ends', () => {
  it('finds the imports it checks (the scan reads real import statements)', () => {
    const handler = foldersImportedBy(join(SRC, 'mcp/handler.ts')).map((i) => i.folder);
    expect(handler).toEqual(expect.arrayContaining(['http', 'mcp']));
    const routes = foldersImportedBy(join(SRC, 'rest/routes.ts')).map((i) => i.folder);
    expect(routes).toEqual(expect.arrayContaining(['http', 'operations', 'rest']));
  });

  it('REST never imports MCP', () => {
    expect(crossImports('rest', ['mcp'])).toEqual([]);
  });

  it('MCP never imports REST', () => {
    expect(crossImports('mcp', ['rest'])).toEqual([]);
  });

  it('the shared floor (http/) imports neither front end', () => {
    expect(crossImports('http', ['rest', 'mcp'])).toEqual([]);
  });

  it('the upload machinery (upload/) imports neither front end, and both read audio through it', () => {
    expect(crossImports('upload', ['rest', 'mcp'])).toEqual([]);
    const restUses = sourcesOf(join(SRC, 'rest')).some((f) => foldersImportedBy(f).some(({ folder }) => folder === 'upload'));
    const mcpUses = sourcesOf(join(SRC, 'mcp')).some((f) => foldersImportedBy(f).some(({ folder }) => folder === 'upload'));
    expect({ restUses, mcpUses }).toEqual({ restUses: true, mcpUses: true });
  });
});
