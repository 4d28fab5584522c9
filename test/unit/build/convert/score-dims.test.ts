/**
 * scoreDims: the attention-score dims the converter keeps. Leaving a dim out is exact only where
 * a query or a key is zero in it at every position, so each case below builds q_proj and k_proj
 * rows by hand and checks which dims the scores keep.
 */
import { describe, expect, it } from 'vitest';
import { scoreDims } from '../../../../src/build/convert/backbone-layers.js';
import type { Qwen35TextConfig } from '../../../../src/build/release.js';

const H = 6; // hidden size
const D = 16; // head dim
const ROTARY = 4;

function config(heads: number, kvHeads: number): Qwen35TextConfig {
  return {
    hidden_size: H,
    head_dim: D,
    num_attention_heads: heads,
    num_key_value_heads: kvHeads,
  } as unknown as Qwen35TextConfig;
}

/** q_proj [2·heads·D, H] and k_proj [kvHeads·D, H], with the given (head, dim) rows set. */
function weights(heads: number, kvHeads: number, q: number[][], k: number[][]) {
  const qProj = new Float32Array(2 * heads * D * H);
  const kProj = new Float32Array(kvHeads * D * H);
  for (const [h, d] of q) qProj[(h! * 2 * D + d!) * H + 1] = 0.5;
  for (const [h, d] of k) kProj[(h! * D + d!) * H + 2] = -0.25;
  return { qProj, kProj };
}

describe('scoreDims', () => {
  it('keeps every dim of dense (real) weights', () => {
    const qProj = Float32Array.from({ length: 2 * 2 * D * H }, (_, i) => Math.sin(i) + 0.01);
    const kProj = Float32Array.from({ length: 2 * D * H }, (_, i) => Math.cos(i) + 0.01);
    expect(scoreDims(qProj, kProj, config(2, 2), ROTARY)).toEqual([0, D]);
  });

  it("keeps the pooling layer's dims where both query and key are nonzero, past the rotary ones", () => {
    // As construct.ts writes it: query at r0 and r0 + 2, key at r0, r0 + 1, r0 + 2.
    const { qProj, kProj } = weights(
      1,
      1,
      [
        [0, 4],
        [0, 6],
      ],
      [
        [0, 4],
        [0, 5],
        [0, 6],
      ],
    );
    expect(scoreDims(qProj, kProj, config(1, 1), ROTARY)).toEqual([4, 7]);
    // A nonzero gate row (q_proj's second half of a head) is not a query dim.
    const gated = weights(
      1,
      1,
      [
        [0, 4],
        [0, D + 9],
      ],
      [
        [0, 4],
        [0, 9],
      ],
    );
    expect(scoreDims(gated.qProj, gated.kProj, config(1, 1), ROTARY)).toEqual([4, 5]);
  });

  it('keeps all rotary dims where a query and a key meet in them, even in different dims', () => {
    // Rotary mixes dim 0 with dim 2: a query in 0 and a key in 2 still score.
    const { qProj, kProj } = weights(
      1,
      1,
      [
        [0, 0],
        [0, 9],
      ],
      [
        [0, 2],
        [0, 9],
      ],
    );
    expect(scoreDims(qProj, kProj, config(1, 1), ROTARY)).toEqual([0, 10]);
  });

  it('reads each query head against its own kv head (grouped heads)', () => {
    // Heads 0, 1 share kv head 0; heads 2, 3 kv head 1. Query in head 2 dim 8, key in kv 0 dim 8:
    // they never meet. Query in head 3 dim 11, key in kv 1 dim 11: they do.
    const { qProj, kProj } = weights(
      4,
      2,
      [
        [2, 8],
        [3, 11],
      ],
      [
        [0, 8],
        [1, 11],
      ],
    );
    expect(scoreDims(qProj, kProj, config(4, 2), ROTARY)).toEqual([11, 12]);
  });

  it('keeps every dim when no query meets a key (nothing to slice to)', () => {
    const { qProj, kProj } = weights(1, 1, [[0, 5]], [[0, 6]]);
    expect(scoreDims(qProj, kProj, config(1, 1), ROTARY)).toEqual([0, D]);
  });
});
