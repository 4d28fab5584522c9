/**
 * The two token mixers of Qwen3.5 (transformers' modeling_qwen3_5.py) as ONNX subgraphs:
 * gated full attention with partial rotary and a KV cache, and the Gated DeltaNet layer with
 * its causal conv state and recurrent state. State inputs/outputs are named as in backbone.ts.
 */
import type { Qwen35TextConfig } from '../release.js';
import { attr } from '../onnx/graph.js';
import { DataType } from '../onnx/proto.js';
import type { BackboneOps, LinearEncoding } from './backbone-ops.js';

/** Shared per-call tensors: rotary cos/sin [T, rotaryDim/2] and additive mask [T, P+T]. */
export interface LayerContext {
  cos: string;
  sin: string;
  mask: string;
  rotaryDim: number;
}

type Read = (name: string) => Float32Array;

/** Channels of the linear-attention causal conv: q, k and v side by side. */
export function linearConvDim(c: Qwen35TextConfig): number {
  return (
    2 * c.linear_num_key_heads * c.linear_key_head_dim +
    c.linear_num_value_heads * c.linear_value_head_dim
  );
}

/** A slice end beyond any length (ONNX clamps it). */
const TO_END = Number.MAX_SAFE_INTEGER;

/** Rotates the first rotaryDim features of x [1, heads, T, headDim] (rotate_half form). */
function rotary(ops: BackboneOps, x: string, ctx: LayerContext, headDim: number): string {
  const half = ctx.rotaryDim / 2;
  const x1 = ops.slice(x, 0, half, -1);
  const x2 = ops.slice(x, half, ctx.rotaryDim, -1);
  const g = ops.g;
  const first = g.op('Sub', [ops.mul(x1, ctx.cos), ops.mul(x2, ctx.sin)]);
  const second = ops.add(ops.mul(x2, ctx.cos), ops.mul(x1, ctx.sin));
  const parts = [first, second];
  if (ctx.rotaryDim < headDim) parts.push(ops.slice(x, ctx.rotaryDim, headDim, -1));
  return g.op('Concat', parts, { axis: attr.int(-1) });
}

/**
 * The head dims [lo, hi) that can add to an attention score: those where some head's query row
 * (in q_proj) and its kv head's key row (in k_proj) both hold a nonzero weight (all the rotary
 * dims as one, since rotary mixes them in pairs), widened to a contiguous range. A dim outside
 * it has a zero query or a zero key at every position (q_norm and k_norm scale a zero row to
 * zero), so leaving it out of q·kᵀ changes no score. Real weights use every dim, [0, head_dim);
 * a model written with few score dims (`clef-web train`'s pooling layer reads 3 of 184) then
 * costs a (tokens × keys × 3) product for its scores instead of × 184.
 */
export function scoreDims(
  qProj: Float32Array,
  kProj: Float32Array,
  c: Qwen35TextConfig,
  rotaryDim: number,
): [number, number] {
  const H = c.hidden_size;
  const D = c.head_dim;
  const group = c.num_attention_heads / c.num_key_value_heads;
  const nonzero = (m: Float32Array, row: number): boolean => {
    for (let j = row * H; j < (row + 1) * H; j++) if (m[j] !== 0) return true;
    return false;
  };
  const anyIn = (m: Float32Array, base: number, from: number, to: number): boolean => {
    for (let d = from; d < to; d++) if (nonzero(m, base + d)) return true;
    return false;
  };
  let lo = D;
  let hi = 0;
  for (let h = 0; h < c.num_attention_heads; h++) {
    const [qBase, kBase] = [h * 2 * D, Math.floor(h / group) * D];
    if (anyIn(qProj, qBase, 0, rotaryDim) && anyIn(kProj, kBase, 0, rotaryDim)) {
      lo = 0;
      hi = Math.max(hi, rotaryDim);
    }
    for (let d = rotaryDim; d < D; d++) {
      if (!nonzero(qProj, qBase + d) || !nonzero(kProj, kBase + d)) continue;
      lo = Math.min(lo, d);
      hi = Math.max(hi, d + 1);
    }
  }
  return lo < hi ? [lo, hi] : [0, D];
}

/**
 * h + attention of x (x = h after the input norm). q_proj yields [query | gate] per head
 * (2·headDim each); q and k get a per-head RMS norm (1 + weight), then rotary; attention is
 * softmax(q·kᵀ/√headDim + mask)·v over past + current keys, grouped (each kv head serves
 * heads/kvHeads consecutive query heads); the result is multiplied by sigmoid(gate) before
 * o_proj.
 */
