/**
 * An 8-bit embedding table on WASM. Large vocabularies (Clef-flash: 248,320 × 4,096) are gathered
 * from an 8-bit table by `com.microsoft.GatherBlockQuantized`; the engine's WASM build
 * (`onnxruntime-web/wasm`) has that kernel, so such a package lists WASM among its devices and
 * runs there (too big a one is refused by size, not by kernel). Checked on the tiny q4 package
 * converted with `embedding: 'q8'`, against onnxruntime-node on the same package. The asyncify
 * build's CPU side lacks the kernel: asking WASM for that build is an EngineError naming it.
 */
import { expect, test } from '@playwright/test';
import type { PackageManifest } from '../../src/core/manifest.js';
import { loadNodePackage } from '../../src/node/engine.js';
import {
  loadClef,
  maxAbsDiff,
  mustDecide,
  mustLoad,
  openPage,
  randomRequests,
} from './support/engine.js';
import { SEED_ENV, testSeed } from '../support/seed.js';

const Q8_EMBEDDING = '/models/tiny-q8emb/';
/** engine.spec.ts's bound for a q4 package in the browser against onnxruntime-node. */
const Q4_VS_NODE_LOGIT_TOLERANCE = 3e-4;

test('a package with an 8-bit embedding table runs on WASM, as onnxruntime-node does', async ({
  page,
}) => {
  await openPage(page);
  const manifest = (await (
    await page.request.get(`${Q8_EMBEDDING}manifest.json`)
  ).json()) as PackageManifest;
  expect(manifest.variant.devices).toContain('wasm');
  const info = await mustLoad(page, 'q8emb', { model: Q8_EMBEDDING, device: 'wasm' });
  expect(info.device).toBe('wasm');
  const node = await loadNodePackage('public/models/tiny-q8emb');
  try {
    const seed = testSeed('embedding-q8 requests');
    for (const request of randomRequests(seed, 2)) {
      const got = await mustDecide(page, 'q8emb', request);
      const want = await node.decide(request);
      const error = maxAbsDiff(
        got.logits!,
        want.logits.map((l) => Array.from(l)),
      );
      console.log(
        `[q8 embedding] seed ${seed}: WASM vs node max |Δlogit| ${error.toExponential(2)}`,
      );
      expect(error, `${SEED_ENV}=${seed}`).toBeLessThanOrEqual(Q4_VS_NODE_LOGIT_TOLERANCE);
    }
  } finally {
    await node.dispose();
  }

  const asyncify = await loadClef(page, 'asyncify', {
    model: Q8_EMBEDDING,
    device: 'wasm',
    wasmBuild: 'asyncify',
  });
  expect(asyncify.ok).toBe(false);
  if (!asyncify.ok) {
    expect(asyncify.error.code).toBe('engine_failed');
    expect(asyncify.error.message).toMatch(/GatherBlockQuantized/);
  }
});
