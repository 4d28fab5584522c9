/**
 * MatMul (numpy semantics: batched, broadcast) and Gemm. Every product runs through one kernel,
 * C = A·Bᵀ with B given as rows of K values ("Bt", [N, K]), so both operands are read along
 * contiguous rows; a constant B (a weight) is transposed into that layout once, at load.
 * Sums accumulate in double precision (JavaScript numbers) and are stored as float32.
 */
import { input, type OpImpl } from '../op-types.js';
import { Tensor, narrowToFloat16, widenFloat16, type DType } from '../tensor.js';
import { broadcastDims } from './broadcast.js';

/**
 * out[outOff + i·ldc + j] = Σ_k a[aOff + i·K + k] · bt[btOff + j·K + k], for i < M, j < N
 * (ldc, the output's row length, defaults to N). Four rows of A meet two rows of Bt at a time:
 * each value loaded serves several products.
 */
export function gemmBt(
  a: Float32Array,
  aOff: number,
  M: number,
  K: number,
  bt: Float32Array,
  btOff: number,
  N: number,
  out: Float32Array,
  outOff: number,
  ldc = N,
): void {
  let i = 0;
  for (; i + 4 <= M; i += 4) {
    const a0 = aOff + i * K;
    const a1 = a0 + K;
    const a2 = a1 + K;
    const a3 = a2 + K;
    const o = outOff + i * ldc;
    let j = 0;
    for (; j + 2 <= N; j += 2) {
      const b0 = btOff + j * K;
      const b1 = b0 + K;
      let s00 = 0, s01 = 0, s10 = 0, s11 = 0, s20 = 0, s21 = 0, s30 = 0, s31 = 0; // prettier-ignore
      for (let k = 0; k < K; k++) {
        const x0 = bt[b0 + k]!;
        const x1 = bt[b1 + k]!;
        const y0 = a[a0 + k]!;
        const y1 = a[a1 + k]!;
        const y2 = a[a2 + k]!;
        const y3 = a[a3 + k]!;
        s00 += y0 * x0;
        s01 += y0 * x1;
        s10 += y1 * x0;
        s11 += y1 * x1;
        s20 += y2 * x0;
        s21 += y2 * x1;
        s30 += y3 * x0;
        s31 += y3 * x1;
      }
      out[o + j] = s00;
      out[o + j + 1] = s01;
      out[o + ldc + j] = s10;
      out[o + ldc + j + 1] = s11;
      out[o + 2 * ldc + j] = s20;
      out[o + 2 * ldc + j + 1] = s21;
      out[o + 3 * ldc + j] = s30;
      out[o + 3 * ldc + j + 1] = s31;
    }
    for (; j < N; j++) {
      const b0 = btOff + j * K;
      let s0 = 0, s1 = 0, s2 = 0, s3 = 0; // prettier-ignore
      for (let k = 0; k < K; k++) {
        const x = bt[b0 + k]!;
        s0 += a[a0 + k]! * x;
        s1 += a[a1 + k]! * x;
        s2 += a[a2 + k]! * x;
        s3 += a[a3 + k]! * x;
      }
      out[o + j] = s0;
      out[o + ldc + j] = s1;
      out[o + 2 * ldc + j] = s2;
      out[o + 3 * ldc + j] = s3;
    }
  }
  for (; i < M; i++) {
    const a0 = aOff + i * K;
    const o = outOff + i * ldc;
    for (let j = 0; j < N; j++) {
      const b0 = btOff + j * K;
      let s0 = 0;
      let s1 = 0;
      let k = 0;
      for (; k + 2 <= K; k += 2) {
        s0 += a[a0 + k]! * bt[b0 + k]!;
        s1 += a[a0 + k + 1]! * bt[b0 + k + 1]!;
      }
      if (k < K) s0 += a[a0 + k]! * bt[b0 + k]!;
      out[o + j] = s0 + s1;
    }
  }
}

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

/** B as Bt matrices: dims [..., N, K] of a B of dims [..., K, N] (a 1-D B is [K] → [1, K]). */
interface PackedB {
  batchDims: number[];
  N: number;
  K: number;
  data: Float32Array;
  /** B was 1-D: the output loses its last axis. */
  vector: boolean;
}

function packB(b: Tensor): PackedB {
  const data =
    b.type === 'float16' ? widenFloat16(b.data as Uint16Array) : (b.data as Float32Array);
  if (b.dims.length === 1) {
    return { batchDims: [], N: 1, K: b.dims[0]!, data, vector: true };
  }
  const K = b.dims.at(-2)!;
  const N = b.dims.at(-1)!;
  const batchDims = b.dims.slice(0, -2);
  const batches = data.length / (K * N);
  const bt = N === 1 ? data : transposeLast2(data, batches, K, N);
  return { batchDims, N, K, data: bt, vector: false };
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
    gemmBt(aData, aIndex[t]! * M * K, M * run, K, b.data, bi * N * K, N, out, t * M * N);
    t += run;
  }
  const dims = [...batch, M, N];
  if (aVector) dims.splice(rank, 1);
  if (b.vector) dims.pop();
  return { dims, data: out };
}

/** For each batch of `full`, the index of the matrix in an operand of batch dims `own`. */
function batchIndex(own: readonly number[], full: readonly number[]): Int32Array {
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

function asFloat32(t: Tensor): Float32Array {
  return t.type === 'float16' ? widenFloat16(t.data as Uint16Array) : (t.data as Float32Array);
}

/** float16 products are computed in float32 and rounded once (onnxruntime's CPU does the same). */
function result(type: DType, dims: number[], data: Float32Array): Tensor {
  return type === 'float16'
    ? new Tensor('float16', dims, narrowToFloat16(data))
    : new Tensor('float32', dims, data);
}

const matmul: OpImpl = {
  types: (inputs) => floatTypes(inputs, 'MatMul'),
  packs: [1],
  prepare(_node, constants) {
    const b = constants[1];
    return b ? packB(b) : undefined;
  },
  run(inputs, _node, prepared) {
    const a = input(inputs, 0);
    const packed = (prepared as PackedB | undefined) ?? packB(input(inputs, 1));
    const { dims, data } = matmulPacked(a, asFloat32(a), packed);
    return [result(a.type, dims, data)];
  },
};

/** Gemm: alpha·A'·B' + beta·C for 2-D A and B (transA, transB), C broadcast. */
const gemm: OpImpl = {
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
    gemmBt(aData, 0, M, K, b.data, 0, b.N, out, 0);
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

/** Gemm's B as Bt: as stored when transB, else transposed. */
function gemmB(b: Tensor, transB: boolean): PackedB {
  const [r, c] = b.dims as [number, number];
  const data = b.data as Float32Array;
  return transB
    ? { batchDims: [], N: r, K: c, data, vector: false }
    : { batchDims: [], N: c, K: r, data: transposeLast2(data, 1, r, c), vector: false };
}

export const MATMUL_OPS: Record<string, OpImpl> = {
  MatMul: matmul,
  Gemm: gemm,
};
