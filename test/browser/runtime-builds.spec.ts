/**
 * An app ships only the onnxruntime-web builds of the devices it names (the `devices` option
 * of the Vite plugin and of `clef-web assets`), and the engine runs on what is there: `auto`
 * passes over a device whose runtime is not served, an explicit one names the missing file and
 * the option that ships it, and WASM runs on WebGPU's build where that is the only one. "Not
 * served" is a 404, or the HTML page a single-page-app host answers for every unknown path.
 */
import { expect, test, type Page } from '@playwright/test';
import type { EngineInfo } from '../../src/wire/telemetry.js';
import {
  RUNTIME_BUILD_FILES,
  runtimeBuildFiles,
  type RuntimeBuild,
} from '../../src/wire/assets.js';
import {
  FP32,
  MODEL,
  loadClef,
  mustDecide,
  mustLoad,
  openPage,
  type Outcome,
} from './support/engine.js';

const GOOD = { model: MODEL, state: 'Where is my parcel?', questions: { late: { type: 'noul' } } };

/** Answers every file of `builds` under /ort/ as a server without them would. */
async function withhold(page: Page, builds: RuntimeBuild[], as: 'missing' | 'spa-fallback') {
  const files = new Set(builds.flatMap(runtimeBuildFiles));
  await page.context().route(
    (url) => url.pathname.startsWith('/ort/') && files.has(url.pathname.slice(5)),
    (route) =>
      as === 'missing'
        ? route.fulfill({ status: 404 })
        : route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html>app' }),
  );
}

/**
 * `auto` on an adapter that looks like hardware (fault-hooks.ts), with a package the js device
 * refuses (the tiny one's first answers would come first on js, which needs no onnxruntime
 * file), so WebGPU comes first.
 */
async function loadOnHardwareAdapter(page: Page, device: 'auto' | 'webgpu') {
  await openPage(page, '/test/browser/pages/reliability.html');
  return (await page.evaluate(
    ([model, d]) =>
      window.reliability.load('hw', { model, device: d, simulate: { refuseJs: true } }, [
        'gpu-adapter',
      ]),
    [FP32, device] as const,
  )) as Outcome<EngineInfo>;
}

for (const as of ['missing', 'spa-fallback'] as const) {
  test(`WASM's build alone (WebGPU's ${as}): auto passes over WebGPU on a hardware adapter`, async ({
    page,
  }) => {
    await withhold(page, ['jspi', 'asyncify'], as);
    const out = await loadOnHardwareAdapter(page, 'auto');
    if (!out.ok) throw new Error(`createClef failed: ${JSON.stringify(out.error)}`);
    expect(out.value.device).toBe('wasm');
    expect(out.value.loadMs.runtime?.build).toBe('onnxruntime-web/wasm');
    expect(out.value.deviceReason).toContain(
      `${RUNTIME_BUILD_FILES.jspi.loader}) is not served under /ort/`,
    );
    expect(out.value.deviceReason).toContain("include 'webgpu' there");
  });
}

test("WASM's build alone: an explicit 'webgpu' names the missing file and the option", async ({
  page,
}) => {
  await withhold(page, ['jspi', 'asyncify'], 'missing');
  const out = await loadOnHardwareAdapter(page, 'webgpu');
  expect(out.ok).toBe(false);
  if (out.ok) return;
  expect(out.error.name).toBe('DownloadError');
  expect(out.error.message).toContain(
    `onnxruntime-web's ${RUNTIME_BUILD_FILES.jspi.loader} is not served`,
  );
  expect(out.error.message).toContain('the webgpu runtime (the device chosen)');
  expect(out.error.message).toMatch(/`devices`.*--devices.*include 'webgpu'/s);
  expect(out.error.details).toMatchObject({ device: 'webgpu', status: 404 });
});

test("WebGPU's build alone: WASM runs on it, and decides", async ({ page }) => {
  await openPage(page);
  await withhold(page, ['plain'], 'missing');
  const info = await mustLoad(page, 'w', { model: FP32, device: 'wasm' });
  expect(info.device).toBe('wasm');
  expect(info.loadMs.runtime?.build).toBe('onnxruntime-web/jspi');
  const got = await mustDecide(page, 'w', GOOD);
  expect(Object.keys(got.response.answers)).toEqual(['late']);
});

test('nothing under /ort/: the device the engine would choose is named, not another', async ({
  page,
}) => {
  await openPage(page);
  await withhold(page, ['plain', 'jspi', 'asyncify'], 'missing');
  const out = await loadClef(page, 'none', { model: FP32, device: 'wasm' });
  expect(out.ok).toBe(false);
  if (out.ok) return;
  expect(out.error.name).toBe('DownloadError');
  expect(out.error.message).toContain(
    `onnxruntime-web's ${RUNTIME_BUILD_FILES.plain.loader} is not served`,
  );
  expect(out.error.message).toContain('the wasm runtime (the device chosen)');
});
