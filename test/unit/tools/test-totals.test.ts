// `npm test`'s closing line counts skips (tools/test-totals.mjs): a skipped test is neither
// passed nor failed, and is named. The reports below have the shape each reporter writes (the
// Vitest one as `--reporter=json` wrote it for test/firefox/webgpu.test.ts skipping its case).
import { describe, expect, it } from 'vitest';
import { closingLine, playwrightTotals, vitestTotals } from '../../../tools/test-totals.mjs';

const WEBGPU = 'the engine on WebGPU answers like WASM and the float64 reference';

describe("npm test's totals", () => {
  it('a Vitest report: skipped tests counted and named, apart from passed and failed', () => {
    const report = {
      numTotalTests: 4,
      numPassedTests: 2,
      numFailedTests: 0,
      numPendingTests: 1,
      numTodoTests: 1,
      testResults: [
        {
          assertionResults: [
            { fullName: 'engine a', status: 'passed' },
            { fullName: 'engine b', status: 'passed' },
            { fullName: WEBGPU, status: 'skipped' },
            { fullName: 'later', status: 'todo' },
          ],
        },
      ],
    };
    const totals = vitestTotals(report);
    expect(totals).toEqual({
      passed: 2,
      failed: 0,
      skipped: 2,
      skippedNames: [WEBGPU, 'later'],
      failedNames: [],
    });
    expect(closingLine(totals)).toBe('2 passed, 0 failed, 2 skipped');
  });

  it('a Playwright report: skipped from its stats, named through nested suites; flaky is failed', () => {
    const test = (projectName: string, status: string) => ({ projectName, status });
    const report = {
      stats: { expected: 3, unexpected: 1, flaky: 1, skipped: 2 },
      suites: [
        {
          title: 'engine.spec.ts',
          specs: [{ title: 'loads', tests: [test('wasm', 'expected'), test('webgpu', 'skipped')] }],
          suites: [
            {
              title: 'errors',
              specs: [{ title: 'a 422', tests: [test('page', 'skipped')] }],
            },
          ],
        },
      ],
    };
    const totals = playwrightTotals(report);
    expect(totals).toEqual({
      passed: 3,
      failed: 2,
      skipped: 2,
      skippedNames: ['engine.spec.ts › loads › webgpu', 'engine.spec.ts › errors › a 422 › page'],
      failedNames: [],
    });
    expect(closingLine(totals)).toBe('3 passed, 2 failed, 2 skipped');
  });

  it("failed tests named with their error's first line, so a log cut to its tail says which", () => {
    const vitest = vitestTotals({
      numTotalTests: 2,
      numPassedTests: 1,
      numFailedTests: 1,
      numPendingTests: 0,
      numTodoTests: 0,
      testResults: [
        {
          name: '/r/test/unit/a.test.ts',
          status: 'failed',
          assertionResults: [
            { fullName: 'a passes', status: 'passed' },
            {
              fullName: 'a fits',
              status: 'failed',
              failureMessages: [
                '\n\u001b[31mAssertionError: expected 0.9 to be >= 0.95\u001b[39m\n    at x.ts:1',
              ],
            },
          ],
        },
        // A file that failed to load has no test of its own that failed.
        {
          name: '/r/test/unit/b.test.ts',
          status: 'failed',
          message: 'Cannot find module x',
          assertionResults: [],
        },
      ],
    });
    expect(vitest.failedNames).toEqual([
      'a fits: AssertionError: expected 0.9 to be >= 0.95',
      '/r/test/unit/b.test.ts: Cannot find module x',
    ]);
    const playwright = playwrightTotals({
      stats: { expected: 0, unexpected: 1, flaky: 1, skipped: 0 },
      suites: [
        {
          title: 'trained.spec.ts',
          specs: [
            {
              title: 'clause',
              tests: [
                {
                  projectName: 'wasm',
                  status: 'unexpected',
                  results: [{ error: { message: 'Error: 9e-4 > 3e-4' } }],
                },
                {
                  projectName: 'js',
                  status: 'flaky',
                  results: [{ error: { message: 'Timeout' } }, {}],
                },
              ],
            },
          ],
        },
      ],
    });
    expect(playwright.failedNames).toEqual([
      'trained.spec.ts › clause › wasm (unexpected): Error: 9e-4 > 3e-4',
      'trained.spec.ts › clause › js (flaky): Timeout',
    ]);
  });
});
