// The js device's kernels (src/graph), op by op: one-node graphs (and the converter's few-node
// chains the interpreter fuses) run by the interpreter and by onnxruntime-node on the same fresh
// random inputs, for every op and dtype the converter writes (docs/onnx-ops.md); and a graph
// with an op, attribute or type the interpreter lacks refused at load, naming it.
import * as ort from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import { uniforms } from '../../../src/calibrate/prng.js';
import { GraphSession } from '../../../src/graph/session.js';
import { UnsupportedOpError } from '../../../src/graph/program.js';
import { supportedOps } from '../../../src/graph/ops.js';
import { Tensor, narrowToFloat16, widenFloat16, type DType } from '../../../src/graph/tensor.js';
import { setWasmGemmForTests, wasmGemm } from '../../../src/graph/kernels/wasm-gemm.js';
import { quantizeBlocks } from '../../../src/build/convert/quantize.js';
import {
  DataType,
  encodeModel,
  typedBytes,
  type AttributeValue,
  type DataTypeCode,
  type NodeData,
} from '../../../src/build/onnx/proto.js';
import { testSeed } from '../../support/seed.js';

const SEED = testSeed('graph ops against onnxruntime-node');
const rand = uniforms(SEED);
const where = `(seed ${SEED})`;

/** Uniform values in [lo, hi). */
function uniform(n: number, lo = -1, hi = 1): Float32Array {
  return Float32Array.from({ length: n }, () => lo + (hi - lo) * rand());
}

const size = (dims: readonly number[]) => dims.reduce((a, b) => a * b, 1);

interface Value {
  name: string;
  type: DType;
  dims: number[];
  data: Float32Array | Uint16Array | BigInt64Array | Uint8Array;
  /** A constant (an initializer) rather than a graph input. */
  constant?: boolean;
}

const CODE: Record<string, DataTypeCode> = {
  float32: DataType.FLOAT,
  float16: DataType.FLOAT16,
  int64: DataType.INT64,
  bool: DataType.BOOL,
  uint8: DataType.UINT8,
};

const f32 = (name: string, dims: number[], lo = -1, hi = 1, constant = false): Value => ({
  name,
  type: 'float32',
  dims,
  data: uniform(size(dims), lo, hi),
  constant,
});
const i64 = (name: string, values: number[], dims = [values.length], constant = true): Value => ({
  name,
  type: 'int64',
  dims,
  data: BigInt64Array.from(values, BigInt),
  constant,
});

const attr = {
  int: (value: number): AttributeValue => ({ kind: 'int', value }),
  float: (value: number): AttributeValue => ({ kind: 'float', value }),
  ints: (value: number[]): AttributeValue => ({ kind: 'ints', value }),
  string: (value: string): AttributeValue => ({ kind: 'string', value }),
};

interface Case {
  nodes: NodeData[];
  values: Value[];
  outputs: Array<{ name: string; type: DType }>;
}

function model(c: Case, opset = 17): Uint8Array {
  return encodeModel({
    irVersion: 9,
    opsets: [
      { domain: '', version: opset },
      { domain: 'com.microsoft', version: 1 },
    ],
    graph: {
      name: 'case',
      nodes: c.nodes,
      inputs: c.values
        .filter((v) => !v.constant)
        .map((v) => ({ name: v.name, elemType: CODE[v.type]!, shape: v.dims })),
      outputs: c.outputs.map((o) => ({ name: o.name, elemType: CODE[o.type]! })),
      initializers: c.values
        .filter((v) => v.constant)
        .map((v) => ({
          name: v.name,
          dataType: CODE[v.type]!,
          dims: v.dims,
          raw: typedBytes(v.data).slice(),
        })),
    },
  });
}

const node = (
  opType: string,
  inputs: string[],
  outputs: string[] = ['y'],
  attributes?: Record<string, AttributeValue>,
  domain?: string,
): NodeData => ({
  opType,
  inputs,
  outputs,
  name: `${opType}_${outputs[0]}`,
  ...(attributes ? { attributes } : {}),
  ...(domain ? { domain } : {}),
});

