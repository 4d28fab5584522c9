/**
 * Which device `auto` picks, on the real adapter headless Chromium offers (WebGPU on
 * SwiftShader, `isFallbackAdapter: true`) and with that adapter made to describe itself
 * differently (fault-hooks.ts): a software adapter is passed over for WASM and `info()` says
 * why; an explicit 'webgpu' still uses it; a hardware-looking adapter is taken. Each load
 * reports its phases, and a WASM load fetches only the plain wasm build.
 */
import { expect, test, type Page } from '@playwright/test';
import type {
  FaultSimulation,
  TestEngineInfo,
} from '../support/instrumented-worker/instrumented-wire.js';
import {
  FP32,
  MODEL,
  infoOf,
  loadClef,
  mustDecide,
  mustLoad,
  openPage,
  type Outcome,
} from './support/engine.js';

const GOOD = {
  model: MODEL,
  state: 'Where is my parcel?',
  questions: { late: { type: 'noul' } },
};

/** The /ort/ files the page and its workers requested while `work` ran. */
async function ortRequests(page: Page, work: () => Promise<unknown>): Promise<string[]> {
  const urls: string[] = [];
  const note = (r: { url(): string }) => {
    const path = new URL(r.url()).pathname;
    if (path.startsWith('/ort/')) urls.push(path.slice('/ort/'.length));
  };
  page.context().on('request', note);
  try {
    await work();
  } finally {
    page.context().off('request', note);
  }
  return urls;
}

async function loadWithFault(
  page: Page,
  name: string,
  fault: 'gpu-adapter' | 'unflagged-adapter',
  simulate: FaultSimulation = {},
) {
  await openPage(page, '/test/browser/pages/reliability.html');
  const out = (await page.evaluate(
    ([n, f, model, simulate]) =>
      window.reliability.load(n, { model, device: 'auto', simulate }, [f]),
    [name, fault, FP32, simulate] as const,
  )) as Outcome<TestEngineInfo>;
  if (!out.ok) throw new Error(`createClef failed: ${JSON.stringify(out.error)}`);
  return out.value;
}

test('the real headless adapter is a software fallback, passed over by auto: js for the tiny package, else WASM', async ({
  page,
}) => {
  await openPage(page);
  const adapter = await page.evaluate(async () => {
    type Info = { vendor: string; architecture: string; isFallbackAdapter?: boolean };
    const gpu = (navigator as { gpu?: { requestAdapter(): Promise<{ info: Info } | null> } }).gpu;
    const info = (await gpu?.requestAdapter())?.info;
    return info
      ? { vendor: info.vendor, architecture: info.architecture, fallback: info.isFallbackAdapter }
      : null;
  });
  expect(adapter).toEqual({ vendor: 'google', architecture: 'swiftshader', fallback: true });
  let info!: TestEngineInfo;
  // The tiny package is small: the js device answers first, and nothing of
  // onnxruntime is fetched.
  const none = await ortRequests(page, async () => {
    info = await mustLoad(page, 'auto', { model: FP32, device: 'auto' });
  });
  expect(info.device).toBe('js');
  expect(info.adapter).toBeNull();
  expect(info.deviceReason).toMatch(/^auto: js, first 5 answers in \d+ ms against \d+ ms on WASM/);
  expect(info.fallbackReason).toMatch(/webgpu skipped: .*software fallback/);
  expect(none).toEqual([]);
  expect(info.loadMs.runtime?.build).toBe('clef-web js');
  // Where the js device cannot run the package, auto goes on to WASM, still not the software GPU.
  let files: string[] = [];
  files = await ortRequests(page, async () => {
    info = await mustLoad(page, 'wasm', {
      model: FP32,
      device: 'auto',
      simulate: { refuseJs: true },
    });
  });
  expect(info.device).toBe('wasm');
  expect(info.fallbackReason).toMatch(
    /js skipped: the js device cannot run this package \(simulate\.refuseJs\)/,
  );
  // The plain build for WASM: none of the WebGPU builds' wasm (JSPI, asyncify, JSEP).
  expect(files).toContain('ort-wasm-simd-threaded.wasm');
  expect(files.filter((f) => f.endsWith('.wasm'))).toEqual(['ort-wasm-simd-threaded.wasm']);
  expect(info.loadMs.runtime?.build).toBe('onnxruntime-web/wasm');
  expect(info.counters.decisions).toBe(0);
  const got = await mustDecide(page, 'wasm', GOOD);
  expect(Object.keys(got.response.answers)).toEqual(['late']);
  // The page's info() is read from the engine at each call: its counters moved.
  const now = await infoOf(page, 'wasm');
  expect(now.counters.decisions).toBe(1);
  expect(now.counters.backboneTokens).toBe(got.timings.backboneTokens);
});

