/**
 * The playground (index.html) in Chromium, on the tiny random-weight package (a package URL:
 * the bundled clef-nano is the default, loaded by the offline test). One browser
 * context for the whole file, like one person's visits: its IndexedDB log and its service
 * worker carry over from test to test (loading a model is the slow part on a shared CPU).
 */
import { readFileSync } from 'node:fs';
import { expect, test, type BrowserContext, type Page } from '@playwright/test';
import { DEVICE_NAMES } from '../../src/core/devices.js';

let context: BrowserContext;
let page: Page;

const answers = () => page.locator('.answers-card [part~=answer]');
const logCount = () => page.getByTestId('log-count');

async function waitForModel(device = 'wasm') {
  await expect(page.getByTestId('device')).toContainText(device, { timeout: 120_000 });
}

async function decide() {
  const before = Number(await logCount().textContent());
  await page.getByRole('button', { name: 'Decide', exact: true }).click();
  await expect(logCount()).toHaveText(String(before + 1), { timeout: 60_000 });
}

/** Text of the prompt tokens whose tooltip names this role, joined. */
async function spanText(what: string): Promise<string> {
  return page.locator('.prompt .tok').evaluateAll(
    (els, what) =>
      els
        .filter((e) => (e.getAttribute('title') ?? '').includes(`· ${what} ·`))
        .map((e) => e.textContent!.replace(/↵/g, ''))
        .join(''),
    what,
  );
}

test.describe.configure({ mode: 'serial' });

test.beforeAll(async ({ browser }, testInfo) => {
  context = await browser.newContext({
    baseURL: testInfo.project.use.baseURL,
    acceptDownloads: true,
  });
  // The tiny fixture by URL (tests keep the random fixture) on the wasm device: WebGPU on
  // SwiftShader is slow, and the element tests cover it.
  await context.addInitScript(() => {
    if (!localStorage.getItem('clef-playground.settings')) {
      localStorage.setItem(
        'clef-playground.settings',
        JSON.stringify({ source: 'url', url: '/models/tiny/', device: 'wasm' }),
      );
    }
  });
  page = await context.newPage();
  page.on('dialog', (d) => void d.accept());
});

test.afterAll(async () => {
  await context.close();
});

test('decides with the tiny package and shows answers, spans, JSON and the log', async ({
  browserName: _browser,
}, testInfo) => {
  await page.goto('/');
  await waitForModel();
  await expect(page.getByTestId('tiny-warning')).toContainText('its answers mean nothing');
  await expect(page.getByTestId('device')).toContainText('asked for wasm');
  // The device select offers the engine's list (src/core/devices.ts), best first, after auto.
  const devices = page.getByRole('combobox', { name: 'Device' });
  await expect(devices.locator('option')).toHaveText(['auto', ...DEVICE_NAMES]);
  await expect(devices).toHaveValue('wasm');
  await expect(logCount()).toHaveText('0');
  // A fresh page starts on the CLINC routing example; this test uses the three-type one.
  await expect(page.locator('.question')).toHaveCount(1);
  await page.getByLabel('Example').selectOption('triage');

  await decide();
  await expect(answers()).toHaveCount(3);
  await expect(answers().nth(0)).toHaveAttribute('data-question', 'route');
  await expect(answers().nth(0).locator('[role=meter]')).toHaveCount(4);

  // The spans the head reads: the instructions as written, each option as its sorted-key JSON.
  expect(await spanText('route instructions')).toBe('Which team should handle this ticket?');
  expect(await spanText('route option billing')).toBe(
    '{"description":"Payments, refunds, invoices","option_id":"billing"}',
  );
  expect(await spanText('route option other')).toBe('{"option_id":"other"}');
  expect(await spanText('severity option 3')).toBe(
    '{"description":"urgent financial harm","option_id":"3"}',
  );
  // The page's own encoding has as many tokens as the engine read.
  const json = await page.locator('#json-panel').textContent();
  const response = JSON.parse(json!);
  const shownTokens = await page
    .locator('.prompt .tok')
    .evaluateAll((els) =>
      els.reduce(
        (n, e) => n + (e.getAttribute('title') ?? '').split(' · id ')[1]!.split(' ').length,
        0,
      ),
    );
  expect(shownTokens).toBe(response.usage.input_tokens);
  expect(Object.keys(response.answers)).toEqual(['route', 'urgent', 'severity']);

  await page.getByRole('tab', { name: 'Request' }).click();
  const request = JSON.parse((await page.locator('#json-panel').textContent())!);
  expect(request.model).toBe('clef-tiny');
  expect(Object.keys(request.questions)).toEqual(['route', 'urgent', 'severity']);

  // Latency breakdown from the decision's timings.
  await expect(page.getByRole('heading', { name: 'Latency' })).toBeVisible();
  await expect(page.locator('.latency')).toContainText('backbone');

  // The log survives a reload.
  await page.reload();
  await waitForModel();
  await expect(logCount()).toHaveText('1');
  await expect(page.locator('.log tbody tr')).toHaveCount(1);
  await expect(page.locator('.log tbody tr')).toContainText('clef-tiny');

  await decide();
  await page.screenshot({ path: testInfo.outputPath('playground.png'), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: testInfo.outputPath('playground-phone.png'), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 720 });
});