function asNumbers(t: { type: string; data: unknown }): Float64Array {
  const d = t.data as ArrayLike<number | bigint>;
  if (t.type === 'float16') return Float64Array.from(widenFloat16(t.data as Uint16Array));
  return Float64Array.from(d as ArrayLike<number>, (v) => Number(v));
}

/** The kernels the interpreter runs for the last case compared. */
let lastKernels: string[] = [];

/** Runs a case on both; returns the largest relative error max |Δ| / max(1, |ort|). */
async function compare(c: Case, options: { fuse?: boolean } = {}): Promise<number> {
  const bytes = model(c);
  const js = await GraphSession.create(
    bytes,
    () => {
      throw new Error('no external data');
    },
    'case',
    options,
  );
  lastKernels = js.kernels;
  const session = await ort.InferenceSession.create(bytes);
  const feedsJs: Record<string, Tensor> = {};
  const feedsOrt: Record<string, ort.Tensor> = {};
  for (const v of c.values.filter((x) => !x.constant)) {
    feedsJs[v.name] = new Tensor(v.type, v.dims, v.data);
    feedsOrt[v.name] = new ort.Tensor(v.type, v.data, v.dims);
  }
  const got = await js.run(feedsJs);
  const want = await session.run(feedsOrt);
  await session.release();
  let worst = 0;
  for (const o of c.outputs) {
    const a = got[o.name]!;
    const b = want[o.name]!;
    expect(a.dims, `${o.name} dims ${where}`).toEqual(b.dims);
    expect(a.type, `${o.name} type ${where}`).toBe(b.type);
    const x = asNumbers(a as unknown as { type: string; data: unknown });
    const y = asNumbers(b as unknown as { type: string; data: unknown });
    for (let i = 0; i < x.length; i++) {
      if (Number.isNaN(y[i]!)) {
        expect(x[i], `${o.name}[${i}] ${where}`).toBeNaN();
        continue;
      }
      if (x[i] === y[i]) continue; // infinities included
      worst = Math.max(worst, Math.abs(x[i]! - y[i]!) / Math.max(1, Math.abs(y[i]!)));
    }
  }
  return worst;
}

/** One op whose inputs are `values` and output `y` of `type`. */
function one(
  op: string,
  values: Value[],
  attrs?: Record<string, AttributeValue>,
  type: DType = 'float32',
  domain?: string,
): Case {
  return {
    nodes: [
      node(
        op,
        values.map((v) => v.name),
        ['y'],
        attrs,
        domain,
      ),
    ],
    values,
    outputs: [{ name: 'y', type }],
  };
}

/** Float ops agree to a few float32 roundings. */
const FLOAT = 2e-6;

/**
 * Products of depth `k` (k float32 products summed, in another order or with fused multiply-adds
 * on the other side): each sum is within k·u of exact (u = 2^-24, of the terms' magnitude), so
 * the two within 2k·u. Measured worst over 150 draws at k = 96: 2.1e-6 (0.19 of this bound).
 */
const products = (k: number) => Math.max(FLOAT, 2 * k * 2 ** -24);

