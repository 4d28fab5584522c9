// The js device's whole decisions in Node, on a fresh random tiny release each run
// (linear-attention, full-attention and MLP layers): the fp32 package within 1e-5 (max |Δp|) of
// the float64 reference, whole and fed in small chunks; the fp16, q8 and q4 packages (q4 with its
// 8-bit embedding table) and the float16-KV graphs within 1e-4 of onnxruntime-node on the same
// package; a split backbone exactly as the single graph; and the bundled, trained clef-nano.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConvertOptions } from '../../../src/build/convert/package.js';
import { convertRelease } from '../../../src/node/build-runtime.js';
import { loadNodePackage, type NodeEngine } from '../../../src/node/engine.js';
import { referenceDecide } from '../../../src/build/reference/decide.js';
import { validateRequest } from '../../../src/protocol/validate.js';
import { writeTinyFixture } from '../../../tools/fixture/cli.js';
import { TINY_TEXT, type TextShape } from '../../../tools/fixture/config.js';
import { randomRequests } from '../../browser/support/engine.js';
import { testSeed } from '../../support/seed.js';

const SEED = testSeed('js device packages (release weights and requests)');
const where = `(seed ${SEED})`;
const MODEL = 'clef-tiny';

/**
 * The layout of a trained package with the order layer (src/build/train/construct.ts): a Gated
 * DeltaNet layer between two full-attention layers, at small odd sizes (hidden 75: ragged
 * quantisation blocks; key heads of dim 4 shared by 4 value heads of dim 8; rotary over 2 of 8
 * head dims).
 */
const SMALL_ODD: TextShape = {
  ...TINY_TEXT,
  hidden_size: 75,
  intermediate_size: 51,
  num_hidden_layers: 3,
  layer_types: ['full_attention', 'linear_attention', 'full_attention'],
  num_attention_heads: 3,
  num_key_value_heads: 3,
  head_dim: 8,
  mrope_section: [1, 0, 0],
  linear_num_key_heads: 1,
  linear_num_value_heads: 4,
  linear_key_head_dim: 4,
  linear_value_head_dim: 8,
  linear_conv_kernel_dim: 4,
};

let work: string;
let release: string;
let oddRelease: string;
const packages = new Map<string, string>();

async function convert(
  name: string,
  options: Partial<ConvertOptions>,
  from = release,
): Promise<string> {
  const dir = join(work, name);
  await convertRelease(from, dir, {
    dtype: 'fp32',
    name: MODEL,
    fidelityRequests: 0,
    wasmGraphs: false,
    ...options,
  } as ConvertOptions);
  packages.set(name, dir);
  return dir;
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'clef-js-device-'));
  release = join(work, 'release');
  writeTinyFixture(release, { dtype: 'fp32', seed: SEED });
  await convert('fp32', { dtype: 'fp32' });
  await convert('fp16', { dtype: 'fp16' });
  await convert('q8', { dtype: 'q8' });
  await convert('q4', { dtype: 'q4', embedding: 'q8' });
  await convert('fp32-split', { dtype: 'fp32', backboneGroups: [1, 1, 2] });
  oddRelease = join(work, 'release-odd');
  writeTinyFixture(oddRelease, { dtype: 'fp32', seed: SEED + 3, text: SMALL_ODD });
  await convert('odd-fp32', { dtype: 'fp32' }, oddRelease);
  await convert('odd-q4', { dtype: 'q4' }, oddRelease);
}, 120_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Requests of every question type; the last one's state spans several 256-token chunks. */
const REQUESTS = [...randomRequests(SEED, 4, 12), ...randomRequests(SEED + 1, 1, 300)].map((r) => ({
  ...r,
  model: MODEL,
}));

function softmax(logits: ArrayLike<number>): number[] {
  const max = Math.max(...Array.from(logits));
  const e = Array.from(logits, (v) => Math.exp(v - max));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / sum);
}

/** max |Δp| over every option of every question of the requests. */
async function maxDp(
  engine: NodeEngine,
  want: (request: (typeof REQUESTS)[number]) => Promise<ArrayLike<number>[]>,
  chunkTokens?: number,
  requests = REQUESTS,
): Promise<number> {
  let worst = 0;
  for (const request of requests) {
    const got = await engine.decide(request, chunkTokens ? { chunkTokens } : {});
    const ref = await want(request);
    expect(got.logits.length).toBe(ref.length);
    got.logits.forEach((l, q) => {
      const p = softmax(l);
      const r = softmax(ref[q]!);
      p.forEach((v, i) => (worst = Math.max(worst, Math.abs(v - r[i]!))));
    });
  }
  return worst;
}

const references = new Map<string, Promise<Float64Array[]>>();
/** The float64 reference's logits of `from`'s weights (computed once per request). */
function referenceOf(from: () => string) {
  return (request: (typeof REQUESTS)[number]): Promise<Float64Array[]> => {
    const key = `${from()} ${REQUESTS.indexOf(request)}`;
    let ref = references.get(key);
    if (!ref) {
      const valid = validateRequest(request, { models: [MODEL] });
      ref = referenceDecide(from(), valid).then((d) => d.logits);
      references.set(key, ref);
    }
    return ref;
  };
}
const reference = referenceOf(() => release);

