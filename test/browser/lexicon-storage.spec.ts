/**
 * A big lexicon (Clef-flash's lm_head rows are ~1 GB) is read row by row from its cached copy
 * in Cache Storage instead of being held in the worker (so a load does not double the
 * memory). The size threshold is forced here with `simulate.lexiconFromStorage` on the tiny
 * package: answers are byte-identical to the in-memory rows, and without a cache the rows stay
 * in memory.
 */
import { expect, test } from '@playwright/test';
import { FP32, mustDecide, mustLoad, openPage, randomRequests } from './support/engine.js';

test('rows read from Cache Storage decide byte for byte as rows in memory', async ({ page }) => {
  await openPage(page);
  const simulate = { lexiconFromStorage: true };
  const memory = await mustLoad(page, 'memory', { model: FP32, device: 'wasm', cache: false });
  const stored = await mustLoad(page, 'stored', { model: FP32, device: 'wasm', simulate });
  expect(memory.loadMs.lexicon).toBe('memory');
  expect(stored.loadMs.lexicon).toBe('cache-storage');
  const requests = randomRequests(8080, 4, 12);
  for (const request of requests) {
    const a = await mustDecide(page, 'memory', request);
    const b = await mustDecide(page, 'stored', request);
    expect(b.json).toBe(a.json);
    expect(b.logits).toEqual(a.logits);
  }
});

test('without Cache Storage the rows stay in memory, and the load says so', async ({ page }) => {
  await openPage(page);
  const simulate = { lexiconFromStorage: true };
  const info = await mustLoad(page, 'nocache', {
    model: FP32,
    device: 'wasm',
    cache: false,
    simulate,
  });
  expect(info.loadMs.lexicon).toBe('memory');
  expect(info.cacheProblem).toBe('caching disabled');
});
