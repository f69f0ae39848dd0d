// Prints the run's totals as one plain closing line ("N passed, N failed, N skipped"), the form
// CI reads to tell a run that tested something from one that ran nothing.
'use strict';

class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    process.stderr.write(`\njest: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${skipped} skipped\n`);
  }
}

module.exports = SummaryReporter;
