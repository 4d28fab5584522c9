/**
 * A second visit starts from the compiled code of the first. onnxruntime's wasm is
 * served cacheable (the clef-web/vite plugin: `Cache-Control: no-cache` + ETag) and streamed
 * from its fetch response into `WebAssembly.instantiateStreaming`, so Chromium keeps V8's code
 * for it beside the HTTP cache entry, and the next visit in the same profile deserialises that
 * code instead of compiling. Observed through Chromium's own trace events and its profile's
 * `Code Cache/wasm` folder, never a timing. (The engine used to hand onnxruntime the wasm from
 * Cache Storage through a wrapped fetch: no trace ever showed a cached module then.)
 */
import { chromium, expect, test } from '@playwright/test';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../../tools/chromium.mjs';
import { startWasmTrace } from '../../tools/bench/wasm-trace.js';
import { FP32, MODEL } from './support/engine.js';

const REQUEST = {
  model: MODEL,
  state: 'Where is my parcel?',
  questions: { late: { type: 'noul' } },
};

function bytesUnder(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += statSync(join(entry.parentPath, entry.name)).size;
  }
  return total;
}

/** One visit: load the tiny package on WASM, three decisions, dispose; the trace's wasm events. */
async function visit(profile: string, baseURL: string, settle?: () => Promise<void>) {
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    args: CHROMIUM_ARGS,
    baseURL,
  });
  try {
    const page = await context.newPage();
    await page.routeWebSocket(/.*/, () => undefined);
    const trace = await startWasmTrace(context, page);
    await page.goto('/test/browser/pages/harness.html');
    await expect(page.locator('#status')).toHaveText('ready');
    const wasmSource = await page.evaluate(
      async ({ model, request }) => {
        type C = {
          systemone(r: object): Promise<unknown>;
          info(): Promise<{ loadMs: { runtime: { wasmSource: string } | null } }>;
          dispose(): Promise<void>;
        };
        const w = window as unknown as { clefWeb: { createClef(o: object): Promise<C> } };
        const clef = await w.clefWeb.createClef({ model, device: 'wasm' });
        // Every question type and a few hundred tokens: V8 caches a module once about 1 MB
        // of its code has tiered up, and two short noul decisions sat near that line.
        const long = 'The parcel left the depot on Monday and nobody has called since. '.repeat(30);
        await clef.systemone(request);
        await clef.systemone({ ...request, state: 'My card was charged twice.' });
        await clef.systemone({
          ...request,
          state: long,
          questions: {
            team: { type: 'choice', criteria: { billing: null, shipping: null, other: null } },
            mood: { type: 'score', criteria: ['calm', 'upset', 'angry'] },
          },
        });
        (window as unknown as { clef: C }).clef = clef;
        return (await clef.info()).loadMs.runtime?.wasmSource;
      },
      { model: FP32, request: REQUEST },
    );
    // V8 serialises the module in the background, while the page lives, once enough of it has
    // tiered up: with the WASM-prepared graphs (no optimiser run at load) that is after the
    // decisions, so the page stays open until the cache is written (a page in use does).
    await settle?.();
    await page.evaluate(() =>
      (window as unknown as { clef: { dispose(): Promise<void> } }).clef.dispose(),
    );
    return { events: await trace.stop(), wasmSource };
  } finally {
    await context.close();
  }
}

test('the second visit reuses the wasm code the first compiled', async ({ baseURL }) => {
  test.setTimeout(240_000);
  const profile = mkdtempSync(join(tmpdir(), 'clef-wasm-code-cache-'));
  const wasmCache = join(profile, 'Default', 'Code Cache', 'wasm');
  try {
    const first = await visit(profile, baseURL!, async () => {
      await expect
        .poll(() => bytesUnder(wasmCache), { timeout: 60_000 })
        .toBeGreaterThan(1_000_000);
    });
    expect(first.wasmSource).toBe('network');
    expect(first.events['v8.wasm.cachedModule'] ?? 0).toBeGreaterThan(0);
    const second = await visit(profile, baseURL!);
    expect(second.wasmSource).toBe('cache');
    expect(second.events['v8.wasm.moduleCacheHit'] ?? 0).toBe(1);
    expect(second.events['v8.wasm.moduleCacheInvalid'] ?? 0).toBe(0);
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
});
