// The same-origin System One routes (issue 6) in a real service worker: the page registers it
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
  const out = await page.evaluate(async (MODEL) => {
    const { sdk, createClef, registerSystemOneRoute } = (window as any).swTest;
    const clef = await createClef({ model: '/models/tiny/', device: 'wasm', cache: false });
    const handle = await registerSystemOneRoute(clef, {
      scriptUrl: '/test/browser/pages/systemone-sw.ts',
      type: 'module',
    });
    await handle.controlled;
    const client = new sdk.TypeSafeClient({
      apiKey: 'not-checked',
      baseURL: location.origin,
      dangerouslyAllowBrowser: true,
      retry: { maxRetries: 0 },
      logLevel: 'off',
    });
    const typed = await client.systemOne({
      model: MODEL,
      state: 'Charged twice for one order.',
      questions: {
        team: sdk.choice('Which team?', { billing: 'Money', shipping: 'Parcels' }),
        urgent: sdk.noul('Urgent?'),
      },
    });
    const invalid = await client
      .systemOne({ model: MODEL, state: 'x', questions: { q: sdk.choice(null, { one: null }) } })
      .then(
        () => null,
        (e: any) => ({ name: e.constructor.name, status: e.status, body: e.body }),
      );
    const models = await client.models.list();

    // Key order as written (integer-like ids included) survives the relay: compare with the
    // page's own route, which never leaves the page.
    const text = `{"model":"${MODEL}","state":"late","questions":{"b":{"type":"noul"},"2":{"type":"noul"}}}`;
    const init = { method: 'POST', body: text, headers: { 'content-type': 'application/json' } };
    const viaWorker = await fetch('/v1/systemone', init);
    const viaPage = await clef.fetch('/v1/systemone', init);
    const wai = await fetch(`/client/v4/accounts/acct/ai/run/@cf/cloudflare/${MODEL}`, init);
    // clef-web's own namespace: the worker answers it (a JSON 404 for the calibrated route it
    // does not relay yet), so the page's server, an SPA fallback say, never does (issue 30).
    const clefPaths = await Promise.all(
      ['/v1/clef/calibrated', '/v1/clef/unknown'].map(async (path) => {
        const r = await fetch(path, init);
        return {
          path,
          status: r.status,
          type: r.headers.get('content-type'),
          body: await r.text(),
        };
      }),
    );

    handle.stop();
    const stopped = await fetch('/v1/systemone', init);
    await clef.dispose();
    await handle.registration.unregister();
    return {
      controlled: navigator.serviceWorker.controller !== null,
      typed,
      invalid,
      models,
      workerText: await viaWorker.text(),
      workerId: viaWorker.headers.get('x-typesafe-request-id'),
      pageText: await viaPage.text(),
      waiText: await wai.text(),
      clefPaths,
      stopped: { status: stopped.status, body: await stopped.json() },
    };
  }, MODEL);

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