describe('the js device in Node', () => {
  it('runs fp32 within 1e-5 of the float64 reference, whole and in 7-token chunks', async () => {
    const engine = await loadNodePackage(packages.get('fp32')!, { runtime: 'js' });
    try {
      expect(engine.runtime).toBe('js');
      const whole = await maxDp(engine, reference);
      const chunked = await maxDp(engine, reference, 7);
      console.log(
        `js fp32 vs float64 reference: max |Δp| ${whole.toExponential(2)} whole, ${chunked.toExponential(2)} in 7-token chunks`,
      );
      expect(whole, where).toBeLessThanOrEqual(1e-5);
      expect(chunked, where).toBeLessThanOrEqual(1e-5);
    } finally {
      await engine.dispose();
    }
  });

  it.each([
    ['fp16', {}],
    ['q8', {}],
    ['q4', {}],
    ['fp32', { kvDtype: 'float16' as const }],
  ])('runs %s %o within 1e-4 of onnxruntime-node on the same package', async (name, extra) => {
    const dir = packages.get(name)!;
    const js = await loadNodePackage(dir, { runtime: 'js', ...extra });
    const native = await loadNodePackage(dir, { runtime: 'onnxruntime', ...extra });
    try {
      expect([js.runtime, native.runtime]).toEqual(['js', 'onnxruntime-node']);
      const dp = await maxDp(js, async (r) => (await native.decide(r)).logits);
      console.log(
        `js ${name} ${JSON.stringify(extra)} vs onnxruntime-node: max |Δp| ${dp.toExponential(2)}`,
      );
      expect(dp, where).toBeLessThanOrEqual(1e-4);
    } finally {
      await js.dispose();
      await native.dispose();
    }
  });

  it('runs the trained layout at small odd sizes (full, linear, full attention): fp32 within 1e-5 of the float64 reference, q4 within 1e-4 of onnxruntime-node', async () => {
    const fp32 = await loadNodePackage(packages.get('odd-fp32')!, { runtime: 'js' });
    const q4 = await loadNodePackage(packages.get('odd-q4')!, { runtime: 'js' });
    const native = await loadNodePackage(packages.get('odd-q4')!, { runtime: 'onnxruntime' });
    try {
      // The short requests (the long one costs the float64 reference seconds), chunked in 5s too.
      const short = REQUESTS.slice(0, 4);
      const ref = referenceOf(() => oddRelease);
      const whole = await maxDp(fp32, ref, undefined, short);
      const chunked = await maxDp(fp32, ref, 5, short);
      const quantised = await maxDp(q4, async (r) => (await native.decide(r)).logits, 5, short);
      console.log(
        `js small odd layout: fp32 vs float64 max |Δp| ${whole.toExponential(2)} whole, ${chunked.toExponential(2)} in 5-token chunks; q4 vs onnxruntime-node ${quantised.toExponential(2)}`,
      );
      expect(whole, where).toBeLessThanOrEqual(1e-5);
      expect(chunked, where).toBeLessThanOrEqual(1e-5);
      expect(quantised, where).toBeLessThanOrEqual(1e-4);
    } finally {
      await fp32.dispose();
      await q4.dispose();
      await native.dispose();
    }
  });

  it('decides a split backbone exactly as the single graph', async () => {
    const single = await loadNodePackage(packages.get('fp32')!, { runtime: 'js' });
    const split = await loadNodePackage(packages.get('fp32-split')!, { runtime: 'js' });
    try {
      for (const request of REQUESTS) {
        const a = await single.decide(request);
        const b = await split.decide(request);
        expect(b.logits, where).toEqual(a.logits);
        expect(b.json).toBe(a.json);
      }
    } finally {
      await single.dispose();
      await split.dispose();
    }
  });

  it('runs the bundled, trained clef-nano within 1e-4 of onnxruntime-node', async () => {
    const js = await loadNodePackage('models/clef-nano', { runtime: 'js' });
    const native = await loadNodePackage('models/clef-nano', { runtime: 'onnxruntime' });
    try {
      let worst = 0;
      for (const r of randomRequests(SEED + 2, 4, 30)) {
        const request = { ...r, model: 'clef-nano' };
        const a = await js.decide(request);
        const b = await native.decide(request);
        a.logits.forEach((l, q) => {
          const p = softmax(l);
          const want = softmax(b.logits[q]!);
          p.forEach((v, i) => (worst = Math.max(worst, Math.abs(v - want[i]!))));
        });
      }
      console.log(`js clef-nano vs onnxruntime-node: max |Δp| ${worst.toExponential(2)}`);
      expect(worst, where).toBeLessThanOrEqual(1e-4);
    } finally {
      await js.dispose();
      await native.dispose();
    }
  });
});
