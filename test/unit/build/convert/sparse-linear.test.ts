/**
 * The converter's sparse linear layers (backbone-ops.ts: sparseLinear, addLinear; backbone.ts: a
 * zero MLP left out; backbone-layers.ts: no rotary on queries that only score past the rotary
 * dims). `clef-web train` writes such weights; real ones are dense and keep their graphs. A copy
 * of the tiny fixture with weights zeroed in each pattern (column ranges at either edge, row
 * ranges at either edge and inside, a diagonal of ones, a diagonal of other values, an MLP of
 * zeros) must still equal the float64 reference, while its graph multiplies less.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildBackboneOnnx } from '../../../../src/build/convert/backbone.js';
import { nonzeroSpan } from '../../../../src/build/convert/backbone-ops.js';
import { ReferenceBackbone } from '../../../../src/build/reference/qwen35.js';
import { writeSafetensors, type TensorToWrite } from '../../../../src/build/safetensors.js';
import { openRelease } from '../../../../src/build/release.js';
import { readOnnxModel } from '../../../../src/graph/onnx.js';
import { writeTinyFixture } from '../../../../tools/fixture/cli.js';
import { compare, randomIds, runChunks } from '../../support/backbone-run.js';

// fp32 graph vs float64 reference, relative to the largest |hidden| (backbone-onnx.test.ts's).
const FP32_TOL = 2e-5;

const work = mkdtempSync(join(tmpdir(), 'sparse-linear-'));
const denseDir = join(work, 'dense');
const sparseDir = join(work, 'sparse');
afterAll(() => rmSync(work, { recursive: true, force: true }));

type Edit = (w: Float32Array, rows: number, cols: number) => void;
const keepCols =
  (c0: number, c1: number): Edit =>
  (w, rows, cols) => {
    for (let i = 0; i < rows; i++)
      for (let j = 0; j < cols; j++) if (j < c0 || j >= c1) w[i * cols + j] = 0;
  };
const keepRows =
  (r0: number, r1: number): Edit =>
  (w, rows, cols) => {
    for (let i = 0; i < rows; i++) if (i < r0 || i >= r1) w.fill(0, i * cols, (i + 1) * cols);
  };
/** W[i, c0 + i] = value(i), every other weight 0 (W has as many rows as the diagonal). */
const diagonal =
  (c0: number, value: (i: number) => number): Edit =>
  (w, rows, cols) => {
    w.fill(0);
    for (let i = 0; i < rows; i++) w[i * cols + c0 + i] = value(i);
  };
/** Zero query rows [0, n) of every head in q_proj ([query | gate] per head, 2·16 rows each). */
const noRotaryQueries =
  (n: number): Edit =>
  (w, rows, cols) => {
    for (let h = 0; h < rows / 32; h++) w.fill(0, h * 32 * cols, (h * 32 + n) * cols);
  };

const L = (i: number, name: string) => `model.language_model.layers.${i}.${name}.weight`;
// The fixture: hidden 64; layers 0-2 linear attention (in_proj_qkv 128 × 64, in_proj_z 64 × 64,
// out_proj 64 × 64), layer 3 full attention (4 heads, 2 kv heads of 16, rotary dims 4); MLPs 128.
const EDITS: Record<string, Edit[]> = {
  [L(0, 'linear_attn.in_proj_qkv')]: [keepCols(40, 64)],
  [L(0, 'linear_attn.in_proj_z')]: [diagonal(0, (i) => 0.5 + i / 64)],
  [L(0, 'linear_attn.out_proj')]: [keepRows(0, 20)],
  [L(1, 'mlp.down_proj')]: [keepRows(0, 0)],
  [L(2, 'mlp.down_proj')]: [keepRows(50, 64)],
  [L(3, 'self_attn.q_proj')]: [keepCols(5, 9), noRotaryQueries(4)],
  [L(3, 'self_attn.k_proj')]: [keepCols(5, 9)],
  [L(3, 'self_attn.v_proj')]: [diagonal(20, () => 1)],
  [L(3, 'self_attn.o_proj')]: [keepRows(16, 48)],
};

beforeAll(() => {
  writeTinyFixture(denseDir, { seed: 5 });
  const release = openRelease(denseDir);
  const tensors: TensorToWrite[] = [];
  for (const name of release.names()) {
    if (!name.startsWith('model.language_model.') && name !== 'lm_head.weight') continue;
    const shape = release.info(name).shape;
    const data = Float32Array.from(release.read(name));
    for (const edit of EDITS[name] ?? []) edit(data, shape[0] as number, shape[1] as number);
    tensors.push({ name, dtype: 'F32', shape, data });
  }
  mkdirSync(sparseDir, { recursive: true });
  writeFileSync(join(sparseDir, 'config.json'), JSON.stringify(release.config));
  writeSafetensors(join(sparseDir, 'model.safetensors'), tensors);
  release.close();
});

function build(dir: string) {
  const release = openRelease(dir);
  try {
    return buildBackboneOnnx(release, join(dir, 'backbone.onnx'), { dtype: 'fp32' });
  } finally {
    release.close();
  }
}

function opCounts(onnxPath: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const node of readOnnxModel(readFileSync(onnxPath)).graph.nodes)
    counts[node.opType] = (counts[node.opType] ?? 0) + 1;
  return counts;
}

describe('nonzeroSpan', () => {
  it('finds the rows or columns holding every nonzero weight', () => {
    const w = new Float32Array(4 * 6); // 4 rows, 6 columns
    expect(nonzeroSpan(w, 4, 6, 'rows')).toEqual([0, 0]);
    w[1 * 6 + 2] = 3;
    w[2 * 6 + 4] = -1e-30;
    expect(nonzeroSpan(w, 4, 6, 'rows')).toEqual([1, 3]);
    expect(nonzeroSpan(w, 4, 6, 'cols')).toEqual([2, 5]);
    w[3 * 6 + 5] = 1;
    w[0] = 1;
    expect(nonzeroSpan(w, 4, 6, 'rows')).toEqual([0, 4]);
    expect(nonzeroSpan(w, 4, 6, 'cols')).toEqual([0, 6]);
  });
});

describe('a release with sparse weights', () => {
  it('equals the float64 reference, whole and in chunks, with fewer products than dense', async () => {
    const dense = opCounts(build(denseDir).onnxPath);
    const built = build(sparseDir);
    const sparse = opCounts(built.onnxPath);
    // Gone: v_proj (a diagonal of ones: its columns), in_proj_z (a diagonal: a Mul), layer 1's
    // MLP (3 products); the queries' rotary (one Sub of two).
    expect(sparse.MatMul).toBe((dense.MatMul as number) - 5);
    expect(sparse.Sub).toBe((dense.Sub as number) - 1);

    const reference = await ReferenceBackbone.load(sparseDir);
    const session = await ort.InferenceSession.create(built.onnxPath);
    try {
      const ids = randomIds(30, 7, reference.config.vocab_size);
      const want = reference.forward(ids);
      for (const chunks of [[ids], [ids.slice(0, 11), ids.slice(11)]]) {
        const got = await runChunks(session, built.io, chunks);
        expect(compare(got, want).relative, `${chunks.length} chunks`).toBeLessThan(FP32_TOL);
      }
    } finally {
      await session.release();
    }
  });
});
