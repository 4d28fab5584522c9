// The same-origin System One routes in a real service worker: the page registers it
// with `registerSystemOneRoute(clef)`, then the unmodified TypeSafe SDK (baseURL = the page's
// origin) and plain fetch calls are answered by the page's engine. The worker script is a test
// one (test/browser/pages/systemone-sw.ts) making exactly the calls sw-routes.ts documents.
import { expect, test } from '@playwright/test';

const MODEL = 'clef-tiny';

test('the SDK and fetch reach the page engine through the service worker', async ({ page }) => {
  test.setTimeout(180_000);
  page.on('console', (m) => console.log(`[page] ${m.text()}`));
  // Vite's HMR socket stubbed: edits elsewhere in the tree must not reload the page mid-test.
  await page.routeWebSocket(/.*/, () => undefined);
  await page.goto('/test/browser/pages/sw.html');
  await expect(page.locator('#status')).toHaveText('ready');
  const out = await page.evaluate((model) => (window as any).swTest.swRoundTrip(model), MODEL);

  expect(out.controlled).toBe(true);
  expect(out.typed.model).toBe(MODEL);
  expect(Object.keys(out.typed.answers)).toEqual(['team', 'urgent']);
  expect(['billing', 'shipping']).toContain(out.typed.answers.team.choice);
  expect(out.invalid).toMatchObject({ name: 'UnprocessableEntityError', status: 422 });
  expect(out.invalid.body.detail[0].loc).toEqual(['body', 'questions', 'q', 'criteria']);
  expect(out.models.map((m: { name: string }) => m.name)[0]).toBe(MODEL);
  expect(out.workerText).toBe(out.pageText);
  for (const r of out.clefPaths) {
    expect(r, r.path).toEqual({
      path: r.path,
      status: 404,
      type: 'application/json',
      body: '{"detail":"Not Found"}',
    });
  }
  expect(out.workerText).toMatch(/"answers":\{"b":.*,"2":/);
  expect(out.workerId).toMatch(/^[0-9a-f-]{36}$/);
  expect(out.waiText).toBe(`{"result":${out.pageText},"success":true,"errors":[],"messages":[]}`);
  expect(out.stopped.status).toBe(503);
  expect(out.stopped.body.detail.error_type).toBe('overloaded');
});
