/**
 * Errors that say what to do when a file clef-web needs is not served (a new app
 * without the Vite plugin or `npx clef-web assets`): the bundled model's manifest, onnxruntime's
 * runtime files under /ort/ (naming the device the engine had chosen, not one it fell through
 * to), and the engine's worker script.
 */
import { expect, test } from '@playwright/test';
import { loadClef, openPage } from './support/engine.js';

const BUNDLED = '/clef-web/models/clef-nano/';
const FIX = /clef-web\/vite plugin.*npx clef-web assets <dir>/s;

test('a 404 for the bundled model names the plugin and `npx clef-web assets`', async ({ page }) => {
  await openPage(page);
  await page.context().route(`**${BUNDLED}manifest.json`, (r) => r.fulfill({ status: 404 }));
  const out = await loadClef(page, 'm', { model: BUNDLED, device: 'wasm' });
  expect(out.ok).toBe(false);
  if (out.ok) return;
  expect(out.error.name).toBe('DownloadError');
  expect(out.error.code).toBe('download_failed');
  expect(out.error.message).toContain('manifest.json: HTTP 404');
  expect(out.error.message).toMatch(FIX);
  expect(out.error.details).toMatchObject({ file: 'manifest.json', status: 404 });
});

test('another package not served (a 404, or an HTML fallback page) says to serve its folder', async ({
  page,
}) => {
  await openPage(page);
  // Vite's dev server answers an unknown path with index.html.
  const fallback = await loadClef(page, 'a', { model: '/models/not-there/', device: 'wasm' });
  expect(fallback.ok).toBe(false);
  if (fallback.ok) return;
  expect(fallback.error.code).toBe('package_invalid');
  expect(fallback.error.message).toContain('manifest.json is an HTML page, not a package manifest');
  expect(fallback.error.message).toContain("put the converted package's folder");
  // A static server's 404.
  await page.context().route('**/models/not-there/**', (r) => r.fulfill({ status: 404 }));
  const missing = await loadClef(page, 'b', { model: '/models/not-there/', device: 'wasm' });
  expect(missing.ok).toBe(false);
  if (missing.ok) return;
  expect(missing.error.code).toBe('download_failed');
  expect(missing.error.message).toContain('manifest.json: HTTP 404');
  expect(missing.error.message).toContain("put the converted package's folder");
});

test('no /ort/: the error names the missing file, the device chosen and the fix', async ({
  page,
}) => {
  await openPage(page);
  await page.context().route('**/ort/**', (r) => r.fulfill({ status: 404 }));
  // The bundled model on the js device needs nothing of /ort/: it loads.
  const js = await loadClef(page, 'js', { model: BUNDLED, device: 'auto' });
  expect(js.ok && js.value.device).toBe('js');
  // WASM does: explicitly asked for (or where the js device cannot run the package).
  const out = await loadClef(page, 'm', { model: BUNDLED, device: 'wasm' });
  expect(out.ok).toBe(false);
  if (out.ok) return;
  expect(out.error.name).toBe('DownloadError');
  expect(out.error.code).toBe('download_failed');
  expect(out.error.message).toContain("onnxruntime-web's ort-wasm-simd-threaded.mjs is not served");
  expect(out.error.message).toContain('the wasm runtime (the device chosen)');
  expect(out.error.message).not.toMatch(/webgpu|asyncify/i);
  expect(out.error.message).toMatch(FIX);
  expect(out.error.details).toMatchObject({ device: 'wasm', status: 404 });
});

test("the worker's script not served: WorkerLostError saying so, not 'crashed'", async ({
  page,
}) => {
  await openPage(page);
  // The checkout's dev server serves the worker from its source (the test pages' instrumented
  // one, test/support/instrumented-worker/, and the shipped one); a page without it gets a 404.
  const workerScript =
    /\/(workers\/clef|test\/support\/instrumented-worker\/instrumented)\.worker\.ts/;
  await page.context().route(workerScript, (r) => r.fulfill({ status: 404 }));
  const out = await loadClef(page, 'm', { model: BUNDLED, device: 'wasm' });
  expect(out.ok).toBe(false);
  if (out.ok) return;
  expect(out.error.name).toBe('WorkerLostError');
  expect(out.error.message).toContain("the worker's script (clef.worker.js)");
  expect(out.error.message).toContain('npx clef-web assets <dir>');
  expect(out.error.message).not.toContain('crashed');
});
