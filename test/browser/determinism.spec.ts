/**
 * Determinism: on one device and dtype, the same request gives the same response byte
 * for byte (JSON text and raw logits) across repeated runs, prefix-cache hits and misses, a page
 * reload (a new engine) and Cache Storage misses and hits (package from the network, then from
 * the cache). On WASM and on WebGPU (SwiftShader: small states, two loads).
 */
import { expect, test } from '@playwright/test';
import { deviceOf } from '../../src/core/devices.js';
import {
  DEVICES,
  deviceTag,
  FP32,
  TOLERANCE,
  expectResponseNear,
  infoOf,
  mustLoad,
  openPage,
  randomRequests,
  reference,
} from './support/engine.js';

const PAGE = '/test/browser/pages/reliability.html';

type Run = { json: string; logits: number[][] | undefined; prefixHit: boolean };

/** Each request `times` times in a row, one outcome per run. */
function runAll(
  page: import('@playwright/test').Page,
  name: string,
  requests: unknown[],
  times: number,
) {
  return page.evaluate(
    async ([name, requests, times]) => {
      const clef = window.enginePage.get(name);
      const out: Run[][] = [];
      for (const request of requests) {
        const runs: Run[] = [];
        for (let k = 0; k < times; k++) {
          const wire = await clef.decide(request);
          runs.push({ json: wire.json, logits: wire.logits, prefixHit: wire.timings.prefixHit });
        }
        out.push(runs);
      }
      return out;
    },
    [name, requests, times] as const,
  );
}

for (const device of DEVICES) {
  test(
    `same request, same bytes on ${device}: repeats, prefix hit/miss, reload, Cache Storage miss/hit`,
    { tag: deviceTag(device) },
    async ({ page }) => {
      test.setTimeout(deviceOf(device).gpu ? 300_000 : 150_000);
      // A text, an object and an array state, 3-4 questions each; short states. SwiftShader runs
      // WebGPU on the CPU and slowly: one request there, run three times instead of five.
      const all = randomRequests(424242, 3, 10);
      const requests = deviceOf(device).gpu ? all.slice(0, 1) : all;
      const [times1, times2] = deviceOf(device).gpu ? [2, 1] : [3, 2];
      await openPage(page, PAGE);
      // 1. Package from the network (Cache Storage is empty in a fresh context): a miss then hits.
      await mustLoad(page, 'first', { model: FP32, device, cache: true });
      const fromCache = () =>
        page.evaluate(
          (name) => window.enginePage.progress.get(name)!.some((p) => p.fromCache === true),
          'first',
        );
      expect(await fromCache()).toBe(false);
      const first = await runAll(page, 'first', requests, times1);
      // 2. A reload: a new page and engine, the package from Cache Storage, the prefix cache off
      //    (budget 0), so every decision runs the whole backbone again.
      await page.reload();
      await expect(page.locator('#status')).toHaveText('ready');
      const info = await mustLoad(page, 'first', {
        model: FP32,
        device,
        cache: true,
        cacheBudgetBytes: 0,
      });
      expect(info.device).toBe(device);
      expect(await fromCache()).toBe(true);
      const second = await runAll(page, 'first', requests, times2);
      const after = (await infoOf(page, 'first')).counters;
      expect(after.prefixHits).toBe(0);
      // No tensor left behind (the prefix cache is off: none at all).
      expect(after.liveTensors).toBe(0);

      requests.forEach((_, i) => {
        const runs = [...first[i]!, ...second[i]!];
        // The first run of page 1 missed the prefix cache, its repeats hit it; page 2 only missed.
        const hits = [
          false,
          ...Array<boolean>(times1 - 1).fill(true),
          ...Array<boolean>(times2).fill(false),
        ];
        expect(runs.map((r) => r.prefixHit)).toEqual(hits);
        for (const r of runs) {
          expect(r.json).toBe(runs[0]!.json);
          expect(r.logits).toEqual(runs[0]!.logits);
        }
      });
      // Deterministic and right: one of them against the float64 reference.
      const ref = await reference(requests[0]);
      expectResponseNear(JSON.parse(first[0]![0]!.json), ref, TOLERANCE[device].fp32.probability);
    },
  );
}
