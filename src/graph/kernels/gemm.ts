/**
 * The one product every MatMul, Gemm and MatMulNBits runs through: C = A·B for row-major
 * float32 A [M, K] and B [K, N]. On the WebAssembly SIMD kernel (wasm-gemm.ts) where there is one
 * and the product is worth copying for, else in JavaScript (double-precision sums, stored as
 * float32).
 */
import { wasmGemm } from './wasm-gemm.js';

/** Below this many multiply-adds, copying into the kernel's memory costs more than it saves. */
const WASM_FROM = 4096;

/**
 * out[outOff + i·ldc + j] = Σ_k a[aOff + i·K + k] · b[bOff + k·ldb + j], for i < M, j < N.
 */
export function gemm(
  a: Float32Array,
  aOff: number,
  M: number,
  K: number,
  b: Float32Array,
  bOff: number,
  N: number,
  ldb: number,
  out: Float32Array,
  outOff: number,
  ldc: number,
): void {
  if (M === 0 || N === 0) return;
  if (K === 0) {
    for (let i = 0; i < M; i++) out.fill(0, outOff + i * ldc, outOff + i * ldc + N);
    return;
  }
  const kernel = M * N * K >= WASM_FROM ? wasmGemm() : null;
  if (kernel) gemmWasm(kernel, a, aOff, M, K, b, bOff, N, ldb, out, outOff, ldc);
  else gemmJs(a, aOff, M, K, b, bOff, N, ldb, out, outOff, ldc);
}

/**
 * The JavaScript kernel: B transposed once into rows of K values, then four rows of A against
 * one row of Bᵀ at a time (each value of Bᵀ loaded serves four products).
 */
function gemmJs(
  a: Float32Array,
  aOff: number,
  M: number,
  K: number,
  b: Float32Array,
  bOff: number,
  N: number,
  ldb: number,
  out: Float32Array,
  outOff: number,
  ldc: number,
): void {
  const bt = new Float32Array(N * K);
  for (let k = 0; k < K; k++) {
    const row = bOff + k * ldb;
    for (let j = 0; j < N; j++) bt[j * K + k] = b[row + j]!;
  }
  let i = 0;
  for (; i + 4 <= M; i += 4) {
    const a0 = aOff + i * K;
    const [a1, a2, a3] = [a0 + K, a0 + 2 * K, a0 + 3 * K];
    const o = outOff + i * ldc;
    for (let j = 0; j < N; j++) {
      const b0 = j * K;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
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
    for (let j = 0; j < N; j++) {
      let s = 0;
      for (let k = 0; k < K; k++) s += a[a0 + k]! * bt[j * K + k]!;
      out[outOff + i * ldc + j] = s;
    }
  }
}

function gemmWasm(
  kernel: {
    gemm(a: number, b: number, c: number, m: number, n: number, k: number): void;
    memory: WebAssembly.Memory;
  },
  a: Float32Array,
  aOff: number,
  M: number,
  K: number,
  b: Float32Array,
  bOff: number,
  N: number,
  ldb: number,
  out: Float32Array,
  outOff: number,
  ldc: number,
): void {
  const m4 = Math.ceil(M / 4) * 4;
  const n8 = Math.ceil(N / 8) * 8;
  const aBytes = m4 * K * 4;
  const bBytes = K * n8 * 4;
  const need = aBytes + bBytes + m4 * n8 * 4;
  const memory = kernel.memory;
  if (memory.buffer.byteLength < need) {
    memory.grow(Math.ceil((need - memory.buffer.byteLength) / 65536));
  }
  const f = new Float32Array(memory.buffer);
  // A, its padding rows zeroed.
  f.set(a.subarray(aOff, aOff + M * K), 0);
  f.fill(0, M * K, m4 * K);
  // B, each row padded to n8 with zeros (one copy when it is stored so already).
  const bAt = aBytes / 4;
  if (ldb === n8) f.set(b.subarray(bOff, bOff + K * n8), bAt);
  else {
    for (let k = 0; k < K; k++) {
      const to = bAt + k * n8;
      f.set(b.subarray(bOff + k * ldb, bOff + k * ldb + N), to);
      if (n8 > N) f.fill(0, to + N, to + n8);
    }
  }
  const cAt = bAt + K * n8;
  kernel.gemm(0, aBytes, cAt * 4, m4, n8, K);
  for (let i = 0; i < M; i++) {
    out.set(f.subarray(cAt + i * n8, cAt + i * n8 + N), outOff + i * ldc);
  }
}
