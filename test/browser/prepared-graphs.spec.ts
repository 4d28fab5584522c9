/**
 * WASM-prepared graphs in the browser: on WASM the engine fetches and creates the
 * package's `*.wasm.onnx` graphs (optimised once by the converter) instead of the package
 * graphs, and decides bit for bit what the package graphs decide after onnxruntime-web
 * optimised them itself: on random requests drawn fresh each run (the seed printed; CLEF_TEST_SEED reruns it), on the single-graph fp32
 * package and the split q4 one (whose heads' folded float32 weights went inline). With
 * `preparedGraphs: false`, and on WebGPU, the package graphs load as before.
 */
import { expect, test, type Page } from '@playwright/test';
import { FP32, mustDecide, mustLoad, openPage, randomRequests } from './support/engine.js';
import { SEED_ENV, testSeed } from '../support/seed.js';

const Q4_SPLIT = '/models/tiny-q4-split/';

/** The .onnx graph files a page fetches from `model`, in order. */
function recordGraphs(page: Page, model: string): () => string[] {
  const seen: string[] = [];
  page.context().on('request', (r) => {
    const path = new URL(r.url()).pathname;
    if (path.startsWith(model) && path.endsWith('.onnx')) seen.push(path.slice(model.length));
  });
  return () => seen.splice(0).sort();
}

for (const [model, label] of [
  [FP32, 'fp32, one backbone graph'],
  [Q4_SPLIT, 'q4, backbone split in groups'],
] as const) {
  test(`WASM creates the prepared graphs and decides bit for bit as before (${label})`, async ({
    page,
  }) => {
    await openPage(page);
    const graphs = recordGraphs(page, model);
    const manifest = (await (await page.request.get(`${model}manifest.json`)).json()) as {
      files: Array<{ path: string; role: string; replaces?: string }>;
    };
    const twins = manifest.files.filter((f) => f.role === 'wasm-graph');
    expect(twins.length).toBeGreaterThanOrEqual(3);

    const prepared = await mustLoad(page, 'prepared', { model, device: 'wasm', warmUp: false });
    expect(graphs()).toEqual(twins.map((t) => t.path).sort());
    expect(prepared.preparedGraphs).toBe(twins.length);

    const plain = await mustLoad(page, 'plain', {
      model,
      device: 'wasm',
      warmUp: false,
      preparedGraphs: false,
    });
    expect(graphs()).toEqual(twins.map((t) => t.replaces!).sort());
    expect(plain.preparedGraphs).toBe(0);

    const seed = testSeed(`prepared-graphs ${label}`);
    for (const request of randomRequests(seed, 2, 40)) {
      const a = await mustDecide(page, 'prepared', { ...request, model: 'clef-tiny' });
      const b = await mustDecide(page, 'plain', { ...request, model: 'clef-tiny' });
      // The head's raw float32 logits, unrounded: equal to the bit.
      expect(a.logits, `${SEED_ENV}=${seed}`).toBeDefined();
      expect(a.logits, `${SEED_ENV}=${seed}`).toEqual(b.logits);
    }
  });
}

test('WebGPU never fetches the prepared graphs', async ({ page }) => {
  await openPage(page);
  const graphs = recordGraphs(page, FP32);
  const info = await mustLoad(page, 'gpu', { model: FP32, device: 'webgpu', warmUp: false });
  expect(info.preparedGraphs).toBe(0);
  expect(graphs()).toEqual(['backbone.onnx', 'head_decide.onnx', 'head_memory.onnx']);
});
