/**
 * Every surface under docs/deploy.md's strict Content-Security-Policy in Firefox ESR (the
 * Chromium counterpart is test/browser/csp.spec.ts): the deploy site built by Vite with the
 * plugin (test/fixtures/deploy-site) and the built playground, served with the production headers
 * by `clef-web static`'s handler. A `securitypolicyviolation` listener in each page and the
 * policy's `report-uri` (which hears the workers and the service worker) must both stay silent
 * while the page decides. WebGPU runs in the suite's `tuned` Firefox (WebGPU on); Trusted Types
 * with the page's default policy, as the doc gives it.
 */
import { existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from 'puppeteer-core';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '../../src/node/static/headers.js';
import { serveWithPolicy, type PolicySite } from '../support/csp-server.js';
import {
  SURFACES,
  TRUSTED_TYPES_SURFACES,
  buildDeploySite,
  type Surface,
} from '../support/deploy-site.js';
import { connectFirefox, type Firefox } from './support/firefox.js';

const ROOT = resolve(import.meta.dirname, '../..');

let site = '';
let served: PolicySite;
let trusted: PolicySite;
let firefox: Firefox;
let tuned: Firefox;

beforeAll(async () => {
  site = await buildDeploySite();
  served = await serveWithPolicy(site);
  trusted = await serveWithPolicy(
    site,
    `${CONTENT_SECURITY_POLICY}; require-trusted-types-for 'script'`,
  );
  firefox = await connectFirefox('default');
  tuned = await connectFirefox('tuned');
}, 180_000);

afterAll(async () => {
  await firefox?.close();
  await tuned?.close();
  await served?.close();
  await trusted?.close();
  if (site) rmSync(site, { recursive: true, force: true });
});

afterEach(async () => {
  // Reports come after the fact: give them a moment, then none may have come.
  await new Promise((r) => setTimeout(r, 500));
  expect(served.reports, 'CSP reports (workers included)').toEqual([]);
  expect(trusted.reports, 'CSP reports under Trusted Types').toEqual([]);
});

/** Opens `url` with a violation listener; the page's result, or a throw at a violation. */
async function decide(page: Page, url: string): Promise<any> {
  await page.evaluateOnNewDocument(() => {
    (window as any).__violations = [];
    document.addEventListener('securitypolicyviolation', (e) =>
      (window as any).__violations.push(`${e.effectiveDirective} blocked ${e.blockedURI}`),
    );
  });
  await page.goto(url);
  await page.waitForFunction(
    () => (window as any).__violations.length > 0 || (window as any).__clefResult,
    { timeout: 120_000 },
  );
  const [violations, result] = await page.evaluate(() => [
    (window as any).__violations as string[],
    (window as any).__clefResult,
  ]);
  if (violations.length > 0) throw new Error(`CSP violations: ${violations.join('; ')}`);
  return result;
}

function expectDecided(surface: Surface, result: any) {
  expect(result.error, result.error).toBeUndefined();
  expect(result.isolated).toBe(true);
  if (result.status !== undefined) expect(result.status).toBe(200);
  const choice = surface.startsWith('<clef-decide>') ? 'card_declined' : 'report_fraud';
  expect(result.response.answers.route.choice).toBe(choice);
  if (surface.includes('3 threads')) expect(result.info.threads).toBe(3);
  if (surface.endsWith(', js')) expect(result.info.device).toBe('js');
}

for (const [surface, path] of Object.entries(SURFACES) as Array<[Surface, string]>) {
  it(`${surface}: decides under the strict policy, 0 violations`, async () => {
    const gpu = surface.includes('WebGPU');
    const page = await (gpu ? tuned : firefox).newPage();
    try {
      const result = await decide(page, served.origin + path);
      expectDecided(surface, result);
      if (gpu) expect(result.info.device).toBe('webgpu');
    } finally {
      await page.close();
    }
  }, 150_000);
}

for (const [surface, path] of Object.entries(TRUSTED_TYPES_SURFACES) as Array<[Surface, string]>) {
  it(`Trusted Types: ${surface} decides with the page's default policy, 0 violations`, async () => {
    const page = await firefox.newPage();
    try {
      expectDecided(surface, await decide(page, trusted.origin + path));
    } finally {
      await page.close();
    }
  }, 150_000);
}

it('the built playground decides under the strict policy, 0 violations', async () => {
  const app = join(ROOT, 'dist/app');
  if (!existsSync(join(app, 'index.html'))) {
    throw new Error('dist/app is not built: run `npm run build` first (npm test does)');
  }
  const playground = await serveWithPolicy(app);
  const page = await firefox.newPage();
  try {
    await page.evaluateOnNewDocument(() => {
      (window as any).__violations = [];
      document.addEventListener('securitypolicyviolation', (e) =>
        (window as any).__violations.push(`${e.effectiveDirective} blocked ${e.blockedURI}`),
      );
    });
    await page.goto(`${playground.origin}/`);
    // auto's choice for the bundled clef-nano: js where its first answers come first, else WASM.
    await page.waitForFunction(
      () =>
        /^\s*(js|wasm)\b/.test(document.querySelector('[data-testid=device]')?.textContent ?? ''),
      { timeout: 120_000 },
    );
    const button = await page.waitForSelector('::-p-aria(Decide[role="button"])');
    await button!.click();
    await page.waitForFunction(
      () => document.querySelector('[data-testid=log-count]')?.textContent === '1',
      { timeout: 60_000 },
    );
    expect(await page.evaluate(() => (window as any).__violations)).toEqual([]);
    await page.close();
    await new Promise((r) => setTimeout(r, 500));
    expect(playground.reports).toEqual([]);
  } finally {
    await playground.close();
  }
}, 150_000);

it("Trusted Types are enforced here: without the page's default policy, clef-web's worker is refused", async () => {
  const page = await firefox.newPage();
  try {
    await expect(decide(page, `${trusted.origin}/threads.html`)).rejects.toThrow(
      /CSP violations: .*(trusted-types|require-trusted-types-for)/,
    );
  } finally {
    await page.close();
    await new Promise((r) => setTimeout(r, 500));
    trusted.reports.length = 0; // expected here: the refusal this test provoked
  }
}, 150_000);