test("an explicit 'webgpu' still runs on the software adapter, on the JSPI WebGPU build", async ({
  page,
}) => {
  await openPage(page);
  let info!: TestEngineInfo;
  const files = await ortRequests(page, async () => {
    info = await mustLoad(page, 'gpu', { model: FP32, device: 'webgpu' });
  });
  expect(info.device).toBe('webgpu');
  expect(info.adapter).toMatch(/swiftshader/);
  expect(info.fallbackReason).toBeNull();
  expect(info.deviceReason).toMatch(
    /^device 'webgpu' requested on google swiftshader \(.*software fallback\)/,
  );
  // Chromium has JSPI: the 16.8 MB JSPI build, not the 26.8 MB asyncify one.
  expect(info.loadMs.runtime?.build).toBe('onnxruntime-web/jspi');
  expect(info.loadMs.runtime?.instantiateMs).toBeGreaterThan(0);
  expect(files.filter((f) => f.endsWith('.wasm'))).toEqual(['ort-wasm-simd-threaded.jspi.wasm']);
});

test('auto takes an adapter that is not a fallback, after a js device that answers first', async ({
  page,
}) => {
  const info = await loadWithFault(page, 'hw', 'gpu-adapter');
  // The tiny package's first answers come before WebGPU's runtime has started.
  expect(info.device).toBe('js');
  expect(info.deviceReason).toMatch(
    /^auto: js, first 5 answers in \d+ ms against \d+ ms on WebGPU/,
  );
  expect(info.fallbackReason).toBeNull();
  const gpu = await loadWithFault(page, 'hw-gpu', 'gpu-adapter', { refuseJs: true });
  expect(gpu.device).toBe('webgpu');
  expect(gpu.adapter).toBe('test-vendor test-gpu');
  expect(gpu.fallbackReason).toMatch(
    /js skipped: the js device cannot run this package \(simulate\.refuseJs\)/,
  );
});

test('without the isFallbackAdapter flag, SwiftShader is known by its name', async ({ page }) => {
  const info = await loadWithFault(page, 'unflagged', 'unflagged-adapter');
  expect(info.device).toBe('js');
  expect(info.fallbackReason).toMatch(/google swiftshader\) is a software fallback/);
});

test('load phases are reported: download, verify, tokenizer, runtime, each graph', async ({
  page,
}) => {
  await openPage(page);
  const info = await mustLoad(page, 'phases', { model: FP32, device: 'wasm', cache: false });
  const l = info.loadMs;
  expect(Object.keys(l.sessions).sort()).toEqual(['backbone', 'headDecide', 'headMemory']);
  for (const ms of [
    l.download,
    l.verify,
    l.tokenizer,
    l.compile,
    l.total,
    ...Object.values(l.sessions),
  ])
    expect(ms).toBeGreaterThan(0);
  expect(l.runtime).toMatchObject({ build: 'onnxruntime-web/wasm' });
  expect(l.runtime!.importMs).toBeGreaterThan(0);
  expect(l.runtime!.initMs).toBeGreaterThan(0);
  // The wasm's instantiation is the part of init before the runtime's own start.
  expect(l.runtime!.instantiateMs).toBeGreaterThan(0);
  expect(l.runtime!.instantiateMs).toBeLessThan(l.runtime!.initMs);
  expect(l.runtime!.wasmFetchMs).toBeGreaterThan(0);
  // The sessions are part of the load; the runtime started during the download.
  expect(l.total).toBeGreaterThan(Object.values(l.sessions).reduce((a, b) => a + b, 0));
});

