/**
 * A split backbone in the browser: the package converted with one graph per layer
 * group (/models/tiny-split/, from the same release as /models/tiny/) decides byte for byte as
 * the single-graph package on the same device, on WASM and on WebGPU (SwiftShader), where the
 * residual stream passes between the group sessions as GPU buffers; and the engine loads it one
 * group at a time, holding at most one group's bytes (beside the lexicon's rows) while it does.
 */
import { readFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import type { ManifestFile, PackageManifest } from '../../src/core/manifest.js';
import { deviceOf } from '../../src/core/devices.js';
import {
  DEVICES,
  deviceTag,
  FP32,
  MODEL,
  Q4,
  mustDecide,
  mustLoad,
  infoOf,
  openPage,
  randomRequests,
  stateOfLength,
} from './support/engine.js';

const SPLIT = { fp32: '/models/tiny-split/', q4: '/models/tiny-q4-split/' } as const;
const SINGLE = { fp32: FP32, q4: Q4 } as const;

function manifestOf(url: string): PackageManifest {
  return JSON.parse(readFileSync(`public${url}manifest.json`, 'utf8')) as PackageManifest;
}

const bytesOf = (files: ManifestFile[]) => files.reduce((n, f) => n + f.bytes, 0);

/** Each request on both packages, twice (a prefix-cache miss, then a hit): same bytes. */
async function expectSame(page: Page, single: string, split: string, requests: unknown[]) {
  for (const request of requests) {
    for (let k = 0; k < 2; k++) {
      const a = await mustDecide(page, single, request);
      const b = await mustDecide(page, split, request);
      expect(b.timings.prefixHit).toBe(k === 1);
      expect(a.timings.prefixHit).toBe(k === 1);
      expect(b.json).toBe(a.json);
      expect(b.logits).toEqual(a.logits);
    }
  }
}

for (const device of DEVICES) {
  test(
    `split backbone on ${device}: byte-identical decisions, one group held at a time`,
    { tag: deviceTag(device) },
    async ({ page }) => {
      test.setTimeout(deviceOf(device).gpu ? 600_000 : 200_000);
      await openPage(page);
      // SwiftShader runs WebGPU slowly on the CPU: fewer and shorter requests there.
      const short = randomRequests(16016, deviceOf(device).gpu ? 1 : 3, 10);
      const questions = (short[0] as { questions: object }).questions;
      // Two 256-token chunks of state: the running state crosses chunks in every group.
      const long = { model: MODEL, state: await stateOfLength(questions, 420), questions };
      // On SwiftShader (slow, and CI's time) only q4, the dtype WebGPU users load.
      const dtypes = deviceOf(device).gpu ? (['q4'] as const) : (['fp32', 'q4'] as const);
      for (const dtype of dtypes) {
        const single = `${dtype}-single`;
        const split = `${dtype}-split`;
        const options = { device, cache: false, warmUp: false } as const;
        const one = await mustLoad(page, single, { model: SINGLE[dtype], ...options });
        const info = await mustLoad(page, split, { model: SPLIT[dtype], ...options });
        expect([one.device, info.device]).toEqual([device, device]);

        // Loaded group by group: the embedding's graph, then one per layer. A float32-KV load (the
        // default here) fetches no float16-KV graph; WASM fetches each graph's WASM-prepared twin.
        const m = manifestOf(SPLIT[dtype]);
        const created = (pkg: PackageManifest, graph: ManifestFile) =>
          (deviceOf(device).preparedGraphs &&
            pkg.files.find((t) => t.role === 'wasm-graph' && t.replaces === graph.path)) ||
          graph;
        const heldFor = (pkg: PackageManifest, k: number | undefined) =>
          bytesOf(pkg.files.filter((f) => f.group === k && f.role === 'backbone-data')) +
          created(
            pkg,
            pkg.files.find((f) => f.group === k && f.role === 'backbone')!,
          ).bytes;
        const groupBytes = [0, 1, 2, 3, 4].map((k) => heldFor(m, k));
        expect(info.loadMs.backboneGroups.map((g) => [g.group, g.layers, g.bytes])).toEqual([
          [0, [0, 0], groupBytes[0]],
          [1, [0, 1], groupBytes[1]],
          [2, [1, 2], groupBytes[2]],
          [3, [2, 3], groupBytes[3]],
          [4, [3, 4], groupBytes[4]],
        ]);
        // Each group's bytes came over HTTP (cache: false), which takes measurable time at the
        // isolated page's 5 µs timer resolution; and the groups' fetches and creations happen one
        // after another inside the load, so together they fit in its total (a unit or a double
        // count gone wrong breaks that).
        for (const g of info.loadMs.backboneGroups) {
          expect(g.createMs).toBeGreaterThan(0);
          expect(g.fetchMs).toBeGreaterThan(0);
        }
        const groupsMs = info.loadMs.backboneGroups.reduce((n, g) => n + g.fetchMs + g.createMs, 0);
        expect(groupsMs).toBeLessThanOrEqual(info.loadMs.total);
        expect(Object.keys(info.loadMs.sessions).sort()).toEqual([
          'backbone.0',
          'backbone.1',
          'backbone.2',
          'backbone.3',
          'backbone.4',
          'headDecide',
          'headMemory',
        ]);
        // Held at once: the lexicon (kept) and the biggest of one group, the head graphs with their
        // data (fetched once for both), or the tokenizer files; never the whole backbone.
        const role = (r: string) => bytesOf(m.files.filter((f) => f.role === r));
        const lexicon = role('lexicon');
        const bound =
          lexicon +
          Math.max(
            ...groupBytes,
            role('head-memory') + role('head-decide') + role('head-data'),
            role('tokenizer') + role('tokenizer-config'),
          );
        expect(info.loadMs.peakHeldBytes).toBeLessThanOrEqual(bound);
        const backbone = role('backbone') + role('backbone-data');
        expect(info.loadMs.peakHeldBytes).toBeLessThan(lexicon + backbone);
        // The single graph is one group: all of its backbone is held while its session is created.
        const singleBackbone = heldFor(manifestOf(SINGLE[dtype]), undefined);
        expect(one.loadMs.backboneGroups).toHaveLength(1);
        expect(one.loadMs.peakHeldBytes).toBeGreaterThanOrEqual(singleBackbone);

        await expectSame(page, single, split, [...short, long]);
        for (const name of [single, split]) {
          const c = (await infoOf(page, name)).counters;
          expect(c.pending).toBe(0);
          // No residual stream or state left behind: only what the prefix cache keeps.
          expect(c.liveTensors).toBe(c.cachedTensors);
        }
        if (deviceOf(device).gpu) {
          // The residual stream stays on the GPU: both read back the same bytes (the logits, and
          // nothing per group).
          const a = (await infoOf(page, single)).counters.readbackBytes;
          const b = (await infoOf(page, split)).counters.readbackBytes;
          expect(b).toBe(a);
        }
      }
    },
  );
}
