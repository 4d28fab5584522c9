/**
 * onnxruntime's block-quantised contrib ops (com.microsoft), in the layout
 * src/build/convert/quantize.ts writes: blocks of `block_size` values along K, uint8 storage (two
 * 4-bit values per byte, the even one in the low nibble), float32 scales, uint8 zero points
 * packed the same way; value = (q − zero_point) · scale.
 *
 * MatMulNBits dequantises its weight a panel of rows at a time into float32 and multiplies
 * with the float32 kernel (as onnxruntime's CPU does at accuracy_level 0), so the package's
 * weights stay quantised in memory.
 */
import { input, type OpImpl } from '../op-types.js';
import { Tensor, intsOf, type DType } from '../tensor.js';
import { gemm } from './gemm.js';

/** Output rows of W dequantised per panel (bounds the scratch to PANEL·K floats). */
const PANEL = 64;

interface BlockLayout {
  bits: number;
  blockSize: number;
  /** Values per row (K), blocks per row, bytes per block. */
  k: number;
  blocks: number;
  blob: number;
  /** Bytes of zero points per row. */
  zpRow: number;
}

/**
 * Dequantises row `row` of a block-quantised matrix into out[outOff, outOff + K), computing
 * (q − zp) · scale as one float32 rounding of an exact product (q − zp is a small integer).
 */
function dequantizeRow(
  data: Uint8Array,
  scales: Float32Array,
  zeroPoints: Uint8Array | null,
  L: BlockLayout,
  row: number,
  out: Float32Array,
  outOff: number,
): void {
  const defaultZp = 1 << (L.bits - 1);
  for (let b = 0; b < L.blocks; b++) {
    const scale = scales[row * L.blocks + b]!;
    let zp = defaultZp;
    if (zeroPoints) {
      if (L.bits === 8) zp = zeroPoints[row * L.zpRow + b]!;
      else {
        const byte = zeroPoints[row * L.zpRow + (b >> 1)]!;
        zp = b & 1 ? byte >> 4 : byte & 15;
      }
    }
    const base = (row * L.blocks + b) * L.blob;
    const start = b * L.blockSize;
    const count = Math.min(L.blockSize, L.k - start);
    const o = outOff + start;
    if (L.bits === 8) {
      for (let i = 0; i < count; i++) out[o + i] = (data[base + i]! - zp) * scale;
    } else {
      for (let i = 0; i < count; i++) {
        const byte = data[base + (i >> 1)]!;
        out[o + i] = ((i & 1 ? byte >> 4 : byte & 15) - zp) * scale;
      }
    }
  }
}

function bitsOk(bits: number, blockSize: number): string | null {
  if (bits !== 4 && bits !== 8) return `bits = ${bits} (4 and 8 are implemented)`;
  if (blockSize < 2 || blockSize % 2 !== 0) return `block_size = ${blockSize}`;
  return null;
}

