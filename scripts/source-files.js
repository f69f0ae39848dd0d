// The TypeScript sources of a folder, as tsc takes them: shared by the scripts that read them
// (import-cycles.js, transpile.js). Plain JavaScript: it runs before anything is built.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

/** Every .ts file under `dir` (declaration files left out), absolute paths, sorted. */
function sourceFiles(dir) {
  const files = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sourceFiles(full));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) files.push(full);
  }
  return files.sort();
}

module.exports = { sourceFiles };
