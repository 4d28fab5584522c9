// The float16 KV cache: the converter writes each backbone graph a second time with
// its KV in float16 over the same data files; on onnxruntime-node that graph keeps the past it
// is given bit for bit, appends the chunk's keys and values rounded to float16 (checked against
// an independent JS rounding of the float32 graph's), and decides within a written bound of the
// float32 cache, split or not.
import { readFileSync, rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertRelease } from '../../../../src/node/build-runtime.js';
import { loadNodePackage, type NodeEngine } from '../../../../src/node/engine.js';
import { randomRequests } from '../../../../src/build/verify/requests.js';
import { toF16Bits } from '../../../../src/build/safetensors.js';
import { softmaxF32 } from '../../../../src/protocol/answers.js';
import { validateRequest } from '../../../../src/protocol/validate.js';
import { PackageError } from '../../../../src/wire/errors.js';
import type { BackboneGroupEntry, PackageManifest } from '../../../../src/core/manifest.js';
import { backboneSpec, isKvName } from '../../../../src/core/graph-spec.js';
import { writeTinyFixture } from '../../../../tools/fixture/cli.js';

/**
 * Largest |Δp| allowed between the float16 and float32 KV caches on the tiny model. Measured
 * 1.3e-5 to 1.9e-5 over 24 to 40 requests (2026-12-01); keys and values carry ~5e-4 relative rounding each, and
 * the bound leaves 25× for other seeds. docs/clef-recipe.md §5 gives the same figure.
 */
const MAX_ABS_DP = 5e-4;

const work = mkdtempSync(join(tmpdir(), 'kv16-'));
const release = join(work, 'release');
const dirs = { single: join(work, 'single'), split: join(work, 'split'), none: join(work, 'none') };
const engines: Record<string, NodeEngine> = {};

beforeAll(async () => {
  writeTinyFixture(release, { seed: 9, dtype: 'fp32' });
  // onnxruntime-node runs the package graphs: no WASM-prepared ones (they only cost time here).
  const base = {
    dtype: 'fp32',
    name: 'clef-tiny',
    contextTokens: 2048,
    fidelityRequests: 0,
    wasmGraphs: false,
  };
  await convertRelease(release, dirs.single, { ...base, dtype: 'fp32' });
  await convertRelease(release, dirs.split, { ...base, dtype: 'fp32', backboneGroups: [2, 2] });
  await convertRelease(release, dirs.none, { ...base, dtype: 'fp32', kvFloat16: false });
  for (const kvDtype of ['float32', 'float16'] as const) {
    engines[`single-${kvDtype}`] = await loadNodePackage(dirs.single, { kvDtype });
    engines[`split-${kvDtype}`] = await loadNodePackage(dirs.split, { kvDtype });
  }
}, 120_000);

afterAll(async () => {
  for (const e of Object.values(engines)) await e.dispose();
  rmSync(work, { recursive: true, force: true });
});

const manifestOf = (dir: string) =>
  JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as PackageManifest;

describe('the converter', () => {
  it('writes a float16-KV graph beside each graph with KV, over the same data files', () => {
    const single = manifestOf(dirs.single);
    const roles = single.files.map((f) => `${f.role} ${f.path}`);
    expect(roles).toContain('backbone backbone.onnx');
    expect(roles).toContain('backbone-kv16 backbone.kv16.onnx');
    expect(single.files.filter((f) => f.role === 'backbone-data')).toHaveLength(1);
    // The split package: a group without a full-attention layer (the embedding's) has no KV and
    // no kv16 graph; every group with KV has one.
    const split = manifestOf(dirs.split);
    const groups = (split.graphs as { backboneGroups: BackboneGroupEntry[] }).backboneGroups;
    const withKv = groups.flatMap((g, k) => (g.inputs.some((t) => isKvName(t.name)) ? [k] : []));
    expect(withKv.length).toBeGreaterThan(0);
    expect(withKv.length).toBeLessThan(groups.length);
    const kv16Groups = split.files.filter((f) => f.role === 'backbone-kv16').map((f) => f.group);
    expect(kv16Groups).toEqual(withKv);
    // Off: none, and the weights are counted the same either way.
    const none = manifestOf(dirs.none);
    expect(none.files.some((f) => f.role === 'backbone-kv16')).toBe(false);
    expect(single.variant.weightBytes).toBe(none.variant.weightBytes);
  });
});

