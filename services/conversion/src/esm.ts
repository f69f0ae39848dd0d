/**
 * Loads an ES module from this CommonJS package. A literal `import()` is not safe here: the
 * test transform (swc → CommonJS) rewrites it into `require()`, which cannot load ESM on
 * Node 20. A function built at run time keeps a real dynamic import under tsc and swc alike.
 */
// eslint-disable-next-line @typescript-eslint/no-implied-eval
const dynamicImport = new Function('specifier', 'return import(specifier)') as (specifier: string) => Promise<unknown>;

export function importEsm<T>(specifier: string): Promise<T> {
  return dynamicImport(specifier) as Promise<T>;
}