describe('elementwise ops', () => {
  const shapes: Array<[number[], number[]]> = [
    [[2, 3, 4], [4]],
    [
      [2, 1, 4],
      [3, 1],
    ],
    [[1], [2, 3]],
    [
      [5, 6],
      [5, 6],
    ],
    [
      [1, 2, 2, 7, 9],
      [7, 9],
    ],
  ];
  it.each(['Add', 'Sub', 'Mul', 'Div'])('%s, broadcasting every way', async (op) => {
    for (const [a, b] of shapes) {
      const lo = op === 'Div' ? 0.5 : -1;
      const err = await compare(one(op, [f32('a', a), f32('b', b, lo, 1.5)]));
      expect(err, `${op} [${a}] [${b}] ${where}`).toBeLessThanOrEqual(FLOAT);
    }
  });

  const unary: Array<[string, number, number]> = [
    ['Neg', -3, 3],
    ['Abs', -3, 3],
    ['Exp', -8, 8],
    ['Log', 0.01, 30],
    ['Relu', -3, 3],
    ['Sigmoid', -20, 20],
    ['Sqrt', 0, 50],
    ['Reciprocal', 0.1, 10],
    ['Cos', -4000, 4000],
    ['Sin', -4000, 4000],
    ['Erf', -5, 5],
  ];
  it.each(unary)('%s on [%d, %d)', async (op, lo, hi) => {
    const err = await compare(one(op, [f32('x', [3, 17], lo, hi)]));
    expect(err, `${op} ${where}`).toBeLessThanOrEqual(FLOAT);
  });

  it('LessOrEqual and Where (the causal mask)', async () => {
    const positions = (name: string, n: number, dims: number[]): Value => ({
      name,
      type: 'float32',
      dims,
      data: Float32Array.from({ length: n }, () => Math.floor(rand() * 6)),
    });
    const c: Case = {
      nodes: [node('LessOrEqual', ['k', 'q'], ['m']), node('Where', ['m', 'zero', 'neg'], ['y'])],
      values: [
        positions('k', 9, [9]),
        positions('q', 4, [4, 1]),
        { name: 'zero', type: 'float32', dims: [1], data: Float32Array.of(0), constant: true },
        { name: 'neg', type: 'float32', dims: [1], data: Float32Array.of(-1e30), constant: true },
      ],
      outputs: [
        { name: 'm', type: 'bool' },
        { name: 'y', type: 'float32' },
      ],
    };
    expect(await compare(c)).toBe(0);
  });

  it('Clip with a minimum, and with both bounds', async () => {
    const lo = {
      name: 'lo',
      type: 'float32' as const,
      dims: [],
      data: Float32Array.of(0.1),
      constant: true,
    };
    const hi = {
      name: 'hi',
      type: 'float32' as const,
      dims: [],
      data: Float32Array.of(0.6),
      constant: true,
    };
    expect(await compare(one('Clip', [f32('x', [4, 5]), lo]))).toBe(0);
    expect(await compare(one('Clip', [f32('x', [4, 5]), lo, hi]))).toBe(0);
  });

  it('Cast between float32, float16 and int64 (rounding to nearest even)', async () => {
    const x = f32('x', [6, 7], -70000, 70000);
    expect(await compare(one('Cast', [x], { to: attr.int(DataType.FLOAT16) }, 'float16'))).toBe(0);
    const small = f32('x', [6, 7], -2, 2);
    expect(await compare(one('Cast', [small], { to: attr.int(DataType.FLOAT16) }, 'float16'))).toBe(
      0,
    );
    const half: Value = {
      name: 'h',
      type: 'float16',
      dims: [3, 5],
      data: narrowToFloat16(uniform(15, -100, 100)),
    };
    expect(await compare(one('Cast', [half], { to: attr.int(DataType.FLOAT) }))).toBe(0);
    const ints = i64('n', [3, -7, 0, 123456], [4], false);
    expect(await compare(one('Cast', [ints], { to: attr.int(DataType.FLOAT) }))).toBe(0);
    expect(
      await compare(one('Cast', [f32('x', [8], -9, 9)], { to: attr.int(DataType.INT64) }, 'int64')),
    ).toBe(0);
  });
});

