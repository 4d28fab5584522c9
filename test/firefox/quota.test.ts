/**
 * Cache Storage's quota in Firefox ESR, for real: the suite's `tuned` Firefox, whose storage
 * limit is 1 MiB (`dom.quotaManager.temporaryStorage.fixedLimit`), reports that quota through
 * `navigator.storage.estimate()`, and a package bigger than it loads uncached, decides, and
 * says why in `info().cacheProblem`; nothing is half-written into the cache.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FP32, MODEL, type Outcome } from '../browser/support/engine.js';
import type { EngineInfo } from '../../src/wire/telemetry.js';
import {
  TUNED_STORAGE_LIMIT_KIB,
  connectFirefox,
  openTestPage,
  type Firefox,
} from './support/firefox.js';

let firefox: Firefox;

beforeAll(async () => {
  firefox = await connectFirefox('tuned');
});
afterAll(async () => {
  await firefox?.close();
});

it('a package over the storage quota loads uncached and info() says why', async () => {
  const page = await firefox.newPage();
  await openTestPage(page, '/test/firefox/pages/firefox.html');
  const quota = await page.evaluate(async () => (await navigator.storage.estimate()).quota);
  expect(quota).toBe(TUNED_STORAGE_LIMIT_KIB * 1024);
  const out = (await page.evaluate(
    (m) => window.enginePage.load('q', { model: m, device: 'wasm', cache: true }),
    FP32,
  )) as Outcome<EngineInfo>;
  if (!out.ok) throw new Error(`createClef failed: ${JSON.stringify(out.error)}`);
  expect(out.value.cacheProblem).toMatch(
    /^Not cached: the package needs \d+ MiB more and the storage quota leaves [01] MiB$/,
  );
  const decided = await page.evaluate(
    (model) =>
      window.enginePage.decide('q', { model, state: 'late', questions: { u: { type: 'noul' } } }),
    MODEL,
  );
  expect(decided.ok).toBe(true);
  const entries = await page.evaluate(async () =>
    (await caches.has('clef-web-packages-v1'))
      ? (await (await caches.open('clef-web-packages-v1')).keys()).length
      : 0,
  );
  expect(entries).toBe(0);
  await page.close();
  expect(firefox.errors).toEqual([]);
});