export function fullAttentionLayer(
  ops: BackboneOps,
  c: Qwen35TextConfig,
  i: number,
  h: string,
  x: string,
  ctx: LayerContext,
  enc: LinearEncoding,
  read: Read,
): string {
  const g = ops.g;
  const H = c.hidden_size;
  const nH = c.num_attention_heads;
  const nKV = c.num_key_value_heads;
  const D = c.head_dim;
  const group = nH / nKV;
  const p = `layers.${i}.self_attn`;
  const w = (name: string) => read(`${p}.${name}.weight`);
  const norm = (name: string) => Float32Array.from(w(name), (v) => 1 + v);

  const [qProj, kProj] = [w('q_proj'), w('k_proj')];
  const qg = ops.reshape(ops.linear(x, qProj, 2 * nH * D, H, enc, `${p}.q_proj`), [
    1,
    -1,
    nH,
    2 * D,
  ]);
  const gate = ops.reshape(ops.slice(qg, D, 2 * D, -1), [1, -1, nH * D]);
  const q = ops.rmsNorm(ops.slice(qg, 0, D, -1), norm('q_norm'), c.rms_norm_eps, `${p}.q_norm`);
  const kLin = ops.linear(x, kProj, nKV * D, H, enc, `${p}.k_proj`);
  const k = ops.rmsNorm(
    ops.reshape(kLin, [1, -1, nKV, D]),
    norm('k_norm'),
    c.rms_norm_eps,
    `${p}.k_norm`,
  );
  const vLin = ops.linear(x, w('v_proj'), nKV * D, H, enc, `${p}.v_proj`);
  const heads = [0, 2, 1, 3];
  // Queries only meet keys in the score dims: past the rotary ones, rotary leaves them as they are.
  const [lo, hi] = scoreDims(qProj, kProj, c, ctx.rotaryDim);
  const qHeads = ops.transpose(q, heads);
  const qRot = lo >= ctx.rotaryDim ? qHeads : rotary(ops, qHeads, ctx, D);
  const kRot = rotary(ops, ops.transpose(k, heads), ctx, D);
  const v = ops.transpose(ops.reshape(vLin, [1, -1, nKV, D]), heads);

  const keys = g.node('Concat', [`past_key.${i}`, kRot], {
    attrs: { axis: attr.int(2) },
    outputs: [`present_key.${i}`],
  })[0] as string;
  const values = g.node('Concat', [`past_value.${i}`, v], {
    attrs: { axis: attr.int(2) },
    outputs: [`present_value.${i}`],
  })[0] as string;
  const kvShape = [1, nKV, 'total_sequence_length', D];
  g.output(keys, keys, DataType.FLOAT, kvShape);
  g.output(values, values, DataType.FLOAT, kvShape);

  // [1, kvHeads, group, T, D] · [1, kvHeads, 1, D, S]: grouped heads by broadcasting; only
  // over the dims where queries and keys can both be nonzero (scoreDims), the rest adding 0.
  const used = (t: string) => (hi - lo === D ? t : ops.slice(t, lo, hi, -1));
  const qScaled = ops.mul(used(qRot), ops.f32([1 / Math.sqrt(D)]));
  const q5 = ops.reshape(qScaled, [1, nKV, group, -1, hi - lo]);
  const kT5 = ops.reshape(ops.transpose(used(keys), [0, 1, 3, 2]), [1, nKV, 1, hi - lo, -1]);
  const scores = ops.add(g.op('MatMul', [q5, kT5]), ctx.mask);
  const probs = g.op('Softmax', [scores], { axis: attr.int(-1) });
  const v5 = ops.reshape(values, [1, nKV, 1, -1, D]);
  const ctx5 = g.op('MatMul', [probs, v5]);
  const merged = ops.reshape(ops.transpose(ops.reshape(ctx5, [1, nH, -1, D]), heads), [
    1,
    -1,
    nH * D,
  ]);
  const gated = ops.mul(merged, g.op('Sigmoid', [gate]));
  return ops.addLinear(h, gated, w('o_proj'), H, nH * D, enc, `${p}.o_proj`);
}

/**
 * h + the Gated DeltaNet of x (x = h after the input norm): in_proj_qkv → causal depthwise
 * conv (kernel K, state = last K−1 inputs) → SiLU → split q, k, v; q and k L2-normalised per
 * head (eps 1e-6); β = sigmoid(in_proj_b); g = −exp(A_log)·softplus(in_proj_a + dt_bias);
 * LinearAttention(gated_delta) with the recurrent state; RMS norm per value head (plain weight)
 * times SiLU(in_proj_z); out_proj.
 */
