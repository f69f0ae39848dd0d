// The one swc transform of our TypeScript: the tests run every source through it
// (jest.config.js, @swc/jest) and `npm start` builds with it (scripts/transpile.js). Type
// checking is tsc's (`npm test`, `npm run build`): swc only strips the types.
'use strict';

/**
 * swc's options for a package: CommonJS like tsc's `node16` output for ours, ES modules for a
 * package whose package.json says `"type": "module"` (the SDKs). `ignoreDynamic` keeps
 * `import()` a real dynamic import (node-llama-cpp and whisper.node are loaded that way), as tsc does.
 */
function swcOptions(moduleType = 'commonjs') {
  return {
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: moduleType === 'es6' ? { type: 'es6' } : { type: 'commonjs', ignoreDynamic: true },
  };
}

module.exports = { swcOptions };
