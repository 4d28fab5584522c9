#!/usr/bin/env node
// `npm test`: the whole suite. The build, unit tests (Vitest, Node), then browser tests
// (Playwright driving Debian's Chromium, the consumer-app test among them), then the Firefox
// suite (Vitest and puppeteer-core driving Debian's Firefox ESR, test/firefox). It never skips
// a browser: no Chromium or no Firefox is a failure that says what to install. After each
// part, a process the suite left running is a failure that names it
// (tools/leftover-processes.mjs). The last line is the total, `N passed, N failed, N skipped`,
// after the name of each skipped and each failed test (tools/test-totals.mjs).
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { chromiumAvailable, CHROMIUM_INSTALL_HINT } from './chromium.mjs';
import { firefoxAvailable, FIREFOX_INSTALL_HINT } from './firefox.mjs';
import { canScanProcesses, processesMarked, RUN_MARKER } from './leftover-processes.mjs';
import { closingLine, playwrightTotals, vitestTotals } from './test-totals.mjs';

/** A free loopback port for the browser tests' dev server (so a running one never collides). */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

mkdirSync('test-results', { recursive: true });
let passed = 0;
let failed = 0;
let skipped = 0;
const skippedNames = [];
const failedNames = [];

/** Adds a part's totals; its skipped and failed tests are named before the closing line. */
function add(part, totals) {
  passed += totals.passed;
  failed += totals.failed;
  skipped += totals.skipped;
  for (const name of totals.skippedNames) skippedNames.push(`${part}: ${name}`);
  for (const name of totals.failedNames) failedNames.push(`${part}: ${name}`);
}

/** Counts a failure that is not a test's (a step, a missing report), named like a test's. */
function fail(what) {
  failed += 1;
  failedNames.push(what);
}

// Every process the suite starts inherits this run's id (see leftover-processes.mjs).
const runId = randomUUID();
process.env[RUN_MARKER] = runId;

/** Fails the run for each process `step` left behind, names it, and ends it. */
async function checkLeftovers(step) {
  if (!canScanProcesses()) {
    console.error(`[leftovers] cannot list processes on ${process.platform}: not checked`);
    return;
  }
  // Processes that are exiting as the runner exits get a moment to finish.
  let left = processesMarked(runId);
  for (let i = 0; i < 20 && left.length > 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
    left = processesMarked(runId);
  }
  if (left.length === 0) return;
  console.error(`\n[leftovers] the ${step} left ${left.length} process(es) running:`);
  for (const p of left) {
    fail(`the ${step} left a process running: ${p.command.slice(0, 200)}`);
    console.error(`  pid ${p.pid}: ${p.command}`);
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}

function run(cmd, args) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', env: process.env });
  return r.status ?? 1;
}

function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}

// 0. The build: the CLI tests run the compiled Node product (bin/clef-web.mjs -> dist/node) and
// the consumer-app test packs dist/ into a fresh app.
if (run('npm', ['run', 'build']) !== 0) fail('npm run build exited non-zero');

// 1. Unit tests.
rmSync('test-results/unit.json', { force: true });
const unitStatus = run('npx', [
  'vitest',
  'run',
  '--reporter=default',
  '--reporter=json',
  '--outputFile.json=test-results/unit.json',
]);
const unit = readJson('test-results/unit.json');
if (unit) {
  add('unit', vitestTotals(unit));
  if (unit.numTotalTests === 0) fail('unit: no tests ran');
} else {
  fail('unit: no JSON report (test-results/unit.json)');
}
if (unitStatus !== 0 && (!unit || unit.numFailedTests === 0))
  fail('unit: vitest exited non-zero with no failed test');
await checkLeftovers('unit tests');

// 2. Browser tests. Both browsers' suites load the tiny model packages the dev server serves.
if (run('npx', ['tsx', 'tools/models/build-tiny.ts']) !== 0)
  fail('tools/models/build-tiny.ts exited non-zero');
if (run('node', ['tools/sw/build-routes.mjs']) !== 0)
  fail('tools/sw/build-routes.mjs exited non-zero');
process.env.CLEF_TEST_PORT ??= String(await freePort());
if (!chromiumAvailable()) {
  console.error(`\n${CHROMIUM_INSTALL_HINT}\n`);
  fail('browser: no Chromium (see above)');
} else {
  rmSync('test-results/browser.json', { force: true });
  const browserStatus = run('npx', ['playwright', 'test']);
  const browser = existsSync('test-results/browser.json')
    ? readJson('test-results/browser.json')
    : null;
  if (browser?.stats) {
    add('browser', playwrightTotals(browser));
  } else {
    fail('browser: no JSON report (test-results/browser.json)');
  }
  if (browserStatus !== 0 && (!browser?.stats || browser.stats.unexpected === 0))
    fail('browser: playwright exited non-zero with no failed test');
  await checkLeftovers('browser tests');
}

// 3. The Firefox suite (vitest.firefox.config.ts).
if (!firefoxAvailable()) {
  console.error(`\n${FIREFOX_INSTALL_HINT}\n`);
  fail('firefox: no Firefox ESR (see above)');
} else {
  rmSync('test-results/firefox.json', { force: true });
  const firefoxStatus = run('npx', [
    'vitest',
    'run',
    '--config',
    'vitest.firefox.config.ts',
    '--reporter=default',
    '--reporter=json',
    '--outputFile.json=test-results/firefox.json',
  ]);
  const firefox = readJson('test-results/firefox.json');
  if (firefox) {
    add('firefox', vitestTotals(firefox));
    if (firefox.numTotalTests === 0) fail('firefox: no tests ran');
  } else {
    fail('firefox: no JSON report (test-results/firefox.json)');
  }
  if (firefoxStatus !== 0 && (!firefox || firefox.numFailedTests === 0))
    fail('firefox: vitest exited non-zero with no failed test');
  await checkLeftovers('Firefox tests');
}

if (skippedNames.length > 0)
  console.log(`\n${skippedNames.map((n) => `[skipped] ${n}`).join('\n')}`);
if (failedNames.length > 0) console.log(`\n${failedNames.map((n) => `[failed] ${n}`).join('\n')}`);
console.log(`\n${closingLine({ passed, failed, skipped })}`);
process.exit(failed === 0 ? 0 : 1);
