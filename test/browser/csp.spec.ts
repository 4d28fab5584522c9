/**
 * Every surface of clef-web under the strict Content-Security-Policy docs/deploy.md documents
 * (`default-src 'self'; script-src 'self' 'wasm-unsafe-eval'`), served with the production
 * headers by `clef-web static`'s handler (src/node/static): the page API on one and on three
 * threads, WebGPU, `<clef-decide>` bundled and from one script tag, the service-worker routes
 * (test/fixtures/deploy-site, built by Vite with the plugin), and the built playground
 * (dist/app). A `securitypolicyviolation` listener in the page fails a surface on its first
 * violation, and the policy's `report-uri` catches what the page cannot see (the engine's
 * worker, onnxruntime's thread workers, the service worker): each surface must decide with
 * none of either. Trusted Types (`require-trusted-types-for 'script'`) is measured here too:
 * docs/deploy.md says what it needs.
 */
import { expect, test, type Page } from '@playwright/test';
import { existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CONTENT_SECURITY_POLICY } from '../../src/node/static/headers.js';
import { serveWithPolicy, type PolicySite } from '../support/csp-server.js';
import {
  SURFACES,
  TRUSTED_TYPES_SURFACES,
  buildDeploySite,
  type Surface,
} from '../support/deploy-site.js';

const ROOT = resolve(import.meta.dirname, '../..');

test.describe.configure({ mode: 'serial', timeout: 180_000 });

type Served = PolicySite;

/** Opens `url`, failing at the page's first CSP violation; resolves with its result. */
async function decideWithoutViolation(page: Page, url: string): Promise<any> {
  await page.addInitScript(() => {
    (window as any).__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      (window as any).__violations.push(
        `${e.effectiveDirective} blocked ${e.blockedURI || '(inline)'} at ${e.sourceFile}:${e.lineNumber}`,
      );
    });
  });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(url);
  const handle = await page.waitForFunction(
    () => (window as any).__violations.length > 0 || (window as any).__clefResult,
    undefined,
    { timeout: 150_000 },
  );
  const violations = (await page.evaluate(() => (window as any).__violations)) as string[];
  expect(violations, `violations (page errors: ${errors.join('; ')})`).toEqual([]);
  return handle.jsonValue();
}

let site = '';
let served: Served;
/** The same site with Trusted Types enforced as well. */
let trusted: Served;

test.beforeAll(async () => {
  test.setTimeout(180_000);
  site = await buildDeploySite();
  served = await serveWithPolicy(site);
  trusted = await serveWithPolicy(
    site,
    `${CONTENT_SECURITY_POLICY}; require-trusted-types-for 'script'`,
  );
});

test.afterAll(async () => {
  await served?.close();
  await trusted?.close();
  if (site) rmSync(site, { recursive: true, force: true });
});

test.afterEach(() => {
  // Reports arrive after the fact; any one fails the surface that caused it (or the next).
  expect(served.reports, 'CSP reports (workers included)').toEqual([]);
  expect(trusted.reports, 'CSP reports under Trusted Types').toEqual([]);
});

/** The checks every surface's decision passes. */
function expectDecided(surface: Surface, result: any) {
  expect(result.error, result.error).toBeUndefined();
  expect(result.isolated).toBe(true);
  if (result.status !== undefined) expect(result.status).toBe(200);
  const route = result.response.answers.route;
  expect(route.choice).toBe(surface.startsWith('<clef-decide>') ? 'card_declined' : 'report_fraud');
  if (surface.includes('3 threads')) expect(result.info.threads).toBe(3);
  if (surface.endsWith(', js')) expect(result.info.device).toBe('js');
}

for (const [surface, path] of Object.entries(SURFACES) as Array<[Surface, string]>) {
  test(`${surface}: decides under the strict policy, 0 violations`, async ({ page }) => {
    const result = await decideWithoutViolation(page, served.origin + path);
    expectDecided(surface, result);
    expect(result.error, result.error).toBeUndefined();
    expect(result.isolated).toBe(true);
    if (result.status !== undefined) expect(result.status).toBe(200);
    const route = result.response.answers.route;
    expect(route.choice).toBe(
      surface.startsWith('<clef-decide>') ? 'card_declined' : 'report_fraud',
    );
    if (surface.includes('3 threads')) expect(result.info.threads).toBe(3);
    if (surface.includes('WebGPU')) {
      expect(result.info.device).toBe('webgpu');
      expect(result.info.loadMs.runtime.build).toBe('onnxruntime-web/jspi');
    }
    // Let the workers' reports (if any) arrive before afterEach reads them.
    await page.close();
    await new Promise((r) => setTimeout(r, 300));
  });
}

test('the built playground decides under the strict policy, 0 violations', async ({ page }) => {
  const app = join(ROOT, 'dist/app');
  if (!existsSync(join(app, 'index.html'))) {
    throw new Error('dist/app is not built: run `npm run build` first (npm test does)');
  }
  const playground = await serveWithPolicy(app);
  try {
    const violations: string[] = [];
    await page.exposeFunction('__violation', (v: string) => violations.push(v));
    await page.addInitScript(() =>
      document.addEventListener('securitypolicyviolation', (e) =>
        (window as any).__violation(`${e.effectiveDirective} blocked ${e.blockedURI}`),
      ),
    );
    await page.goto(`${playground.origin}/`);
    // auto's choice for the bundled clef-nano: js where its first answers come first, else WASM.
    await expect(page.getByTestId('device')).toContainText(/^\s*(js|wasm)\b/, {
      timeout: 120_000,
    });
    await page.getByRole('button', { name: 'Decide', exact: true }).click();
    await expect(page.getByTestId('log-count')).toHaveText('1', { timeout: 60_000 });
    await expect(page.locator('.answers-card [part~=answer]').first()).toBeVisible();
    await page.close();
    await new Promise((r) => setTimeout(r, 300));
    expect(violations).toEqual([]);
    expect(playground.reports).toEqual([]);
  } finally {
    await playground.close();
  }
});

for (const [surface, path] of Object.entries(TRUSTED_TYPES_SURFACES) as Array<[Surface, string]>) {
  test(`Trusted Types: ${surface} decides with the page's default policy, 0 violations`, async ({
    page,
  }) => {
    const result = await decideWithoutViolation(page, trusted.origin + path);
    expectDecided(surface, result);
    await page.close();
    await new Promise((r) => setTimeout(r, 300));
  });
}

test("Trusted Types without the page's default policy: refused at the first violation", async ({
  page,
}) => {
  // clef-web's `new Worker(url)` is a Trusted Types sink: a page that defines no policy fails.
  await expect(decideWithoutViolation(page, `${trusted.origin}/threads.html`)).rejects.toThrow(
    /require-trusted-types-for/,
  );
  await page.close();
  await expect.poll(() => trusted.reports.length, { timeout: 10_000 }).toBeGreaterThan(0);
  trusted.reports.length = 0; // expected here: the refusal this test provoked
});

test("without 'wasm-unsafe-eval' onnxruntime's wasm is refused in the engine's worker, and reported", async ({
  page,
}) => {
  const bare = await serveWithPolicy(site, "default-src 'self'");
  try {
    // The page itself violates nothing: the refusal is in the worker, seen by the report only.
    const result = await decideWithoutViolation(page, `${bare.origin}/`);
    expect(result.error).toMatch(/WebAssembly|wasm|Content Security Policy/i);
    await expect.poll(() => bare.reports.length, { timeout: 10_000 }).toBeGreaterThan(0);
    expect(bare.reports.join('\n')).toMatch(/wasm-eval|script-src/);
  } finally {
    await bare.close();
  }
});
