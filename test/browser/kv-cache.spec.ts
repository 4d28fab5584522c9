/**
 * The float16 KV cache in the browser. On WASM, asked for, it decides within the
 * bound test/unit/build/convert/kv-float16.test.ts sets of the float32 cache, over states long
 * enough to be carried through several runs and through a prefix-cache hit. On WebGPU it needs
 * shader-f16, which SwiftShader lacks: `auto` keeps float32 and says why; asking for float16 there
 * is a DeviceError naming the feature. (A GPU with shader-f16 takes the float16 path under `auto`;
 * none is at hand here.)
 */
import { expect, test } from '@playwright/test';
import {
  FP32,
  ROUNDING,
  loadClef,
  mustDecide,
  mustLoad,
  numbersOf,
  openPage,
  stateOfLength,
  type ErrorData,
} from './support/engine.js';

/**
 * test/unit/build/convert/kv-float16.test.ts's MAX_ABS_DP: float16 against float32 KV, any
 * probability.
 */
const MAX_ABS_DP = 5e-4;

test('WASM with a float16 KV cache answers within the bound of float32, hits included', async ({
  page,
}) => {
  await openPage(page);
  // Each load fetches the backbone graph of its own precision only (float32 on WASM: the
  // package's WASM-prepared one; kv16 graphs have none).
  const graphs: string[] = [];
  page.context().on('request', (r) => {
    const path = new URL(r.url()).pathname;
    if (/\/backbone[^/]*\.onnx$/.test(path)) graphs.push(path.slice(FP32.length));
  });
  const f32 = await mustLoad(page, 'f32', { model: FP32, device: 'wasm', kvDtype: 'float32' });
  expect(graphs.splice(0)).toEqual(['backbone.wasm.onnx']);
  const f16 = await mustLoad(page, 'f16', { model: FP32, device: 'wasm', kvDtype: 'float16' });
  expect(graphs.splice(0)).toEqual(['backbone.kv16.onnx']);
  expect([f32.kvDtype, f32.kvReason]).toEqual(['float32', "kvDtype 'float32' requested"]);
  expect([f16.kvDtype, f16.kvReason]).toEqual(['float16', "kvDtype 'float16' requested"]);
  const auto = await mustLoad(page, 'auto', { model: FP32, device: 'wasm' });
  expect(auto.kvDtype).toBe('float32');
  expect(auto.kvReason).toMatch(/^auto: float32 on WASM/);

  const questions = {
    late: { type: 'noul' },
    team: {
      type: 'choice',
      criteria: { billing: 'about money', shipping: 'about delivery', returns: 'sending back' },
    },
  };
  // 600 tokens: three backbone runs of the package's 256, the state carried between them.
  const state = await stateOfLength(questions, 600);
  let worst = 0;
  for (const q of [questions, { mood: { type: 'score', criteria: ['calm', 'upset'] } }]) {
    const body = { model: 'clef-tiny', state, questions: q };
    const a = await mustDecide(page, 'f32', body);
    const b = await mustDecide(page, 'f16', body);
    const x = numbersOf(a.response);
    const y = numbersOf(b.response);
    x.forEach((row, i) =>
      row.forEach((v, j) => {
        const d = Math.abs(v - y[i]![j]!);
        worst = Math.max(worst, d);
        expect(d).toBeLessThanOrEqual(MAX_ABS_DP + 2 * ROUNDING);
      }),
    );
  }
  const after = (await page.evaluate(() => window.enginePage.info('f16'))) as {
    ok: true;
    value: { counters: { prefixHits: number; cacheBytes: number } };
  };
  // The second question set reused the float16 state of the first.
  expect(after.value.counters.prefixHits).toBe(1);
  const wide = (await page.evaluate(() => window.enginePage.info('f32'))) as typeof after;
  // Its cached KV is half the float32 one's (the memory rows and linear state stay float32).
  expect(after.value.counters.cacheBytes).toBeLessThan(wide.value.counters.cacheBytes);
  console.log(`[kv16] WASM, 600-token state: max |Δ answer| ${worst.toExponential(2)}`);
});

test('WebGPU without shader-f16: auto keeps float32 and says so; float16 is refused', async ({
  page,
}) => {
  await openPage(page);
  const auto = await mustLoad(page, 'gpu', { model: FP32, device: 'webgpu' });
  expect(auto.kvDtype).toBe('float32');
  expect(auto.kvReason).toBe('auto: float32, the WebGPU adapter lacks shader-f16');
  const out = await loadClef(page, 'gpu16', { model: FP32, device: 'webgpu', kvDtype: 'float16' });
  expect(out.ok).toBe(false);
  const error = (out as { error: ErrorData }).error;
  expect(error).toMatchObject({ name: 'DeviceError', code: 'device_unavailable' });
  expect(error.message).toMatch(/kvDtype 'float16' on WebGPU needs the feature shader-f16/);
});
