/**
 * Leak counting, the CI-sized soak: 100 decisions of varied size on WASM, with bad
 * requests and aborted ones mixed in, leave no onnxruntime tensor behind: with the prefix cache
 * off the engine's live tensor count is back to exactly 0 after every batch, and with it on it
 * equals what the cache holds. (tools/soak/browser-soak.ts is the 1,000-decision version with
 * memory figures; run by hand.)
 */
import { expect, test } from '@playwright/test';
import { FP32, MODEL, mustLoad, openPage, randomRequests } from './support/engine.js';

test('100 varied decisions, bad and aborted requests included: tensors back to baseline', async ({
  page,
}) => {
  test.setTimeout(150_000);
  await openPage(page, '/test/browser/pages/reliability.html');
  const off = await mustLoad(page, 'off', { model: FP32, device: 'wasm', cacheBudgetBytes: 0 });
  await mustLoad(page, 'on', { model: FP32, device: 'wasm' });
  // The test pages' instrumented worker (test/support/instrumented-worker) counts the platform's
  // resources too.
  expect(off.counters.wasmMemoryBytes).toBeGreaterThan(0);
  // Four sizes of state (6 to 200 words), 3-4 questions each.
  const requests = [6, 24, 80, 200].flatMap((words, k) => randomRequests(300 + k, 25, words));
  const bad = { model: MODEL, state: 5, questions: { a: { type: 'noul' } } };
  const out = await page.evaluate(
    async ([requests, bad]) => {
      const counts: Array<{ name: string; live: number; cached: number; pending: number }> = [];
      for (const name of ['off', 'on']) {
        const clef = window.enginePage.get(name);
        let answered = 0;
        let refused = 0;
        let aborted = 0;
        // All 100 with the cache off; 40 with it on (the faults specs check it too).
        const list = name === 'off' ? requests : requests.slice(0, 40);
        for (let start = 0; start < list.length; start += 20) {
          const batch = list.slice(start, start + 20);
          const calls = batch.map((r, i) => {
            const abort = new AbortController();
            const call = clef.decide(i % 7 === 3 ? bad : r, { signal: abort.signal });
            // Some aborted while queued, some (the first of a batch) while running.
            if (i % 9 === 0) setTimeout(() => abort.abort(), i === 0 ? 1 : 0);
            return call.then(
              () => answered++,
              (e: { name: string }) => (e.name === 'AbortError' ? aborted++ : refused++),
            );
          });
          await Promise.all(calls);
          const c = (await clef.info()).counters;
          counts.push({ name, live: c.liveTensors, cached: c.cachedTensors, pending: c.pending });
        }
        counts.push({ name: `${name} totals`, live: answered, cached: refused, pending: aborted });
      }
      return counts;
    },
    [requests, bad] as const,
  );
  const batches = (name: string) => out.filter((c) => c.name === name);
  for (const c of batches('off'))
    expect(c).toEqual({ name: 'off', live: 0, cached: 0, pending: 0 });
  for (const c of batches('on')) {
    expect(c.pending).toBe(0);
    expect(c.live).toBe(c.cached);
  }
  expect(batches('on').at(-1)!.cached).toBeGreaterThan(0);
  for (const name of ['off', 'on']) {
    const [totals] = batches(`${name} totals`);
    const { live: answered, cached: refused, pending: aborted } = totals!;
    const total = name === 'off' ? 100 : 40;
    expect(answered + refused + aborted).toBe(total);
    expect(refused).toBeGreaterThanOrEqual(total / 10); // every 7th is bad, unless aborted
    expect(aborted).toBeGreaterThan(0);
    expect(answered).toBeGreaterThan(total * 0.6);
  }
});