export function linearAttentionLayer(
  ops: BackboneOps,
  c: Qwen35TextConfig,
  i: number,
  h: string,
  x: string,
  enc: LinearEncoding,
  read: Read,
): string {
  const g = ops.g;
  const H = c.hidden_size;
  const nK = c.linear_num_key_heads;
  const nV = c.linear_num_value_heads;
  const dk = c.linear_key_head_dim;
  const dv = c.linear_value_head_dim;
  const K = c.linear_conv_kernel_dim;
  const C = linearConvDim(c);
  const p = `layers.${i}.linear_attn`;

  const mixed = ops.linear(x, read(`${p}.in_proj_qkv.weight`), C, H, enc, `${p}.in_proj_qkv`);
  const z = ops.linear(x, read(`${p}.in_proj_z.weight`), nV * dv, H, enc, `${p}.in_proj_z`);
  const b = ops.linear(x, read(`${p}.in_proj_b.weight`), nV, H, enc, `${p}.in_proj_b`);
  const a = ops.linear(x, read(`${p}.in_proj_a.weight`), nV, H, enc, `${p}.in_proj_a`);

  // Causal depthwise conv over [state (K−1 steps) | current (T steps)], token-major.
  const padded = g.op('Concat', [ops.transpose(`conv_state.${i}`, [0, 2, 1]), mixed], {
    axis: attr.int(1),
  });
  const stateOut = g.node('Transpose', [ops.slice(padded, -(K - 1), TO_END, 1)], {
    attrs: { perm: attr.ints([0, 2, 1]) },
    outputs: [`present_conv_state.${i}`],
  })[0] as string;
  g.output(stateOut, stateOut, DataType.FLOAT, [1, C, K - 1]);
  const convW = read(`${p}.conv1d.weight`); // [C, 1, K]
  let conv = '';
  for (let j = 0; j < K; j++) {
    const tap = Float32Array.from({ length: C }, (_, ch) => convW[ch * K + j] as number);
    const wj = g.initializer(`${p}.conv1d.tap${j}`, DataType.FLOAT, [C], tap);
    const shifted = ops.slice(padded, j, j === K - 1 ? TO_END : j - (K - 1), 1);
    const term = ops.mul(shifted, wj);
    conv = j === 0 ? term : ops.add(conv, term);
  }
  const act = ops.silu(conv);

  const keyDim = nK * dk;
  const l2 = (t: string) =>
    ops.reshape(ops.normalize(ops.reshape(t, [1, -1, nK, dk]), 1e-6, 'sum'), [1, -1, keyDim]);
  const q = l2(ops.slice(act, 0, keyDim, -1));
  const k = l2(ops.slice(act, keyDim, 2 * keyDim, -1));
  const v = ops.slice(act, 2 * keyDim, C, -1);

  const beta = g.op('Sigmoid', [b]);
  const dtBias = g.initializer(`${p}.dt_bias`, DataType.FLOAT, [nV], read(`${p}.dt_bias`));
  const negA = Float32Array.from(read(`${p}.A_log`), (v) => -Math.exp(v));
  const negAName = g.initializer(`${p}.neg_exp_A_log`, DataType.FLOAT, [nV], negA);
  const decay = ops.mul(ops.softplus(ops.add(a, dtBias)), negAName);

  const [core, state] = g.node('LinearAttention', [q, k, v, `recurrent_state.${i}`, decay, beta], {
    domain: 'com.microsoft',
    attrs: {
      q_num_heads: attr.int(nK),
      kv_num_heads: attr.int(nV),
      update_rule: attr.string('gated_delta'),
      scale: attr.float(1 / Math.sqrt(dk)),
    },
    outputs: [`${p}/core`, `present_recurrent_state.${i}`],
  }) as [string, string];
  g.output(state, state, DataType.FLOAT, [1, nV, dk, dv]);

  const normW = read(`${p}.norm.weight`);
  const normed = ops.rmsNorm(
    ops.reshape(core, [1, -1, nV, dv]),
    normW,
    c.rms_norm_eps,
    `${p}.norm`,
  );
  const gated = ops.mul(normed, ops.silu(ops.reshape(z, [1, -1, nV, dv])));
  return ops.addLinear(
    h,
    ops.reshape(gated, [1, -1, nV * dv]),
    read(`${p}.out_proj.weight`),
    H,
    nV * dv,
    enc,
    `${p}.out_proj`,
  );
}