const matMulNBits: OpImpl = {
  types(inputs, node) {
    const problem = bitsOk(node.attrs.int('bits', 4), node.attrs.int('block_size'));
    if (problem) return `MatMulNBits with ${problem}`;
    const [a, b, scales, zp, gIdx, bias] = inputs;
    if (a !== 'float32' || scales !== 'float32') return `MatMulNBits on ${a} with ${scales} scales`;
    if (b !== 'uint8') return `MatMulNBits with a ${b} weight`;
    if (zp !== undefined && zp !== 'uint8') return `MatMulNBits with ${zp} zero points`;
    if (gIdx !== undefined) return 'MatMulNBits with g_idx';
    if (bias !== undefined && bias !== 'float32') return `MatMulNBits with a ${bias} bias`;
    return ['float32'];
  },
  run(inputs, node) {
    const a = input(inputs, 0);
    const K = node.attrs.int('K');
    const N = node.attrs.int('N');
    const bits = node.attrs.int('bits', 4);
    const blockSize = node.attrs.int('block_size');
    const blocks = Math.ceil(K / blockSize);
    const L: BlockLayout = {
      bits,
      blockSize,
      k: K,
      blocks,
      blob: (blockSize * bits) / 8,
      zpRow: Math.ceil((blocks * bits) / 8),
    };
    if (a.dims.at(-1) !== K) throw new Error(`MatMulNBits: input's last axis is not K = ${K}`);
    const data = input(inputs, 1).data as Uint8Array;
    const scales = input(inputs, 2).data as Float32Array;
    const zeroPoints = inputs[3] ? (inputs[3].data as Uint8Array) : null;
    if (data.length !== N * blocks * L.blob || scales.length !== N * blocks) {
      throw new Error('MatMulNBits: weight or scales do not match N, K and block_size');
    }
    const M = a.size / K;
    const ad = a.data as Float32Array;
    const out = new Float32Array(M * N);
    // A panel of B = Wᵀ: [K, PANEL], W's rows n0 … n0 + PANEL − 1 as its columns.
    const row = new Float32Array(K);
    const panel = new Float32Array(K * PANEL);
    for (let n0 = 0; n0 < N; n0 += PANEL) {
      const cols = Math.min(PANEL, N - n0);
      for (let c = 0; c < cols; c++) {
        dequantizeRow(data, scales, zeroPoints, L, n0 + c, row, 0);
        for (let k = 0; k < K; k++) panel[k * PANEL + c] = row[k]!;
      }
      gemm(ad, 0, M, K, panel, 0, cols, PANEL, out, n0, N);
    }
    const bias = inputs[5]?.data as Float32Array | undefined;
    if (bias) for (let i = 0; i < out.length; i++) out[i] = out[i]! + bias[i % N]!;
    return [new Tensor('float32', [...a.dims.slice(0, -1), N], out)];
  },
};

const gatherBlockQuantized: OpImpl = {
  types(inputs, node) {
    const problem = bitsOk(node.attrs.int('bits', 4), node.attrs.int('block_size', 128));
    if (problem) return `GatherBlockQuantized with ${problem}`;
    if (node.attrs.int('gather_axis', 0) !== 0 || node.attrs.int('quantize_axis', 1) !== 1) {
      return 'GatherBlockQuantized other than gather_axis 0, quantize_axis 1';
    }
    const [data, indices, scales, zp] = inputs;
    if (data !== 'uint8') return `GatherBlockQuantized on ${data} data`;
    if (indices !== 'int64' && indices !== 'int32')
      return `GatherBlockQuantized with ${indices} indices`;
    if (scales !== 'float32') return `GatherBlockQuantized with ${scales} scales`;
    if (zp !== undefined && zp !== 'uint8') return `GatherBlockQuantized with ${zp} zero points`;
    return ['float32' as DType];
  },
  run(inputs, node) {
    const table = input(inputs, 0);
    const bits = node.attrs.int('bits', 4);
    const blockSize = node.attrs.int('block_size', 128);
    if (table.dims.length !== 2) throw new Error('GatherBlockQuantized needs a 2-D table');
    const [rows, bytes] = table.dims as [number, number];
    const hidden = (bytes * 8) / bits;
    const blocks = Math.ceil(hidden / blockSize);
    const L: BlockLayout = {
      bits,
      blockSize,
      k: hidden,
      blocks,
      // A row's values are contiguous: block b starts at b·blockSize values.
      blob: (blockSize * bits) / 8,
      zpRow: Math.ceil((blocks * bits) / 8),
    };
    if (hidden % blockSize !== 0)
      throw new Error('GatherBlockQuantized: rows are not whole blocks');
    const indices = input(inputs, 1);
    const ids = intsOf(indices);
    const scales = input(inputs, 2).data as Float32Array;
    const zeroPoints = inputs[3] ? (inputs[3].data as Uint8Array) : null;
    const out = new Float32Array(ids.length * hidden);
    ids.forEach((id, i) => {
      const row = id < 0 ? id + rows : id;
      if (row < 0 || row >= rows)
        throw new Error(`GatherBlockQuantized index ${id} is outside [0, ${rows})`);
      dequantizeRow(table.data as Uint8Array, scales, zeroPoints, L, row, out, i * hidden);
    });
    return [new Tensor('float32', [...indices.dims, hidden], out)];
  },
};

export const QUANTIZED_OPS: Record<string, OpImpl> = {
  MatMulNBits: matMulNBits,
  GatherBlockQuantized: gatherBlockQuantized,
};
