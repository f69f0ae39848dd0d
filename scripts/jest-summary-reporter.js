// Prints the run's totals as one plain closing line ("N passed, N failed, N skipped"), the form
// CI reads to tell a run that tested something from one that ran nothing. A test file that fails
// with no failing test (an error in afterAll — the OpenAPI check reports that way —, a syntax
// error, a failed import) counts as one failure of its own, and is named on the line before, so
// "0 failed" means that nothing failed.
//
// Skipped tests cannot go quiet: every skipped (or todo) test that scripts/test/allowed-skips.json
// does not name is listed by file, and in CI (CI=true) the run fails on them — a test skipped for
// a missing server or tool proves nothing, and CI has every one. On a developer's machine the
// list is printed and the run keeps its result (the skipped groups said on stderr what to
// install). A run filtered by name (-t) skips the rest on purpose and is not judged.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const DEFAULT_LIST = path.join(__dirname, 'test', 'allowed-skips.json');

/** How many of the slowest files the closing lines name (where a long run's time went). */
const SLOWEST = 15;

/** The slowest files of the run, as "  123.4 s  gateway/test/x.test.ts" lines. */
function slowestFiles(results, rootDir) {
  return results.testResults
    .map((file) => ({ file: path.relative(rootDir, file.testFilePath).split(path.sep).join('/'), ms: (file.perfStats?.end ?? 0) - (file.perfStats?.start ?? 0) }))
    .sort((a, b) => b.ms - a.ms)
    .slice(0, SLOWEST)
    .map((f) => `${(f.ms / 1000).toFixed(1).padStart(7)} s  ${f.file}`);
}

/** Test files that failed although none of their tests did. */
function suitesFailedOutsideTests(results) {
  return results.testResults.filter((file) => file.numFailingTests === 0 && (file.testExecError || file.failureMessage));
}

/** Whether this run must fail on a skipped test (the same rule as kit's prerequisitesRequired). */
function strict(env = process.env) {
  const ci = String(env.CI ?? '').trim().toLowerCase();
  return ci !== '' && ci !== 'false' && ci !== '0';
}

/** The allowed skips: [{ file, test?, reason }], checked for form (a malformed list fails the run). */
function loadAllowed(file) {
  const list = JSON.parse(fs.readFileSync(file, 'utf8')).skips;
  if (!Array.isArray(list)) throw new Error(`${file}: "skips" must be a list`);
  for (const entry of list) {
    if (typeof entry.file !== 'string' || typeof entry.reason !== 'string' || entry.reason.trim() === '' || (entry.test !== undefined && typeof entry.test !== 'string')) {
      throw new Error(`${file}: every entry needs "file" and a "reason" (and "test" is a string when given): ${JSON.stringify(entry)}`);
    }
  }
  return list;
}

/** Every skipped or todo test of the run: { file (relative to rootDir), name }. */
function skippedTests(results, rootDir) {
  return results.testResults.flatMap((file) =>
    file.testResults
      .filter((t) => t.status === 'pending' || t.status === 'todo')
      .map((t) => ({ file: path.relative(rootDir, file.testFilePath).split(path.sep).join('/'), name: t.fullName })),
  );
}

/** The skipped tests no entry of `allowed` names. */
function unlistedSkips(skipped, allowed) {
  return skipped.filter((s) => !allowed.some((a) => a.file === s.file && (a.test === undefined || s.name === a.test || s.name.startsWith(`${a.test} `))));
}

class SummaryReporter {
  constructor(globalConfig = {}, options = {}) {
    this.rootDir = globalConfig.rootDir ?? process.cwd();
    this.filtered = Boolean(globalConfig.testNamePattern);
    this.listFile = options.allowedSkips ? path.resolve(this.rootDir, options.allowedSkips) : DEFAULT_LIST;
    this.error = undefined;
  }

  onRunComplete(_contexts, results) {
    const outside = suitesFailedOutsideTests(results);
    const failed = results.numFailedTests + outside.length;
    const skipped = results.numPendingTests + results.numTodoTests;
    const names = outside.map((file) => file.testFilePath).join(', ');
    const note = outside.length ? `\njest: ${outside.length} file(s) failed outside any test: ${names}` : '';
    const slow = results.testResults.length > SLOWEST ? `\njest: the slowest files\n${slowestFiles(results, this.rootDir).join('\n')}` : '';
    process.stderr.write(`${slow}${note}${this.judgeSkips(results)}\njest: ${results.numPassedTests} passed, ${failed} failed, ${skipped} skipped\n`);
  }

  /** The lines about skipped tests (empty when none is unlisted); sets the run's error in CI. */
  judgeSkips(results) {
    if (this.filtered) return '';
    let allowed;
    try {
      allowed = loadAllowed(this.listFile);
    } catch (err) {
      this.error = new Error(`the list of allowed skips cannot be read: ${err.message}`);
      return `\njest: ${this.error.message}`;
    }
    const unlisted = unlistedSkips(skippedTests(results, this.rootDir), allowed);
    if (unlisted.length === 0) return '';
    const byFile = new Map();
    for (const s of unlisted) byFile.set(s.file, [...(byFile.get(s.file) ?? []), s.name]);
    const lines = [...byFile].map(([file, tests]) => `  ${file}: ${tests.length} skipped (${tests.slice(0, 3).map((t) => JSON.stringify(t)).join(', ')}${tests.length > 3 ? ', …' : ''})`);
    const list = path.relative(this.rootDir, this.listFile) || this.listFile;
    const head = `jest: ${unlisted.length} test(s) skipped that ${list} does not allow (each skipped group said why on stderr):`;
    if (strict()) {
      this.error = new Error(`${unlisted.length} test(s) skipped outside ${list}`);
      return `\n${head}\n${lines.join('\n')}\njest: CI fails on these: give the tests what they need, or list them with a reason.`;
    }
    return `\n${head}\n${lines.join('\n')}\njest: CI would fail on these (CI=true); here they are only reported.`;
  }

  getLastError() {
    return this.error;
  }
}

module.exports = SummaryReporter;
module.exports.unlistedSkips = unlistedSkips;
module.exports.loadAllowed = loadAllowed;
