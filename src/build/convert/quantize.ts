/**
 * Weight encodings for the ONNX backbone: block quantisation in com.microsoft.MatMulNBits'
 * layout, and float32 → float16.
 *
 * MatMulNBits (onnxruntime contrib op spec): the weight of a linear `y = x · Wᵀ` with
 * W = [N out, K in] is quantised in blocks of `blockSize` consecutive values along K.
 *   B           uint8 [N, kBlocks, blockSize·bits/8]: block values in K order; for 4 bits value
 *               2j in the low nibble and 2j+1 in the high nibble of byte j.
 *   scales      float32 [N, kBlocks]
 *   zero_points uint8 [N, ceil(kBlocks·bits/8)]: packed like B (two per byte at 4 bits, low
 *               nibble = even block), one per byte at 8 bits.
 *   dequantised value = (q − zero_point) · scale; kBlocks = ceil(K / blockSize), the tail of
 *   the last block is padded with zeros.
 *
 * Scheme here: asymmetric per block. The block's range is widened to include 0 (so zero stays
 * exact), scale = (hi − lo) / (2^bits − 1) rounded to float32, zero_point = round(−lo / scale),
 * q = clamp(round(w / scale) + zero_point, 0, 2^bits − 1). Rounding is to the nearest integer,
 * computed in float64 against the float32 scale actually stored.
 */
import { toF16Bits } from '../safetensors.js';

export interface BlockQuantized {
  bits: 4 | 8;
  blockSize: number;
  n: number;
  k: number;
  kBlocks: number;
  /** [n, kBlocks, blockSize·bits/8] */
  data: Uint8Array;
  /** [n, kBlocks] */
  scales: Float32Array;
  /** [n, ceil(kBlocks·bits/8)] */
  zeroPoints: Uint8Array;
}

/** Quantises W = [n rows (out features), k columns (in features)], row-major. */
export function quantizeBlocks(
  w: Float32Array,
  n: number,
  k: number,
  bits: 4 | 8,
  blockSize = 32,
): BlockQuantized {
  if (w.length !== n * k) throw new Error(`quantizeBlocks: ${w.length} values for [${n}, ${k}]`);
  const kBlocks = Math.ceil(k / blockSize);
  const blob = (blockSize * bits) / 8;
  const qmax = 2 ** bits - 1;
  const zpPerRow = Math.ceil((kBlocks * bits) / 8);
  const data = new Uint8Array(n * kBlocks * blob);
  const scales = new Float32Array(n * kBlocks);
  const zeroPoints = new Uint8Array(n * zpPerRow);
  const q = new Uint8Array(blockSize);
  for (let row = 0; row < n; row++) {
    for (let b = 0; b < kBlocks; b++) {
      const start = row * k + b * blockSize;
      const count = Math.min(blockSize, k - b * blockSize);
      let lo = 0;
      let hi = 0;
      for (let i = 0; i < count; i++) {
        const v = w[start + i] as number;
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
      let scale = Math.fround((hi - lo) / qmax);
      if (scale === 0 || !Number.isFinite(scale)) scale = 1;
      const zp = Math.min(qmax, Math.max(0, Math.round(-lo / scale)));
      q.fill(zp); // padding dequantises to exactly 0
      for (let i = 0; i < count; i++) {
        const v = Math.round((w[start + i] as number) / scale) + zp;
        q[i] = Math.min(qmax, Math.max(0, v));
      }
      scales[row * kBlocks + b] = scale;
      const out = (row * kBlocks + b) * blob;
      if (bits === 8) {
        data.set(q, out);
        zeroPoints[row * zpPerRow + b] = zp;
      } else {
        for (let j = 0; j < blob; j++) {
          data[out + j] = (q[2 * j] as number) | ((q[2 * j + 1] as number) << 4);
        }
        const zi = row * zpPerRow + (b >> 1);
        zeroPoints[zi] = (zeroPoints[zi] as number) | (b & 1 ? zp << 4 : zp);
      }
    }
  }
  return { bits, blockSize, n, k, kBlocks, data, scales, zeroPoints };
}

/** The float32 weights a BlockQuantized stands for, [n, k] row-major (for error figures). */
export function dequantizeBlocks(qz: BlockQuantized): Float32Array {
  const { bits, blockSize, n, k, kBlocks, data, scales, zeroPoints } = qz;
  const blob = (blockSize * bits) / 8;
  const zpPerRow = Math.ceil((kBlocks * bits) / 8);
  const out = new Float32Array(n * k);
  for (let row = 0; row < n; row++) {
    for (let col = 0; col < k; col++) {
      const b = Math.floor(col / blockSize);
      const i = col % blockSize;
      const base = (row * kBlocks + b) * blob;
      let qv: number;
      let zp: number;
      if (bits === 8) {
        qv = data[base + i] as number;
        zp = zeroPoints[row * zpPerRow + b] as number;
      } else {
        const byte = data[base + (i >> 1)] as number;
        qv = i & 1 ? byte >> 4 : byte & 15;
        const zbyte = zeroPoints[row * zpPerRow + (b >> 1)] as number;
        zp = b & 1 ? zbyte >> 4 : zbyte & 15;
      }
      out[row * k + col] = Math.fround((qv - zp) * (scales[row * kBlocks + b] as number));
    }
  }
  return out;
}

/** float32 values → IEEE binary16 bits (round to nearest even). */
export function toFloat16Array(values: Float32Array): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = toF16Bits(values[i] as number);
  return out;
}

/** [rows, cols] row-major → [cols, rows] row-major (ONNX MatMul wants Wᵀ = [in, out]). */
export function transpose2d(w: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    const src = r * cols;
    for (let c = 0; c < cols; c++) out[c * rows + r] = w[src + c] as number;
  }
  return out;
}
