/**
 * The WebGPU preflight: the converter records a package's biggest tensor, and the
 * engine compares it with the adapter's buffer limits once the manifest is read. A tensor that
 * cannot fit is refused with a typed error naming the limit before any other file is fetched;
 * `auto` moves to WASM instead and says why. The adapter's limits are narrowed with the
 * `simulate.adapterLimitBytes` hook (SwiftShader's real limits hold the tiny fixture easily).
 */
import { expect, test, type Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { FP32, loadClef, openPage, type ErrorData } from './support/engine.js';

const manifest = JSON.parse(readFileSync('public/models/tiny/manifest.json', 'utf8'));
const largest = manifest.variant.largestTensor as { name: string; bytes: number };

/** Paths under the package the page and its workers requested while `work` ran. */
async function packageRequests(page: Page, work: () => Promise<unknown>): Promise<string[]> {
  const paths: string[] = [];
  const note = (r: { url(): string }) => {
    const path = new URL(r.url()).pathname;
    if (path.startsWith(FP32)) paths.push(path.slice(FP32.length));
  };
  page.context().on('request', note);
  try {
    await work();
  } finally {
    page.context().off('request', note);
  }
  return paths;
}

test('a tensor over the adapter limit is refused before any data file is fetched', async ({
  page,
}) => {
  expect(largest.bytes).toBeGreaterThan(4096);
  await openPage(page);
  let out!: Awaited<ReturnType<typeof loadClef>>;
  const paths = await packageRequests(page, async () => {
    out = await loadClef(page, 'gpu', {
      model: FP32,
      device: 'webgpu',
      simulate: { adapterLimitBytes: 4096 },
    });
  });
  expect(out.ok).toBe(false);
  const error = (out as { error: ErrorData }).error;
  expect(error).toMatchObject({ name: 'ModelTooLargeError', code: 'model_too_large' });
  expect(error.message).toContain(
    `its largest tensor (${largest.name}, ${largest.bytes.toLocaleString('en-US')} bytes) exceeds this adapter's maxStorageBufferBindingSize of 4,096 bytes`,
  );
  expect(paths).toEqual(['manifest.json']);
});

test('auto passes over an adapter whose limits are too small, and says so', async ({ page }) => {
  await openPage(page);
  const out = await loadClef(page, 'auto', {
    model: FP32,
    device: 'auto',
    // The js device would take the tiny package first: here it refuses it, as for an op it lacks.
    simulate: { adapterLimitBytes: 4096, refuseJs: true },
  });
  if (!out.ok) throw new Error(JSON.stringify(out.error));
  const info = out.value;
  expect(info.device).toBe('wasm');
  expect(info.fallbackReason).toMatch(/webgpu skipped: its largest tensor \(embed_tokens/);
});
