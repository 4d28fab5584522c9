/**
 * MatMul (numpy semantics: batched, broadcast) and Gemm, on the product of gemm.ts (C = A·B with
 * B row-major [K, N], the layout ONNX gives MatMul's B, so a B computed at run time is used where
 * it lies). A constant B (a weight) is packed once, at load: widened from float16 if need be and
 * its rows padded to a multiple of 8 values, the SIMD kernel's width.
 */
import { input, type OpImpl } from '../op-types.js';
import { Tensor, narrowToFloat16, widenFloat16, type DType } from '../tensor.js';
import { broadcastDims } from './broadcast.js';
import { gemm } from './gemm.js';

/** [..., R, C] → [..., C, R] per matrix (float32). */
export function transposeLast2(
  x: Float32Array,
  batches: number,
  R: number,
  C: number,
): Float32Array {
  const out = new Float32Array(x.length);
  for (let b = 0; b < batches; b++) {
    const base = b * R * C;
    for (let r = 0; r < R; r++) {
      const row = base + r * C;
      for (let c = 0; c < C; c++) out[base + c * R + r] = x[row + c]!;
    }
  }
  return out;
}

/** B as matrices [K, N] with rows `ld` apart (a 1-D B is [K] → [K, 1]). */
interface PackedB {
  batchDims: number[];
  K: number;
  N: number;
  /** Values from one row of a matrix to the next (N, or N padded to a multiple of 8). */
  ld: number;
  data: Float32Array;
  /** B was 1-D: the output loses its last axis. */
  vector: boolean;
}

function asFloat32(t: Tensor): Float32Array {
  return t.type === 'float16' ? widenFloat16(t.data as Uint16Array) : (t.data as Float32Array);
}

/** B as it lies (a run-time B). */
function viewB(b: Tensor): PackedB {
  const data = asFloat32(b);
  if (b.dims.length === 1) return { batchDims: [], K: b.dims[0]!, N: 1, ld: 1, data, vector: true };
  const N = b.dims.at(-1)!;
  return { batchDims: b.dims.slice(0, -2), K: b.dims.at(-2)!, N, ld: N, data, vector: false };
}

/** A constant B, its rows padded to a multiple of 8 values (copied once, at load). */
function packB(b: Tensor): PackedB {
  const view = viewB(b);
  const ld = Math.ceil(view.N / 8) * 8;
  if (ld === view.N) return { ...view, data: Float32Array.from(view.data) };
  const rows = view.data.length / view.N;
  const data = new Float32Array(rows * ld);
  for (let r = 0; r < rows; r++) data.set(view.data.subarray(r * view.N, (r + 1) * view.N), r * ld);
  return { ...view, ld, data };
}

/** A·B with B packed; A float32 [..., M, K] (or [K]). */
function matmulPacked(
  a: Tensor,
  aData: Float32Array,
  b: PackedB,
): { dims: number[]; data: Float32Array } {
  const aVector = a.dims.length === 1;
  const aDims = aVector ? [1, a.dims[0]!] : a.dims;
  const M = aDims.at(-2)!;
  const K = aDims.at(-1)!;
  if (K !== b.K) {
    throw new Error(`MatMul of [${a.dims.join(', ')}] and a B with ${b.K} rows`);
  }
  const aBatch = aDims.slice(0, -2);
  const batch = broadcastDims([aBatch, b.batchDims]);
  const rank = batch.length;
  const batches = batch.reduce((x, y) => x * y, 1);
  const N = b.N;
  const out = new Float32Array(batches * M * N);
  // Each operand's matrix index for each output batch (0 along its broadcast axes).
  const aIndex = batchIndex(aBatch, batch);
  const bIndex = batchIndex(b.batchDims, batch);
  // A run of consecutive output batches that read consecutive A matrices against one B matrix
  // is one product with M·run rows: the common case of a weight shared across a batch.
  for (let t = 0; t < batches;) {
    const bi = bIndex[t]!;
    let run = 1;
    while (t + run < batches && bIndex[t + run] === bi && aIndex[t + run] === aIndex[t]! + run) {
      run++;
    }
    gemm(aData, aIndex[t]! * M * K, M * run, K, b.data, bi * K * b.ld, N, b.ld, out, t * M * N, N);
    t += run;
  }
  const dims = [...batch, M, N];
  if (aVector) dims.splice(rank, 1);
  if (b.vector) dims.pop();
  return { dims, data: out };
}