describe('layout ops', () => {
  it('Reshape (0 and −1), Transpose, Shape', async () => {
    const x = f32('x', [2, 3, 4, 5]);
    expect(await compare(one('Reshape', [x, i64('s', [0, -1, 5])]))).toBe(0);
    for (const perm of [
      [0, 2, 1, 3],
      [3, 1, 0, 2],
      [0, 1, 3, 2],
    ]) {
      expect(await compare(one('Transpose', [x], { perm: attr.ints(perm) }))).toBe(0);
    }
    expect(await compare(one('Transpose', [f32('x', [3, 7])]))).toBe(0);
    expect(await compare(one('Shape', [x], undefined, 'int64'))).toBe(0);
    expect(
      await compare(one('Shape', [x], { start: attr.int(1), end: attr.int(-1) }, 'int64')),
    ).toBe(0);
  });

  it('Slice: negative starts, ends past the axis, steps, several axes', async () => {
    const x = f32('x', [3, 8, 6]);
    const big = Number.MAX_SAFE_INTEGER;
    const cases: Array<[number[], number[], number[], number[] | null]> = [
      [[-3], [big], [1], null],
      [[0], [2], [-1], null],
      [[1, 2], [3, -1], [1, 2], null],
      [[0], [8], [1], [2]],
      [[7], [0], [1], [-2]],
      [[1], [-big], [2], [-1]],
    ];
    for (const [starts, ends, axes, steps] of cases) {
      const inputs = [x, i64('st', starts), i64('en', ends), i64('ax', axes)];
      if (steps) inputs.push(i64('sp', steps));
      const err = await compare(one('Slice', inputs));
      expect(err, `Slice ${starts} ${ends} ${axes} ${steps} ${where}`).toBe(0);
    }
  });

  it('Concat of float32, float16 and int64 tensors', async () => {
    expect(
      await compare(
        one('Concat', [f32('a', [2, 3, 4]), f32('b', [2, 5, 4])], { axis: attr.int(1) }),
      ),
    ).toBe(0);
    expect(
      await compare(
        one('Concat', [f32('a', [2, 3]), f32('b', [2, 1]), f32('c', [2, 2])], {
          axis: attr.int(-1),
        }),
      ),
    ).toBe(0);
    const h = (name: string, dims: number[]): Value => ({
      name,
      type: 'float16',
      dims,
      data: narrowToFloat16(uniform(size(dims))),
    });
    expect(
      await compare(
        one(
          'Concat',
          [h('a', [1, 2, 0, 4]), h('b', [1, 2, 3, 4])],
          { axis: attr.int(2) },
          'float16',
        ),
      ),
    ).toBe(0);
    expect(
      await compare(
        one(
          'Concat',
          [i64('a', [1, 2], [2], false), i64('b', [3], [1], false)],
          { axis: attr.int(0) },
          'int64',
        ),
      ),
    ).toBe(0);
  });

  it('Gather from float32 and float16 tables and from a shape; Range', async () => {
    const ids = i64('i', [3, 0, -1, 7, 3, 2], [2, 3], false);
    expect(
      await compare(one('Gather', [f32('t', [8, 5], -1, 1, true), ids], { axis: attr.int(0) })),
    ).toBe(0);
    expect(
      await compare(
        one('Gather', [f32('t', [2, 8, 3]), i64('i', [1, 4], [2], false)], { axis: attr.int(1) }),
      ),
    ).toBe(0);
    const table: Value = {
      name: 't',
      type: 'float16',
      dims: [8, 4],
      data: narrowToFloat16(uniform(32)),
      constant: true,
    };
    expect(await compare(one('Gather', [table, ids], { axis: attr.int(0) }, 'float16'))).toBe(0);
    const shape = i64('s', [1, 2, 37, 16], [4], false);
    expect(
      await compare(one('Gather', [shape, i64('k', [2], [])], { axis: attr.int(0) }, 'int64')),
    ).toBe(0);
    const scalar = (name: string, v: number): Value => ({
      name,
      type: 'float32',
      dims: [],
      data: Float32Array.of(v),
    });
    expect(await compare(one('Range', [scalar('a', 37), scalar('b', 301), scalar('c', 1)]))).toBe(
      0,
    );
  });
});

