'use strict';
// YAML 1.2 parsing with a line number for every path, for error messages.

// ---------------------------------------------------------------------------------------------
// YAML and line numbers

/** Parses YAML 1.2 (no merge keys, duplicate keys rejected) and maps each path to its line. */
function parseYaml(text) {
  const YAML = require('yaml');
  const lineCounter = new YAML.LineCounter();
  const doc = YAML.parseDocument(text, { lineCounter, merge: false, uniqueKeys: true, prettyErrors: true, strict: true });
  const lines = new Map();
  const lineAt = (node) => (node && node.range ? lineCounter.linePos(node.range[0]).line : undefined);
  const walk = (node, p) => {
    if (YAML.isMap(node)) {
      for (const pair of node.items) {
        const key = YAML.isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        const kp = p ? `${p}.${key}` : key;
        lines.set(kp, lineAt(pair.key));
        walk(pair.value, kp);
      }
    } else if (YAML.isSeq(node)) {
      node.items.forEach((item, i) => {
        lines.set(`${p}[${i}]`, lineAt(item));
        walk(item, `${p}[${i}]`);
      });
    } else if (YAML.isAlias(node)) {
      walk(node.resolve(doc), p);
    }
  };
  walk(doc.contents, '');
  const problems = [...doc.errors, ...doc.warnings].map((e) => ({ path: '', line: e.linePos?.[0]?.line, message: `YAML: ${e.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')}` }));
  return { value: problems.length ? undefined : doc.toJS({ maxAliasCount: 1000 }), lines, problems };
}

/** The nearest line known for `p` or one of its parents. */
function lineOf(lines, p) {
  let q = p;
  while (q) {
    if (lines.has(q)) return lines.get(q);
    const cut = Math.max(q.lastIndexOf('.'), q.lastIndexOf('['));
    if (cut <= 0) break;
    q = q.slice(0, cut);
  }
  return lines.get(q);
}

module.exports = { parseYaml, lineOf };
