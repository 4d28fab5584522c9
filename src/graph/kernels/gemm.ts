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
  const acc = new Float64Array(N);
  for (let i = 0; i < M; i++) {
    acc.fill(0);
    const row = aOff + i * K;
    for (let k = 0; k < K; k++) {
      const x = a[row + k]!;
      if (x === 0) continue;
      const br = bOff + k * ldb;
      for (let j = 0; j < N; j++) acc[j] = acc[j]! + x * b[br + j]!;
    }
    const o = outOff + i * ldc;
    for (let j = 0; j < N; j++) out[o + j] = acc[j]!;
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
