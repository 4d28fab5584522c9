/**
 * WebGPU in Firefox ESR, where this machine lets Firefox have it: ESR ships it off on Linux
 * (no `navigator.gpu`), so the suite's `tuned` Firefox turns it on (FIREFOX_WEBGPU_PREFS); on
 * a machine without a GPU its adapter is Mesa's lavapipe (software Vulkan, `apt-get install
 * mesa-vulkan-drivers`, which .ci/run installs). Where the suite's own setup is at fault the case
 * fails: no `navigator.gpu` (the prefs no longer turn WebGPU on), or no adapter although a Vulkan
 * driver is installed (/usr/share/vulkan/icd.d). Only a machine with no Vulkan driver skips it,
 * saying what to install; `npm test` counts and names the skip in its closing lines. The engine
 * on 'webgpu' must answer like WASM and the float64 reference, within the tolerances the
 * Chromium suite sets for WebGPU.
 */
import { existsSync, readdirSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Page } from 'puppeteer-core';
import {
  CROSS_DEVICE_LOGIT_TOLERANCE,
  FP32,
  TOLERANCE,
  expectResponseNear,
  maxAbsDiff,
  randomRequests,
  reference,
  type Outcome,
} from '../browser/support/engine.js';
import type { DecisionWire } from '../../src/wire/wire.js';
import type { EngineInfo } from '../../src/wire/telemetry.js';
import { FIREFOX_WEBGPU_PREFS, WEBGPU_INSTALL_HINT } from '../../tools/firefox.mjs';
import { connectFirefox, openTestPage, type Firefox } from './support/firefox.js';

const REQUESTS = randomRequests(31, 2);
let firefox: Firefox;
let page: Page;
/** What the page found: WebGPU with an adapter, without one, or no WebGPU at all. */
let found: 'adapter' | 'no-adapter' | 'no-navigator-gpu' = 'no-navigator-gpu';

/** Vulkan drivers (ICD manifests) installed on this machine, where Mesa and GPU vendors put them. */
function vulkanDrivers(): string[] {
  return ['/usr/share/vulkan/icd.d', '/etc/vulkan/icd.d'].flatMap((dir) =>
    existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json')) : [],
  );
}

beforeAll(async () => {
  firefox = await connectFirefox('tuned');
  page = await firefox.newPage();
  await openTestPage(page, '/test/firefox/pages/firefox.html');
  found = await page.evaluate(async () => {
    const gpu = (navigator as any).gpu;
    if (!gpu) return 'no-navigator-gpu';
    return (await gpu.requestAdapter()) ? 'adapter' : 'no-adapter';
  });
});
afterAll(async () => {
  await firefox?.close();
});

async function decisions(name: string, device: 'wasm' | 'webgpu') {
  const loaded = (await page.evaluate(
    (n, m, d) => window.enginePage.load(n, { model: m, device: d, warmUp: false }),
    name,
    FP32,
    device,
  )) as Outcome<EngineInfo>;
  if (!loaded.ok) throw new Error(`createClef on ${device}: ${JSON.stringify(loaded.error)}`);
  expect(loaded.value.device).toBe(device);
  const outs = (await page.evaluate(
    (n, r) => window.enginePage.decideAll(n, r),
    name,
    REQUESTS,
  )) as Outcome<DecisionWire>[];
  return outs.map((o) => {
    if (!o.ok) throw new Error(`decide on ${device}: ${JSON.stringify(o.error)}`);
    return o.value;
  });
}

it('the engine on WebGPU answers like WASM and the float64 reference', async (ctx) => {
  // The suite's own setup at fault: a failure that says so.
  expect(
    found,
    `navigator.gpu is missing in the tuned Firefox although the suite sets ${JSON.stringify(FIREFOX_WEBGPU_PREFS)} ` +
      '(tools/firefox.mjs): these prefs no longer turn WebGPU on in this Firefox',
  ).not.toBe('no-navigator-gpu');
  const drivers = vulkanDrivers();
  if (found === 'no-adapter' && drivers.length > 0) {
    expect.fail(
      `Firefox found no WebGPU adapter although Vulkan drivers are installed (${drivers.join(', ')}): ` +
        "check the suite's Firefox prefs (tools/firefox.mjs) and that a driver works here " +
        '(`vulkaninfo --summary`, package vulkan-tools)',
    );
  }
  // This machine lacks a driver: skipped, and counted and named in `npm test`'s closing lines.
  if (found === 'no-adapter') {
    const why = `WebGPU in Firefox skipped: no Vulkan driver on this machine. ${WEBGPU_INSTALL_HINT}`;
    console.warn(`[firefox] ${why}`);
    ctx.skip(why);
  }
  // `auto` passes over a software adapter (lavapipe says it is one), and says so; the tiny
  // package itself goes to the js device.
  const auto = (await page.evaluate(
    (m) => window.enginePage.load('auto', { model: m, warmUp: false }),
    FP32,
  )) as Outcome<EngineInfo>;
  if (!auto.ok) throw new Error(`createClef (auto): ${JSON.stringify(auto.error)}`);
  expect(auto.value.device).toBe('js');
  expect(auto.value.fallbackReason).toMatch(/is a software fallback/);
  await page.evaluate(() => window.enginePage.dispose('auto'));
  const gpu = await decisions('gpu', 'webgpu');
  const cpu = await decisions('cpu', 'wasm');
  const info = await page.evaluate(async () => (await window.enginePage.get('gpu').info()).adapter);
  console.log(`[firefox] WebGPU adapter: ${info}`);
  for (const [i, d] of gpu.entries()) {
    const ref = await reference(REQUESTS[i]);
    expect(maxAbsDiff(d.logits!, ref.logits)).toBeLessThanOrEqual(TOLERANCE.webgpu.fp32.logit);
    expectResponseNear(d.response, ref, TOLERANCE.webgpu.fp32.probability);
    expect(maxAbsDiff(d.logits!, cpu[i]!.logits!)).toBeLessThanOrEqual(
      CROSS_DEVICE_LOGIT_TOLERANCE,
    );
  }
}, 180_000);
