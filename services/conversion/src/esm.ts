/**
 * Loads an ES module (node-llama-cpp) from this CommonJS package. `import()` stays a real
 * dynamic import under tsc (module node16) and under the tests' swc transform
 * (`module.ignoreDynamic` in jest.config.js), which would otherwise turn it into `require()`.
 *
 * (It used to be `new Function('specifier', 'return import(specifier)')`: under jest, code made
 * by `new Function` resolved its import() against whichever test file's environment compiled that
 * source first — after the rest of the suite, a torn-down one — so the llama.cpp tests failed
 * unless they ran in a jest process of their own.)
 */
export function importEsm<T>(specifier: string): Promise<T> {
  return import(specifier) as Promise<T>;
}