describe('reductions and norms', () => {
  it('ReduceMean, ReduceSum and ReduceMax over one axis or several, kept or not', async () => {
    const x = f32('x', [3, 4, 10]);
    for (const [axes, keep] of [
      [[-1], 1],
      [[1], 0],
      [[0, 2], 1],
    ] as const) {
      const attrs = { axes: attr.ints([...axes]), keepdims: attr.int(keep) };
      expect(
        await compare(one('ReduceMean', [x], attrs)),
        `ReduceMean ${axes} ${where}`,
      ).toBeLessThanOrEqual(FLOAT);
      expect(await compare(one('ReduceMax', [x], attrs)), `ReduceMax ${axes} ${where}`).toBe(0);
      const sum = one('ReduceSum', [x, i64('a', [...axes])], { keepdims: attr.int(keep) });
      expect(await compare(sum), `ReduceSum ${axes} ${where}`).toBeLessThanOrEqual(FLOAT);
    }
  });

  it('Softmax on the last axis and on another', async () => {
    expect(
      await compare(one('Softmax', [f32('x', [2, 3, 9], -30, 30)], { axis: attr.int(-1) })),
    ).toBeLessThanOrEqual(FLOAT);
    expect(
      await compare(one('Softmax', [f32('x', [2, 3, 9], -5, 5)], { axis: attr.int(1) })),
    ).toBeLessThanOrEqual(FLOAT);
  });

  it('LayerNormalization with scale and bias', async () => {
    const c = one(
      'LayerNormalization',
      [f32('x', [5, 32], -3, 3), f32('s', [32], 0.5, 1.5, true), f32('b', [32], -1, 1, true)],
      {
        axis: attr.int(-1),
        epsilon: attr.float(1e-5),
      },
    );
    expect(await compare(c)).toBeLessThanOrEqual(FLOAT);
  });

  it('the chains the interpreter fuses (RMS norm, L2 norm, SiLU, masked softmax) equal their ops', async () => {
    const eps: Value = {
      name: 'eps',
      type: 'float32',
      dims: [],
      data: Float32Array.of(1e-6),
      constant: true,
    };
    const c: Case = {
      nodes: [
        node('Mul', ['x', 'x'], ['sq']),
        node('ReduceMean', ['sq'], ['ms'], { axes: attr.ints([-1]), keepdims: attr.int(1) }),
        node('Add', ['ms', 'eps'], ['e']),
        node('Sqrt', ['e'], ['r']),
        node('Reciprocal', ['r'], ['inv']),
        node('Mul', ['x', 'inv'], ['n']),
        node('Mul', ['n', 'w'], ['rms']),
        node('Mul', ['x', 'x'], ['sq2']),
        node('ReduceSum', ['sq2', 'axes'], ['ss'], { keepdims: attr.int(1) }),
        node('Add', ['ss', 'eps'], ['e2']),
        node('Sqrt', ['e2'], ['r2']),
        node('Reciprocal', ['r2'], ['inv2']),
        node('Mul', ['x', 'inv2'], ['l2']),
        node('Sigmoid', ['x'], ['sg']),
        node('Mul', ['x', 'sg'], ['silu']),
        node('Add', ['scores', 'mask'], ['masked']),
        node('Softmax', ['masked'], ['p'], { axis: attr.int(-1) }),
      ],
      values: [
        f32('x', [1, 7, 24], -4, 4),
        eps,
        f32('w', [24], 0.5, 1.5, true),
        i64('axes', [-1]),
        f32('scores', [1, 2, 2, 5, 8], -6, 6),
        {
          name: 'mask',
          type: 'float32',
          dims: [5, 8],
          data: Float32Array.from({ length: 40 }, (_, i) =>
            i % 8 <= Math.floor(i / 8) + 3 ? 0 : -1e30,
          ),
        },
      ],
      outputs: ['rms', 'l2', 'silu', 'p'].map((name) => ({ name, type: 'float32' as const })),
    };
    expect(await compare(c), `fused ${where}`).toBeLessThanOrEqual(FLOAT);
    expect(lastKernels.filter((k) => k.startsWith('clef.fused')).sort()).toEqual([
      'clef.fused.AddSoftmax',
      'clef.fused.Normalize',
      'clef.fused.Normalize',
      'clef.fused.Silu',
    ]);
    expect(await compare(c, { fuse: false }), `unfused ${where}`).toBeLessThanOrEqual(FLOAT);
    expect(lastKernels.some((k) => k.startsWith('clef.fused'))).toBe(false);
  });

  it('attention (MatMul → Add(mask) → Softmax → MatMul, grouped heads) fused and not', async () => {
    // A chunk of 70 queries after 30 past keys (more than one block of query rows), causal.
    const [T, P, D] = [70, 30, 24];
    const S = P + T;
    const mask = Float32Array.from({ length: T * S }, (_, i) =>
      i % S <= Math.floor(i / S) + P ? 0 : -1e30,
    );
    const c: Case = {
      nodes: [
        node('MatMul', ['q', 'k'], ['scores']),
        node('Add', ['scores', 'mask'], ['masked']),
        node('Softmax', ['masked'], ['p'], { axis: attr.int(-1) }),
        node('MatMul', ['p', 'v'], ['y']),
      ],
      values: [
        f32('q', [1, 2, 2, T, D], -2, 2),
        f32('k', [1, 2, 1, D, S], -2, 2),
        { name: 'mask', type: 'float32', dims: [T, S], data: mask },
        f32('v', [1, 2, 1, S, D]),
      ],
      outputs: [{ name: 'y', type: 'float32' }],
    };
    // The scores are products of depth D with terms up to 4 (q, k in ±2); softmax's exp turns
    // their absolute error into p's relative error: products(4 · D). 2.76e-6 was seen (seed
    // 597735) against FLOAT's 2e-6.
    const bound = products(4 * D);
    expect(await compare(c), `fused ${where}`).toBeLessThanOrEqual(bound);
    expect(lastKernels).toEqual(['clef.fused.Attention']);
    expect(await compare(c, { fuse: false }), `unfused ${where}`).toBeLessThanOrEqual(bound);
  });
});

