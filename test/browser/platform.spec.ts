import { expect, test } from '@playwright/test';

// The platform the engine stands on: a cross-origin-isolated page (threads need it) and a real
// WebGPU adapter (SwiftShader here).
test('dev server is cross-origin isolated', async ({ page }) => {
  const response = await page.goto('/');
  expect(response?.headers()['cross-origin-opener-policy']).toBe('same-origin');
  expect(response?.headers()['cross-origin-embedder-policy']).toBe('require-corp');
  expect(await page.evaluate(() => globalThis.crossOriginIsolated)).toBe(true);
});

test('WebGPU adapter is available on localhost', async ({ page }) => {
  await page.goto('/');
  const info = await page.evaluate(async () => {
    const gpu = (navigator as any).gpu;
    if (!gpu) return null;
    const adapter = await gpu.requestAdapter();
    if (!adapter) return null;
    return { f16: adapter.features.has('shader-f16') };
  });
  expect(info).not.toBeNull();
});
