// The totals `npm test` (tools/test-all.mjs) adds up from each part's JSON report, skips
// included: a skipped test is neither passed nor failed, and the closing line says how many
// there were (`N passed, N failed, N skipped`) with their names above it, so none goes unseen.
// A failed test is named there too, with its error's first line: a log that keeps only its tail
// (CI's) still says which test failed and why.

/** Passed, failed and skipped tests of a Vitest JSON report (`--reporter=json`). */
export function vitestTotals(report) {
  const skippedNames = [];
  const failedNames = [];
  for (const file of report.testResults ?? []) {
    for (const t of file.assertionResults ?? []) {
      if (t.status === 'failed') failedNames.push(withReason(t.fullName, t.failureMessages?.[0]));
      else if (t.status !== 'passed') skippedNames.push(t.fullName);
    }
    // A file that fails before its tests run (an import error, a hook) has no failed test.
    if (
      file.status === 'failed' &&
      !(file.assertionResults ?? []).some((t) => t.status === 'failed')
    )
      failedNames.push(withReason(file.name, file.message));
  }
  return {
    passed: report.numPassedTests,
    failed: report.numFailedTests,
    skipped: report.numPendingTests + report.numTodoTests,
    skippedNames,
    failedNames,
  };
}

// A terminal colour code (ESC [ … m), as reporters leave them in failure messages.
const COLOUR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

/** `name: the message's first non-empty line`, colour codes taken out, at most 300 characters. */
function withReason(name, message) {
  const line = String(message ?? '')
    .replace(COLOUR, '')
    .split('\n')
    .find((l) => l.trim());
  return line ? `${name}: ${line.trim().slice(0, 300)}` : name;
}

/** The same for a Playwright JSON report (`reporter: json`); a flaky test counts as failed. */
export function playwrightTotals(report) {
  const skippedNames = [];
  const failedNames = [];
  const walk = (suite, path) => {
    for (const spec of suite.specs ?? []) {
      for (const t of spec.tests ?? []) {
        const name = [...path, spec.title, t.projectName].filter(Boolean).join(' › ');
        if (t.status === 'skipped') skippedNames.push(name);
        if (t.status === 'unexpected' || t.status === 'flaky') {
          const error = (t.results ?? []).find((r) => r.error)?.error;
          failedNames.push(withReason(`${name} (${t.status})`, error?.message));
        }
      }
    }
    for (const inner of suite.suites ?? []) walk(inner, [...path, inner.title]);
  };
  for (const suite of report.suites ?? []) walk(suite, [suite.title]);
  const { expected, unexpected, flaky, skipped } = report.stats;
  return { passed: expected, failed: unexpected + flaky, skipped, skippedNames, failedNames };
}

/** The run's last line. */
export function closingLine({ passed, failed, skipped }) {
  return `${passed} passed, ${failed} failed, ${skipped} skipped`;
}
