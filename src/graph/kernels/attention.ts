/**
 * Attention as the converter writes it, MatMul(q, kᵀ) → softmax(· + mask) → MatMul(·, v), in one
 * kernel (fuse.ts finds the chain): each block of query rows multiplies only the keys up to the
 * last one its mask lets through, so a causal chunk computes about half the scores of the full
 * product, and the scores never leave a block-sized buffer. Every score and every output is the
 * same sum, in the same order, as the three ops give (the same product kernel); masked scores
 * are exactly the zeros softmax gives them.
 *
 * Inputs: q [..., M, K], kᵀ [..., K, S], mask [M, S] (or any trailing part of it; other shapes
 * are broadcast and added first), v [..., S, D]; the batch axes of q broadcast against kᵀ's and
 * v's (grouped heads). Output [..., M, D].
 */
import { input, sameType, type OpImpl } from '../op-types.js';
import { Tensor } from '../tensor.js';
import { broadcastDims } from './broadcast.js';
import { gemm } from './gemm.js';
import { batchIndex } from './matmul.js';

/** Query rows per block (bounds the scores buffer to ROWS × S). */
const ROWS = 64;
/** A mask value at or below this hides its key (the converter writes −1e30). */
const HIDDEN = -1e29;

export const attention: OpImpl = {
  types: sameType(['float32'], 4),
  run(inputs) {
    const [q, kT, mask, v] = [0, 1, 2, 3].map((i) => input(inputs, i)) as [
      Tensor,
      Tensor,
      Tensor,
      Tensor,
    ];
    const M = q.dims.at(-2)!;
    const K = q.dims.at(-1)!;
    const S = kT.dims.at(-1)!;
    const D = v.dims.at(-1)!;
    if (kT.dims.at(-2) !== K || v.dims.at(-2) !== S) {
      throw new Error('attention: q, kᵀ and v do not line up');
    }
    const maskDims = mask.dims;
    const aligned =
      maskDims.length <= 2 &&
      (maskDims.length < 2 || maskDims[0] === M || maskDims[0] === 1) &&
      (maskDims.length < 1 || maskDims.at(-1) === S);
    if (!aligned) throw new Error(`attention: a mask of dims [${maskDims.join(', ')}]`);
    const maskRows = maskDims.length === 2 ? maskDims[0]! : 1;
    const md = mask.data as Float32Array;
    const qBatch = q.dims.slice(0, -2);
    const kvBatch = kT.dims.slice(0, -2);
    const batch = broadcastDims([qBatch, kvBatch, v.dims.slice(0, -2)]);
    const batches = batch.reduce((a, b) => a * b, 1);
    const qIndex = batchIndex(qBatch, batch);
    const kIndex = batchIndex(kvBatch, batch);
    const vIndex = batchIndex(v.dims.slice(0, -2), batch);
    const qd = q.data as Float32Array;
    const kd = kT.data as Float32Array;
    const vd = v.data as Float32Array;
    const out = new Float32Array(batches * M * D);
    // The keys each query row may see: [0, end[i]) holds every unmasked key of row i.
    const end = new Int32Array(M);
    for (let i = 0; i < M; i++) {
      const row = (maskRows === 1 ? 0 : i) * S;
      let e = S;
      while (e > 0 && md[row + e - 1]! <= HIDDEN) e--;
      // A row with every key masked softmaxes them all (evenly, as the unfused ops do).
      end[i] = e === 0 ? S : e;
    }
    const scores = new Float32Array(Math.min(ROWS, M) * S);
    for (let t = 0; t < batches; t++) {
      const qOff = qIndex[t]! * M * K;
      const kOff = kIndex[t]! * K * S;
      const vOff = vIndex[t]! * S * D;
      for (let r0 = 0; r0 < M; r0 += ROWS) {
        const rows = Math.min(ROWS, M - r0);
        let J = 0;
        for (let i = r0; i < r0 + rows; i++) J = Math.max(J, end[i]!);
        gemm(qd, qOff + r0 * K, rows, K, kd, kOff, J, S, scores, 0, J);
        for (let r = 0; r < rows; r++) {
          const i = r0 + r;
          softmaxRow(scores, r * J, J, md, (maskRows === 1 ? 0 : i) * S, end[i]!);
        }
        gemm(scores, 0, rows, J, vd, vOff, D, D, out, (t * M + r0) * D, D);
      }
    }
    return [new Tensor('float32', [...batch, M, D], out)];
  },
};

/**
 * One row of scores [base, base + J): the mask added over its first `e` (the keys it may see),
 * softmaxed there, and 0 after (keys past the last one the mask lets through).
 */
function softmaxRow(
  scores: Float32Array,
  base: number,
  J: number,
  mask: Float32Array,
  m: number,
  e: number,
): void {
  let max = -Infinity;
  for (let j = 0; j < e; j++) {
    const s = scores[base + j]! + mask[m + j]!;
    scores[base + j] = s;
    if (s > max) max = s;
  }
  let sum = 0;
  for (let j = 0; j < e; j++) {
    const d = scores[base + j]! - max;
    const p = d < -104 ? 0 : Math.exp(d);
    scores[base + j] = p;
    sum += p;
  }
  const scale = 1 / sum;
  for (let j = 0; j < e; j++) scores[base + j] = scores[base + j]! * scale;
  scores.fill(0, base + e, base + J);
}