describe('products', () => {
  const gemmPaths = [
    ['the WebAssembly SIMD kernel', true],
    ['the JavaScript kernel', false],
  ] as const;

  it.each(gemmPaths)(
    'MatMul on %s: weights, run-time operands, batches and broadcasting',
    async (_label, simd) => {
      const kernel = wasmGemm();
      if (simd) expect(kernel, 'WebAssembly SIMD in this Node').not.toBeNull();
      setWasmGemmForTests(simd ? kernel : null);
      try {
        const cases: Array<[number[], number[], boolean]> = [
          [[37, 64], [64, 70], true],
          [[1, 9, 33], [33, 13], true],
          [[2, 3, 40, 24], [1, 24, 40], false],
          [[1, 2, 2, 31, 24], [1, 2, 1, 24, 45], false],
          [[1, 2, 2, 31, 45], [1, 2, 1, 45, 24], false],
          [[24], [24, 17], true],
          [[6, 24], [24], false],
        ];
        for (const [a, b, constant] of cases) {
          const err = await compare(one('MatMul', [f32('a', a), f32('b', b, -1, 1, constant)]));
          expect(err, `MatMul [${a}]·[${b}] ${where}`).toBeLessThanOrEqual(
            products(b.length === 1 ? b[0]! : b.at(-2)!),
          );
        }
      } finally {
        setWasmGemmForTests(kernel);
      }
    },
  );

  it('the float16 linear layer (Cast → MatMul on a float16 weight → Cast) runs on the widened weight', async () => {
    const w: Value = {
      name: 'w',
      type: 'float16',
      dims: [48, 40],
      data: narrowToFloat16(uniform(48 * 40)),
      constant: true,
    };
    const c: Case = {
      nodes: [
        node('Cast', ['x'], ['xh'], { to: attr.int(DataType.FLOAT16) }),
        node('MatMul', ['xh', 'w'], ['yh']),
        node('Cast', ['yh'], ['y'], { to: attr.int(DataType.FLOAT) }),
      ],
      values: [f32('x', [1, 11, 48], -2, 2), w],
      outputs: [{ name: 'y', type: 'float32' }],
    };
    // A product of depth 48 (2.26e-6 was seen against FLOAT's 2e-6 on one draw).
    expect(await compare(c)).toBeLessThanOrEqual(products(48));
  });

  it('Gemm with transB, with and without C', async () => {
    const attrs = { transB: attr.int(1) };
    expect(
      await compare(one('Gemm', [f32('a', [12, 32]), f32('b', [50, 32])], attrs)),
    ).toBeLessThanOrEqual(FLOAT);
    expect(
      await compare(
        one('Gemm', [f32('a', [12, 32]), f32('b', [50, 32], -1, 1, true), f32('c', [50])], attrs),
      ),
    ).toBeLessThanOrEqual(FLOAT);
  });

  it.each([4, 8] as const)(
    'MatMulNBits at %d bits (blocks of 32, a ragged last block)',
    async (bits) => {
      for (const [M, K, N] of [
        [1, 64, 70],
        [7, 80, 33],
        [30, 96, 130],
      ]) {
        const qz = quantizeBlocks(uniform(N * K), N, K, bits, 32);
        const c = one(
          'MatMulNBits',
          [
            f32('a', [1, M, K]),
            {
              name: 'b',
              type: 'uint8',
              dims: [N, qz.kBlocks, (32 * bits) / 8],
              data: qz.data,
              constant: true,
            },
            { name: 's', type: 'float32', dims: [N, qz.kBlocks], data: qz.scales, constant: true },
            {
              name: 'z',
              type: 'uint8',
              dims: [N, qz.zeroPoints.length / N],
              data: qz.zeroPoints,
              constant: true,
            },
          ],
          { K: attr.int(K), N: attr.int(N), bits: attr.int(bits), block_size: attr.int(32) },
          'float32',
          'com.microsoft',
        );
        expect(
          await compare(c),
          `MatMulNBits ${bits} bits ${M}x${K}x${N} ${where}`,
        ).toBeLessThanOrEqual(products(K!));
      }
    },
  );

  it.each([4, 8] as const)('GatherBlockQuantized at %d bits', async (bits) => {
    const [V, H] = [50, 64];
    const qz = quantizeBlocks(uniform(V * H, -3, 3), V, H, bits, 32);
    const c = one(
      'GatherBlockQuantized',
      [
        { name: 'd', type: 'uint8', dims: [V, (H * bits) / 8], data: qz.data, constant: true },
        i64('i', [0, 49, 7, 7, 23], [1, 5], false),
        { name: 's', type: 'float32', dims: [V, H / 32], data: qz.scales, constant: true },
        {
          name: 'z',
          type: 'uint8',
          dims: [V, qz.zeroPoints.length / V],
          data: qz.zeroPoints,
          constant: true,
        },
      ],
      {
        gather_axis: attr.int(0),
        quantize_axis: attr.int(1),
        block_size: attr.int(32),
        bits: attr.int(bits),
      },
      'float32',
      'com.microsoft',
    );
    expect(await compare(c), where).toBeLessThanOrEqual(FLOAT);
  });
});