test('when the request and the browser settle the device, its runtime starts before the manifest arrives', async ({
  page,
}) => {
  await openPage(page);
  // Each manifest is held back until the runtime's wasm has been asked for: ordered by events,
  // not raced against a delay. An engine that waits for the manifest before starting its
  // runtime (as it used to) would hold both forever; the 20 s release only turns that deadlock
  // into a readable failure (['manifest', 'wasm']), it decides nothing when the order is right.
  const context = page.context();
  const events: string[] = [];
  let wasmAsked: () => void = () => {};
  const wasmRequest = new Promise<void>((resolve) => (wasmAsked = resolve));
  await context.route('**/manifest.json', async (route) => {
    let release: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([wasmRequest, new Promise((wait) => (release = setTimeout(wait, 20_000)))]);
    clearTimeout(release);
    events.push('manifest');
    await route.continue();
  });
  context.on('request', (r) => {
    if (new URL(r.url()).pathname.endsWith('/ort-wasm-simd-threaded.wasm')) {
      events.push('wasm');
      wasmAsked();
    }
  });
  const info = await mustLoad(page, 'wasm', { model: FP32, device: 'wasm', cache: false });
  expect(info.device).toBe('wasm');
  expect(events).toEqual(['wasm', 'manifest']);
  // 'auto' waits for the manifest: whether the js device goes first, fetching nothing of
  // onnxruntime, depends on the package. The tiny one's does: no wasm is asked for at all.
  events.length = 0; // (the manifest is not held any more: the wasm was asked for above)
  const auto = await mustLoad(page, 'auto', { model: FP32, device: 'auto', cache: false });
  expect(auto.device).toBe('js');
  expect(events).toEqual(['manifest']);
});

test('on WebGPU the warm-up gives way to a request and does not come back', async ({ page }) => {
  await openPage(page);
  const held = { model: FP32, device: 'webgpu', simulate: { holdWarmUp: true } } as const;
  expect((await loadClef(page, 'gpu', held)).ok).toBe(true);
  await mustDecide(page, 'gpu', GOOD);
  const info = await infoOf(page, 'gpu');
  expect(info.counters.warmingUp).toBe(false);
  expect(info.loadMs.warmup).toBeNull(); // it never finished
  expect(info.counters).toMatchObject({ decisions: 1, pending: 0, cacheEntries: 1 });
});

test('the engine warms itself up after load: it gives way to a request and finishes when idle, not counted, cache untouched', async ({
  page,
}) => {
  await openPage(page);
  // simulate.holdWarmUp keeps the warm-up in its first stage until a request is queued.
  const held = { model: FP32, device: 'wasm', simulate: { holdWarmUp: true } } as const;
  const loaded = await loadClef(page, 'warm', held); // mustLoad would wait for the warm-up
  expect(loaded.ok).toBe(true);
  await mustLoad(page, 'cold', { model: FP32, device: 'wasm', warmUp: false });
  await mustDecide(page, 'warm', GOOD);
  await mustDecide(page, 'cold', GOOD);
  // It gave way to that request and runs again once the engine is idle.
  await expect
    .poll(async () => (await infoOf(page, 'warm')).loadMs.warmup, { timeout: 30_000 })
    .toBeGreaterThan(0);
  const warm = await infoOf(page, 'warm');
  const cold = await infoOf(page, 'cold');
  expect(cold.loadMs.warmup).toBeNull();
  for (const info of [warm, cold]) {
    expect(info.counters).toMatchObject({ decisions: 1, prefixMisses: 1, pending: 0 });
    expect(info.counters.cacheEntries).toBe(1); // the request's own state, not the warm-up's
  }
  expect(warm.counters.backboneTokens).toBe(cold.counters.backboneTokens);
  // The warm-up, run after the request, left its state in the prefix cache.
  const again = await mustDecide(page, 'warm', GOOD);
  expect(again.timings.prefixHit).toBe(true);
});
