// The totals `npm test` (tools/test-all.mjs) adds up from each part's JSON report, skips
// included: a skipped test is neither passed nor failed, and the closing line says how many
// there were (`N passed, N failed, N skipped`) with their names above it, so none goes unseen.

/** Passed, failed and skipped tests of a Vitest JSON report (`--reporter=json`). */
export function vitestTotals(report) {
  const skippedNames = [];
  for (const file of report.testResults ?? []) {
    for (const t of file.assertionResults ?? []) {
      if (t.status !== 'passed' && t.status !== 'failed') skippedNames.push(t.fullName);
    }
  }
  return {
    passed: report.numPassedTests,
    failed: report.numFailedTests,
    skipped: report.numPendingTests + report.numTodoTests,
    skippedNames,
  };
}

/** The same for a Playwright JSON report (`reporter: json`); a flaky test counts as failed. */
export function playwrightTotals(report) {
  const skippedNames = [];
  const walk = (suite, path) => {
    for (const spec of suite.specs ?? []) {
      for (const t of spec.tests ?? []) {
        if (t.status === 'skipped') {
          skippedNames.push([...path, spec.title, t.projectName].filter(Boolean).join(' › '));
        }
      }
    }
    for (const inner of suite.suites ?? []) walk(inner, [...path, inner.title]);
  };
  for (const suite of report.suites ?? []) walk(suite, [suite.title]);
  const { expected, unexpected, flaky, skipped } = report.stats;
  return { passed: expected, failed: unexpected + flaky, skipped, skippedNames };
}

/** The run's last line. */
export function closingLine({ passed, failed, skipped }) {
  return `${passed} passed, ${failed} failed, ${skipped} skipped`;
}