describe('LinearAttention (gated_delta)', () => {
  it.each([
    [9, 2, 4, 8, 6],
    // The trained packages' size: one key head of dim 4, 4 value heads of dim 8.
    [13, 1, 4, 4, 8],
  ])(
    'matches onnxruntime over %i tokens from a random state: %i key heads, %i value heads of dims %i and %i',
    async (T, qHeads, kvHeads, dk, dv) => {
      const c = one(
        'LinearAttention',
        [
          f32('q', [1, T, qHeads * dk]),
          f32('k', [1, T, qHeads * dk], -0.5, 0.5),
          f32('v', [1, T, kvHeads * dv], -2, 2),
          f32('s', [1, kvHeads, dk, dv]),
          f32('g', [1, T, kvHeads], -3, 0),
          f32('b', [1, T, kvHeads], 0, 1),
        ],
        {
          q_num_heads: attr.int(qHeads),
          kv_num_heads: attr.int(kvHeads),
          update_rule: attr.string('gated_delta'),
          scale: attr.float(1 / Math.sqrt(dk)),
        },
        'float32',
        'com.microsoft',
      );
      c.nodes[0]!.outputs = ['y', 'state'];
      c.outputs.push({ name: 'state', type: 'float32' });
      expect(await compare(c), where).toBeLessThanOrEqual(1e-5);
    },
  );
});