/** For each batch of `full`, the index of the matrix in an operand of batch dims `own`. */
export function batchIndex(own: readonly number[], full: readonly number[]): Int32Array {
  const total = full.reduce((x, y) => x * y, 1);
  const shift = full.length - own.length;
  const strides = new Array<number>(full.length).fill(0);
  let acc = 1;
  for (let i = own.length - 1; i >= 0; i--) {
    strides[i + shift] = own[i] === 1 ? 0 : acc;
    acc *= own[i]!;
  }
  const out = new Int32Array(total);
  const counter = new Array<number>(full.length).fill(0);
  let offset = 0;
  for (let t = 0; t < total; t++) {
    out[t] = offset;
    for (let axis = full.length - 1; axis >= 0; axis--) {
      counter[axis]!++;
      offset += strides[axis]!;
      if (counter[axis]! < full[axis]!) break;
      offset -= strides[axis]! * full[axis]!;
      counter[axis] = 0;
    }
  }
  return out;
}

function floatTypes(inputs: ReadonlyArray<DType | undefined>, what: string): DType[] | string {
  const [a, b] = inputs;
  if ((a !== 'float32' && a !== 'float16') || a !== b) return `${what} of ${a} and ${b}`;
  return [a];
}

/** float16 products are computed in float32 and rounded once (onnxruntime's CPU does the same). */
function result(type: DType, dims: number[], data: Float32Array): Tensor {
  return type === 'float16'
    ? new Tensor('float16', dims, narrowToFloat16(data))
    : new Tensor('float32', dims, data);
}

const matmulOp: OpImpl = {
  types: (inputs) => floatTypes(inputs, 'MatMul'),
  packs: [1],
  prepare(_node, constants) {
    const b = constants[1];
    return b ? packB(b) : undefined;
  },
  run(inputs, _node, prepared) {
    const a = input(inputs, 0);
    const packed = (prepared as PackedB | undefined) ?? viewB(input(inputs, 1));
    const { dims, data } = matmulPacked(a, asFloat32(a), packed);
    return [result(a.type, dims, data)];
  },
};

/** Gemm: alpha·A'·B' + beta·C for 2-D A and B (transA, transB), C broadcast. */
const gemmOp: OpImpl = {
  types(inputs) {
    const t = floatTypes(inputs, 'Gemm');
    if (typeof t === 'string' || t[0] !== 'float32') return 'Gemm on float16';
    if (inputs[2] !== undefined && inputs[2] !== 'float32') return `Gemm with a ${inputs[2]} C`;
    return t;
  },
  packs: [1],
  prepare(node, constants) {
    const b = constants[1];
    if (!b) return undefined;
    return gemmB(b, node.attrs.int('transB', 0) !== 0);
  },
  run(inputs, node, prepared) {
    const transA = node.attrs.int('transA', 0) !== 0;
    const alpha = node.attrs.float('alpha', 1);
    const beta = node.attrs.float('beta', 1);
    const a = input(inputs, 0);
    let aData = a.data as Float32Array;
    let [M, K] = a.dims as [number, number];
    if (transA) {
      aData = transposeLast2(aData, 1, M, K);
      [M, K] = [K, M];
    }
    const b =
      (prepared as PackedB | undefined) ??
      gemmB(input(inputs, 1), node.attrs.int('transB', 0) !== 0);
    if (b.K !== K) throw new Error(`Gemm of [${M}, ${K}] and a B with ${b.K} rows`);
    const out = new Float32Array(M * b.N);
    gemm(aData, 0, M, K, b.data, 0, b.N, b.ld, out, 0, b.N);
    if (alpha !== 1) for (let i = 0; i < out.length; i++) out[i] = out[i]! * alpha;
    const c = inputs[2];
    if (c && beta !== 0) {
      const cd = c.data as Float32Array;
      const [cr, cc] =
        c.dims.length === 2 ? c.dims : c.dims.length === 1 ? [1, c.dims[0]!] : [1, 1];
      for (let i = 0; i < M; i++) {
        for (let j = 0; j < b.N; j++) {
          const v = cd[(cr === 1 ? 0 : i) * cc! + (cc === 1 ? 0 : j)]!;
          out[i * b.N + j] = out[i * b.N + j]! + beta * v;
        }
      }
    }
    return [new Tensor('float32', [M, b.N], out)];
  },
};

/** Gemm's B as [K, N]: as stored, or transposed when transB. */
function gemmB(b: Tensor, transB: boolean): PackedB {
  const [r, c] = b.dims as [number, number];
  const data = b.data as Float32Array;
  return transB
    ? { batchDims: [], K: c, N: r, ld: r, data: transposeLast2(data, 1, r, c), vector: false }
    : { batchDims: [], K: r, N: c, ld: c, data, vector: false };
}

export const MATMUL_OPS: Record<string, OpImpl> = {
  MatMul: matmulOp,
  Gemm: gemmOp,
};
