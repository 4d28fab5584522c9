/**
 * The playground in Firefox ESR, as it ships (`vite build` into dist/app, served by `vite
 * preview` with the clef-web/vite plugin): the bundled clef-nano loads, decides, and once the
 * page says it is ready offline, it reloads and decides with its server gone (really gone: the
 * server is stopped, for the service worker too).
 */
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import type { Page } from 'puppeteer-core';
import { spawnGroup, stopGroup } from '../support/processes.js';
import { connectFirefox, type Firefox } from './support/firefox.js';

let firefox: Firefox;
let preview: ChildProcess | null = null;
let origin = '';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  if (!existsSync('dist/app/index.html')) {
    throw new Error('No dist/app: run "npm run build" first (npm test builds before it tests)');
  }
  const port = await freePort();
  origin = `http://localhost:${port}`;
  preview = spawnGroup(
    'node_modules/.bin/vite',
    ['preview', '--port', String(port), '--strictPort', '--host', 'localhost'],
    { stdio: 'ignore' },
  );
  for (let i = 0; ; i++) {
    const up = await fetch(`${origin}/`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (i === 300) throw new Error(`vite preview did not answer on ${origin}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  firefox = await connectFirefox();
});
afterAll(async () => {
  await firefox?.close();
  if (preview) await stopGroup(preview);
});

const text = (page: Page, selector: string) =>
  page.$eval(selector, (e) => (e.textContent ?? '').replace(/\s+/g, ' ').trim());

/** Waits for the model: auto runs the bundled clef-nano on js where its first answers come first, else WASM. */
async function untilModel(page: Page) {
  await page.waitForFunction(
    () => /^\s*(js|wasm)\b/.test(document.querySelector('[data-testid=device]')?.textContent ?? ''),
    { timeout: 120_000 },
  );
}

/** Clicks Decide and returns the response shown once the log has grown by one. */
async function decide(page: Page) {
  const before = Number(await text(page, '[data-testid=log-count]'));
  await (await page.waitForSelector('::-p-aria(Decide[role="button"])'))!.click();
  await page.waitForFunction(
    (n) => document.querySelector('[data-testid=log-count]')?.textContent === String(n),
    { timeout: 60_000 },
    before + 1,
  );
  return JSON.parse(await page.$eval('#json-panel', (e) => e.textContent ?? ''));
}

it('decides with the bundled clef-nano, then again offline after a reload', async () => {
  const page = await firefox.newPage();
  await page.goto(`${origin}/`);
  await untilModel(page);
  // No WebGPU in Firefox ESR by default: the page says which device runs, and why.
  console.log(`[firefox] playground device: ${await text(page, '[data-testid=device]')}`);
  const online = await decide(page);
  expect(online.model).toBe('clef-nano');
  // The CLINC routing example a fresh page starts on: a stolen card number.
  expect(online.answers.route.choice).toBe('report_fraud');
  await page.waitForSelector('[data-offline=ready]', { timeout: 120_000 });

  await stopGroup(preview!);
  preview = null;
  const uncached = await page.evaluate(() =>
    fetch(`/never-cached-${Date.now()}.txt`).then(
      (r) => `HTTP ${r.status}`,
      () => 'failed',
    ),
  );
  expect(uncached).toBe('failed');

  await page.reload();
  await untilModel(page);
  expect(await text(page, '[data-testid=log-count]')).toBe('1');
  const offline = await decide(page);
  expect(offline.model).toBe('clef-nano');
  expect(offline.answers.route).toEqual(online.answers.route);
  // Opening a package folder needs showDirectoryPicker, which Firefox lacks: the page says so.
  const picker = await page.evaluate(() => typeof (window as any).showDirectoryPicker);
  await (await page.waitForSelector('::-p-aria(A folder on this computer)'))!.click();
  expect(await text(page, '.folder')).toContain(
    picker === 'function' ? 'Choose folder' : 'This browser cannot open folders.',
  );
  await page.close();
  // The one error: the service worker's report of the fetch above, which had to fail.
  expect(firefox.errors.filter((e) => !e.includes('/never-cached-'))).toEqual([]);
});