test('passes an axe-core accessibility check', async () => {
  await page.addScriptTag({ path: 'node_modules/axe-core/axe.min.js' });
  const violations = await page.evaluate(async () => {
    const result = await (window as any).axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v: any) => ({
      id: v.id,
      nodes: v.nodes.map((n: any) => n.target.join(' ')),
    }));
  });
  expect(violations).toEqual([]);
});

test('edits the raw request JSON, keeping question order as written', async () => {
  await page.getByRole('radio', { name: 'Raw JSON' }).click();
  const raw = page.getByLabel('Request JSON');
  await raw.fill(
    JSON.stringify({
      model: 'clef-tiny',
      state: { ticket: 'Parcel lost', amount: 1.5 },
      questions: { lost: { type: 'noul' }, grade: { type: 'score', criteria: ['bad', 'good'] } },
    }).replace('"questions":{', '"questions":{"7":{"type":"noul"},'),
  );
  await decide();
  await expect(answers()).toHaveCount(3);
  // An integer-like id stays first, as written (a JS object would have moved it anyway here,
  // so also check the engine's response text keeps the written order of all three).
  const ids = await answers().evaluateAll((els) => els.map((e) => e.getAttribute('data-question')));
  expect(ids).toEqual(['7', 'lost', 'grade']);
  expect(await spanText('lost instructions')).toBe('lost'); // no instructions: the id stands in
});

test('exports the log as JSONL and clears it', async () => {
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Export JSONL' }).click(),
  ]);
  expect(download.suggestedFilename()).toMatch(/^clef-decisions-\d{8}-\d{6}\.jsonl$/);
  const text = readFileSync((await download.path())!, 'utf8');
  const lines = text.trimEnd().split('\n');
  expect(lines).toHaveLength(3);
  const entries = lines.map((l) => JSON.parse(l));
  for (const e of entries) {
    // Decision records (docs/records.md), so `clef-web replay` can check them.
    expect(e.format).toBe('clef-web.decision-record');
    expect(e.surface).toBe('playground');
    expect(e.package.model).toBe('clef-tiny');
    expect(e.engine.device).toBe('wasm');
    expect(e.package.manifest_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(Number.isNaN(Date.parse(e.time))).toBe(false);
    expect(e.response.model).toBe(e.request.model);
  }
  expect(Object.keys(entries[0].request.questions)).toEqual(['route', 'urgent', 'severity']);
  // The raw request's number lexeme survives the export (1.5 stays 1.5, the id "7" stays first).
  expect(lines[2]).toContain('"amount":1.5');
  expect(lines[2]).toContain('"questions":{"7":');

  await page.getByRole('button', { name: 'Clear' }).click();
  await expect(logCount()).toHaveText('0');
  await expect(page.getByRole('button', { name: 'Export JSONL' })).toBeDisabled();
});

test('loads a package from a local folder', async () => {
  // An origin-private folder stands in for one picked with showDirectoryPicker: same handle type.
  const packageUrl = await page.evaluate(async () => {
    const root = await navigator.storage.getDirectory();
    const dir = await root.getDirectoryHandle('tiny-copy', { create: true });
    const manifest = await (await fetch('/models/tiny/manifest.json')).json();
    for (const path of ['manifest.json', ...manifest.files.map((f: any) => f.path)]) {
      const bytes = await (await fetch(`/models/tiny/${path}`)).arrayBuffer();
      const writable = await (await dir.getFileHandle(path, { create: true })).createWritable();
      await writable.write(bytes);
      await writable.close();
    }
    const app = document.querySelector('clef-playground') as any;
    await app.loadFromDirectory(dir);
    return app.info?.packageUrl ?? app.loadError?.message;
  });
  expect(packageUrl).toMatch(/\/local-packages\/[0-9a-f-]+\/$/);
  await waitForModel();
  await page.getByRole('radio', { name: 'Form' }).click();
  await decide();
  await expect(page.locator('.log tbody tr').first()).toContainText('clef-tiny');
});

test('works offline after the first visit, on the bundled clef-nano', async () => {
  if (page.url() === 'about:blank') await page.goto('/'); // when run on its own
  await page.getByRole('radio', { name: 'Bundled model' }).check();
  await page.getByRole('button', { name: 'Reload' }).click();
  await waitForModel();
  await expect(page.getByTestId('nano-note')).toContainText('CLINC150 intent names', {
    timeout: 120_000,
  });
  await expect(page.locator('[data-offline=ready]')).toBeVisible({ timeout: 120_000 });

  await context.setOffline(true);
  try {
    // Offline is real for the service worker too: something never cached cannot load.
    const uncached = await page.evaluate(() =>
      fetch(`/never-cached-${Date.now()}.txt`).then(
        (r) => `HTTP ${r.status}`,
        () => 'failed',
      ),
    );
    expect(uncached).toBe('failed');

    const before = Number(await logCount().textContent());
    await page.reload();
    await waitForModel();
    await expect(logCount()).toHaveText(String(before));
    // A fresh page starts on the CLINC routing example, which clef-nano was trained for: its
    // message reports a stolen card number (test/unit/package/clef-nano-examples.test.ts asks it too).
    await decide();
    await expect(answers()).toHaveCount(1);
    const response = JSON.parse((await page.locator('#json-panel').textContent())!);
    expect(response.model).toBe('clef-nano');
    expect(response.answers.route.choice).toBe('report_fraud');
  } finally {
    await context.setOffline(false);
  }
});