describe('the float16-KV graph on onnxruntime-node', () => {
  const layers = () => manifestOf(dirs.single).architecture.layerTypes;
  const fullLayer = () => layers().indexOf('full_attention');

  async function sessions() {
    const options = { executionProviders: ['cpu'], graphOptimizationLevel: 'all' as const };
    return {
      f32: await ort.InferenceSession.create(join(dirs.single, 'backbone.onnx'), options),
      f16: await ort.InferenceSession.create(join(dirs.single, 'backbone.kv16.onnx'), options),
    };
  }

  function emptyFeeds(session: ort.InferenceSession, kv16: boolean, ids: number[]) {
    const spec = backboneSpec(manifestOf(dirs.single));
    const feeds: Record<string, ort.Tensor> = {
      input_ids: new ort.Tensor('int64', BigInt64Array.from(ids.map(BigInt)), [1, ids.length]),
    };
    for (const input of spec.inputs) {
      if (input.name === 'input_ids') continue;
      const dims = input.shape.map((d) => (typeof d === 'number' ? d : 0));
      const n = dims.reduce((a, d) => a * d, 1);
      const half = kv16 && /^past_(key|value)\./.test(input.name);
      feeds[input.name] = half
        ? new ort.Tensor('float16', new Uint16Array(n), dims)
        : new ort.Tensor('float32', new Float32Array(n), dims);
    }
    expect(Object.keys(feeds).sort()).toEqual([...session.inputNames].sort());
    return feeds;
  }

  it('appends the chunk rounded to float16 and carries the past bit for bit', async () => {
    const { f32, f16 } = await sessions();
    const i = fullLayer();
    const ids = Array.from({ length: 9 }, (_, k) => (k * 37 + 5) % 200);
    const a = await f32.run(emptyFeeds(f32, false, ids));
    const b = await f16.run(emptyFeeds(f16, true, ids));
    for (const kind of ['key', 'value']) {
      const wide = a[`present_${kind}.${i}`]!;
      const half = b[`present_${kind}.${i}`]!;
      expect(half.type).toBe('float16');
      expect(half.dims).toEqual(wide.dims);
      const want = Array.from(wide.data as Float32Array, toF16Bits);
      expect(Array.from(half.data as Uint16Array)).toEqual(want);
    }
    // A second chunk on that float16 past: the first 9 positions come back unchanged.
    const next = [11, 12, 13];
    const feeds = emptyFeeds(f16, true, next);
    for (const name of f16.inputNames) {
      if (name === 'input_ids') continue;
      feeds[name] = b[name.startsWith('past_') ? `present_${name.slice(5)}` : `present_${name}`]!;
    }
    const c = await f16.run(feeds);
    const past = b[`present_key.${i}`]!;
    const grown = c[`present_key.${i}`]!;
    expect(grown.dims[2]).toBe(ids.length + next.length);
    const [, heads, , dim] = past.dims as number[];
    for (let h = 0; h < heads!; h++) {
      const was = (past.data as Uint16Array).subarray(h * 9 * dim!, (h + 1) * 9 * dim!);
      const now = (grown.data as Uint16Array).subarray(h * 12 * dim!, h * 12 * dim! + 9 * dim!);
      expect(Array.from(now)).toEqual(Array.from(was));
    }
    await Promise.all([f32.release(), f16.release()]);
  });
});

describe('decisions with the float16 KV cache', () => {
  const requests = () =>
    // Few and short: 7-token chunks carry the float16 state through dozens of runs each.
    randomRequests(10, 3, {
      model: 'clef-tiny',
      tokenizer: engines['single-float32']!.tokenizer,
      contextTokens: 2048,
      longStateTokens: [100, 300],
      longStateShare: 0.5,
      maxQuestions: 3,
    });

  it(`stay within |Δp| ≤ ${MAX_ABS_DP} of float32, whole and in 7-token chunks`, async () => {
    let max = 0;
    let same = 0;
    let questions = 0;
    for (const [k, body] of requests().entries()) {
      const chunkTokens = k % 2 === 0 ? 256 : 7;
      const request = validateRequest(body, { models: ['clef-tiny'] });
      const a = await engines['single-float32']!.logits(request, { chunkTokens });
      const b = await engines['single-float16']!.logits(request, { chunkTokens });
      a.logits.forEach((l, q) => {
        const p = softmaxF32(l);
        const r = softmaxF32(b.logits[q]!);
        for (let j = 0; j < p.length; j++) max = Math.max(max, Math.abs(p[j]! - r[j]!));
        const top = (x: Float32Array) => x.indexOf(Math.max(...x));
        same += top(p) === top(r) ? 1 : 0;
        questions++;
      });
    }
    console.log(`[kv16] max |Δp| ${max.toExponential(2)}, same answers ${same}/${questions}`);
    expect(max).toBeLessThanOrEqual(MAX_ABS_DP);
    // Not bit-identical: a zero would mean the float16 graphs were never used.
    expect(max).toBeGreaterThan(0);
  });

  it('are byte for byte the same split and single', async () => {
    for (const body of requests().slice(0, 4)) {
      const a = await engines['single-float16']!.decide(body, { chunkTokens: 16 });
      const b = await engines['split-float16']!.decide(body, { chunkTokens: 16 });
      expect(b.json).toBe(a.json);
    }
  });

  it('are refused with a clear error for a package without float16-KV graphs', async () => {
    await expect(loadNodePackage(dirs.none, { kvDtype: 'float16' })).rejects.toThrow(PackageError);
    await expect(loadNodePackage(dirs.none, { kvDtype: 'float16' })).rejects.toThrow(
      /no float16-KV backbone graphs: convert it again/,
    );
  });
});