describe('refusal at load', () => {
  const x = f32('x', [2, 3]);
  it('names every op the interpreter lacks, before any run', async () => {
    const c: Case = {
      nodes: [
        node('Einsum', ['x', 'x'], ['e'], { equation: attr.string('ij,ij->ij') }),
        node('GroupQueryAttention', ['e'], ['y'], {}, 'com.microsoft'),
      ],
      values: [x],
      outputs: [{ name: 'y', type: 'float32' }],
    };
    const load = GraphSession.create(model(c), () => new Uint8Array(0), 'odd.onnx');
    await expect(load).rejects.toBeInstanceOf(UnsupportedOpError);
    const e = (await load.catch((err: unknown) => err)) as UnsupportedOpError;
    expect(e.code).toBe('unsupported_op');
    expect(e.ops).toEqual(['Einsum', 'com.microsoft.GroupQueryAttention']);
    expect(e.message).toMatch(
      /^odd\.onnx: the js device cannot run op Einsum; op com\.microsoft\.GroupQueryAttention/,
    );
  });

  it('refuses an attribute value or a type it does not implement, by name', async () => {
    const linear = one(
      'LinearAttention',
      [x, x, x, x, x, x],
      { update_rule: attr.string('delta_plus') },
      'float32',
      'com.microsoft',
    );
    await expect(
      GraphSession.create(model(linear), () => new Uint8Array(0), 'la.onnx'),
    ).rejects.toThrow(
      /la\.onnx: the js device cannot run LinearAttention with update_rule = delta_plus/,
    );
    const bits = one(
      'MatMulNBits',
      [x, x, x],
      { K: attr.int(3), N: attr.int(2), bits: attr.int(2), block_size: attr.int(16) },
      'float32',
      'com.microsoft',
    );
    await expect(
      GraphSession.create(model(bits), () => new Uint8Array(0), 'q2.onnx'),
    ).rejects.toThrow(/MatMulNBits with bits = 2/);
    const old = one('Softmax', [x]);
    await expect(
      GraphSession.create(model(old, 11), () => new Uint8Array(0), 'old.onnx'),
    ).rejects.toThrow(/ONNX opset 11/);
  });

  it("implements exactly the converter's op list (docs/onnx-ops.md)", () => {
    expect(supportedOps()).toEqual(
      [
        'Abs',
        'Add',
        'Cast',
        'Clip',
        'Concat',
        'Cos',
        'Div',
        'Erf',
        'Exp',
        'Gather',
        'Gemm',
        'Identity',
        'LayerNormalization',
        'LessOrEqual',
        'Log',
        'MatMul',
        'Mul',
        'Neg',
        'Range',
        'Reciprocal',
        'ReduceMax',
        'ReduceMean',
        'ReduceSum',
        'Relu',
        'Reshape',
        'Shape',
        'Sigmoid',
        'Sin',
        'Slice',
        'Softmax',
        'Sqrt',
        'Sub',
        'Transpose',
        'Where',
        'com.microsoft.GatherBlockQuantized',
        'com.microsoft.LinearAttention',
        'com.microsoft.MatMulNBits',
      ].sort(),
    );
  });
});
