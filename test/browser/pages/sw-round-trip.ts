/**
 * The service-worker round trip both browser suites run (test/browser/service-worker.spec.ts in
 * Chromium, test/firefox/engine.test.ts in Firefox): createClef, its System One route registered
 * in a module service worker, then the unmodified TypeSafe SDK and plain fetch calls answered
 * through it, and the route stopped. Returns what each call got; the tests assert on it.
 */
import * as sdk from '@typesafe-ai/sdk';
import { createClef } from '../../../src/client/clef.js';
import { registerSystemOneRoute } from '../../../src/client/service-worker.js';

export async function swRoundTrip(MODEL: string) {
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
  // does not relay yet), so the page's server, an SPA fallback say, never does.
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
}
