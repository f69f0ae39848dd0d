// Prints the run's totals as one plain closing line ("N passed, N failed, N skipped"), the form
// CI reads to tell a run that tested something from one that ran nothing. A test file that fails
// with no failing test (an error in afterAll — the OpenAPI check reports that way —, a syntax
// error, a failed import) counts as one failure of its own, and is named on the line before, so
// "0 failed" means that nothing failed.
'use strict';

/** Test files that failed although none of their tests did. */
function suitesFailedOutsideTests(results) {
  return results.testResults.filter((file) => file.numFailingTests === 0 && (file.testExecError || file.failureMessage));
}

class SummaryReporter {
  onRunComplete(_contexts, results) {
    const outside = suitesFailedOutsideTests(results);
    const failed = results.numFailedTests + outside.length;
    const skipped = results.numPendingTests + results.numTodoTests;
    const names = outside.map((file) => file.testFilePath).join(', ');
    const note = outside.length ? `\njest: ${outside.length} file(s) failed outside any test: ${names}` : '';
    process.stderr.write(`${note}\njest: ${results.numPassedTests} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}

module.exports = SummaryReporter;
