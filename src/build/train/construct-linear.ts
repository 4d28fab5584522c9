/**
 * The constructed release's Gated DeltaNet (linear attention) layers beyond the flag layer (that
 * is flag-layer.ts): the order or scope layer, when the model has one, before the pooling layer,
 * and the shape and tensors every linear layer of the release shares. Their weights are all set on
 * purpose (construct.ts writes the rest of the release).
 */
import { type TensorToWrite } from '../safetensors.js';
import { layerTensorName } from '../release.js';
import { CONST_VALUE, hiddenLayout, type ModelParams, type ModelShape } from './model.js';
import {
  CONSTANT_CHANNEL,
  FLAG_GATE,
  isPointer,
  KEY_DIM,
  MAX_LAG,
  type PairParams,
} from './pairs.js';
import { FLAG_DROP, SCOPE_CLEAR, SCOPE_GAINS, SCOPE_KEY, scopeLayerParams } from './scope.js';
import { POINTER_CLEAR, POINTER_KEY, POINTER_WRITE } from './pointer.js';

/** The scope marks' cue and break dims (scope.ts scopeEmbedding: cue, break, start of a word). */
export const SCOPE_CUE_DIM = 0;
export const SCOPE_BREAK_DIM = 1;

const SCOPE_SHAPE = scopeLayerParams().shape;
/**
 * The flag layer's heads: STATE, SCHEMA, erase, the cue head where cues leave the bag, and the
 * clause head where the model has a clause weight.
 */
export function flagHeads(shape: Pick<ModelShape, 'cuesLeftOut' | 'clauseWeight'>): number {
  return 3 + (shape.cuesLeftOut === true ? 1 : 0) + (shape.clauseWeight === undefined ? 0 : 1);
}

/** The linear layers after the flag layer, in order: the scope layer, then the order layer. */
export function linearLayers(shape: Pick<ModelShape, 'pairs' | 'scope'>): Array<'scope' | 'order'> {
  return [
    ...(shape.scope === true ? (['scope'] as const) : []),
    ...(shape.pairs !== undefined ? (['order'] as const) : []),
  ];
}

/**
 * The linear layers' shared shape (one config for all of them): value heads and their dim, the
 * most any of them needs. A layer's heads past its own write nothing, and its channels past its
 * own read nothing (silu(0) = 0: they add nothing to the head's RMSNorm).
 */
export function linearShape(
  shape: Pick<ModelShape, 'pairs' | 'scope' | 'cuesLeftOut' | 'clauseWeight'>,
): {
  heads: number;
  dv: number;
} {
  const layers = [shape.pairs, shape.scope === true ? SCOPE_SHAPE : undefined].filter(
    (l) => l !== undefined,
  );
  return {
    heads: Math.max(flagHeads(shape), ...layers.map((l) => l.heads.length)),
    dv: Math.max(1, ...layers.map((l) => l.dv)),
  };
}

export interface LinearWeights {
  qkv: Float32Array;
  conv: Float32Array;
  z: Float32Array;
  b: Float32Array;
  /** in_proj_a: the decay's input (zero but for the scope layer's break and the clause head's STATE). */
  a: Float32Array;
  aLog: Float32Array;
  dtBias: Float32Array;
  out: Float32Array;
}

export function emptyLinear(D: number, heads: number, dv: number): LinearWeights {
  const C = heads * dv;
  const convDim = 2 * KEY_DIM + C;
  return {
    qkv: new Float32Array(convDim * D),
    conv: new Float32Array(convDim * (MAX_LAG + 1)),
    z: new Float32Array(C * D),
    b: new Float32Array(heads * D),
    a: new Float32Array(heads * D),
    aLog: new Float32Array(heads),
    dtBias: new Float32Array(heads),
    out: new Float32Array(D * C),
  };
}

export function linearTensors(
  i: number,
  D: number,
  heads: number,
  dv: number,
  w: LinearWeights,
): TensorToWrite[] {
  const C = heads * dv;
  const convDim = 2 * KEY_DIM + C;
  const t = (name: string, shape: number[], data: Float32Array): TensorToWrite => ({
    name: layerTensorName(i, name),
    dtype: 'F32',
    shape,
    data,
  });
  return [
    t('input_layernorm.weight', [D], new Float32Array(D)),
    t('linear_attn.A_log', [heads], w.aLog),
    t('linear_attn.conv1d.weight', [convDim, 1, MAX_LAG + 1], w.conv),
    t('linear_attn.dt_bias', [heads], w.dtBias),
    t('linear_attn.in_proj_a.weight', [heads, D], w.a),
    t('linear_attn.in_proj_b.weight', [heads, D], w.b),
    t('linear_attn.in_proj_qkv.weight', [convDim, D], w.qkv),
    t('linear_attn.in_proj_z.weight', [C, D], w.z),
    t('linear_attn.norm.weight', [dv], new Float32Array(dv).fill(1)),
    t('linear_attn.out_proj.weight', [D, C], w.out),
    t('mlp.down_proj.weight', [D, 8], new Float32Array(D * 8)),
    t('mlp.gate_proj.weight', [8, D], new Float32Array(8 * D)),
    t('mlp.up_proj.weight', [8, D], new Float32Array(8 * D)),
    t('post_attention_layernorm.weight', [D], new Float32Array(D)),
  ];
}

/**
 * The order layer (pairs.ts) as a Gated DeltaNet layer: keys and queries one constant direction
 * (so the recurrent state of a value head is one memory vector), memory heads that never forget
 * (decay 1) and write with σ(B · ê + ...); the gate z and the memory writes are shut outside the
 * state by FLAG_GATE on the flag; out_proj writes into the content dims. Value heads past the
 * layer's own (linearShape: the flag layer's count) write nothing. Its MLP is zero.
 */
export function orderLayer(
  params: ModelParams,
  pairs: PairParams,
  i: number,
  D: number,
): TensorToWrite[] {
  const L = hiddenLayout(params.shape);
  return linearTensors(i, D, ...layerWeights(params, pairs, D, L.pairEmb, FLAG_GATE, 1));
}

/**
 * The scope layer (scope.ts) as a Gated DeltaNet layer: the order layer's construction with the
 * scope's own gains (SCOPE_GAINS), then what only it has (see below).
 */
export function scopeLayer(
  params: ModelParams,
  scope: PairParams,
  i: number,
  D: number,
): TensorToWrite[] {
  const L = hiddenLayout(params.shape);
  const [heads, dv, w] = layerWeights(params, scope, D, L.emb, SCOPE_GAINS.flag, SCOPE_GAINS.key);
  const C = heads * dv;
  const K = MAX_LAG + 1;
  // The scope layer writes its gated value (channel 1) into the flag dim, not the content, and a
  // break empties its memory by decay (scope.ts, SCOPE_CLEAR): the decay of its one head (0)
  // reads the break's pair-embedding dim (scopeEmbedding: 0 cue, 1 break, 2 start of a word).
  // Its key and value read the token before (the conv's lag-1 tap): the key is slot A's after a
  // cue and slot B's after anything else (SCOPE_KEY), the value the cue's, so only the word
  // after a cue writes the slot the query reads.
  w.out[L.flag * C + 1] = -FLAG_DROP;
  w.a[L.emb + 1] = SCOPE_CLEAR.gain;
  w.aLog[0] = 0;
  w.dtBias[0] = SCOPE_CLEAR.bias;
  const slots: Array<[number, number]> = [
    [KEY_DIM, 1],
    [KEY_DIM + 1, -1],
  ];
  for (const [row, sign] of slots) {
    w.qkv[row * D + L.constant] = -sign * SCOPE_KEY.offset;
    w.qkv[row * D + L.emb] = sign * SCOPE_KEY.gain;
  }
  for (const row of [KEY_DIM, KEY_DIM + 1, 2 * KEY_DIM + 1]) {
    w.conv[row * K + (K - 1)] = 0;
    w.conv[row * K + (K - 2)] = 1;
  }
  return linearTensors(i, D, heads, dv, w);
}

/** An order layer's weights (pairs.ts layout), its pair embedding at `embAt` in the residual. */
function layerWeights(
  params: ModelParams,
  pairs: PairParams,
  D: number,
  embAt: number,
  F: number,
  keyGain: number,
): [number, number, LinearWeights] {
  const L = hiddenLayout(params.shape);
  const { heads, m, dv: ownDv } = pairs.shape;
  const { heads: allHeads, dv } = linearShape(params.shape);
  const C = allHeads * dv;
  const K = MAX_LAG + 1;
  const w = emptyLinear(D, allHeads, dv);
  w.qkv[0 * D + L.constant] = keyGain; // query channel 0
  w.qkv[KEY_DIM * D + L.constant] = keyGain; // key channel 0
  for (let c = 0; c < 2 * KEY_DIM; c++) w.conv[c * K + (K - 1)] = 1;
  heads.forEach((head, h) => {
    // k: the channel in pairs' arrays; kc: in the release, whose heads may have more channels.
    for (let c = 0; c < ownDv; c++) {
      const k = h * ownDv + c;
      const kc = h * dv + c;
      const row = 2 * KEY_DIM + kc;
      if (c === 0) w.qkv[row * D + L.constant] = CONSTANT_CHANNEL / CONST_VALUE;
      else if (isPointer(pairs.shape))
        // The pointer's values read the class content (pointer.ts).
        for (let j = 0; j < pairs.outDims; j++)
          w.qkv[row * D + L.content + j] = pairs.u[k * pairs.outDims + j] as number;
      else for (let j = 0; j < m; j++) w.qkv[row * D + embAt + j] = pairs.u[k * m + j] as number;
      // A break (the scope layer's break mark) stores zeros: the pointer's memory empties.
      if (head.kind === 'pointer') w.qkv[row * D + L.emb + SCOPE_BREAK_DIM] = -POINTER_CLEAR;
      const lag = head.kind === 'pointer' ? 1 : 0;
      w.conv[row * K + (K - 1 - lag)] = 1;
      for (let j = 0; j < m; j++) w.z[kc * D + embAt + j] = pairs.z[k * m + j] as number;
      w.z[kc * D + L.constant] = ((pairs.zBias[k] as number) - F) / CONST_VALUE;
      w.z[kc * D + L.flag] = F;
    }
    if (head.kind === 'pointer') {
      // β = σ(POINTER_WRITE r); the key (below) says whether the write reaches the slot read.
      w.b[h * D + L.constant] = POINTER_WRITE / CONST_VALUE;
      w.aLog[h] = -60;
    } else {
      for (let j = 0; j < m; j++) w.b[h * D + embAt + j] = pairs.b[h * m + j] as number;
      w.b[h * D + L.constant] = ((pairs.bBias[h] as number) - F) / CONST_VALUE;
      w.b[h * D + L.flag] = F;
      // decay exp(−e^−60 · softplus(0)) = 1 to double precision: the memory never fades.
      w.aLog[h] = -60;
    }
  });
  if (isPointer(pairs.shape)) {
    // Keys from the token before (the conv's lag-1 tap): slot A after a content word or a break
    // outside a scope, slot B after anything else (pointer.ts POINTER_KEY); the query reads A.
    if (!heads.every((head) => head.kind === 'pointer'))
      throw new Error('a layer with pointer heads has only pointer heads (they share its keys)');
    const { gain, offset, flag } = POINTER_KEY;
    const slots: Array<[number, number]> = [
      [KEY_DIM, 1],
      [KEY_DIM + 1, -1],
    ];
    for (const [row, sign] of slots) {
      w.qkv[row * D + L.constant] = sign * (-offset - flag / CONST_VALUE);
      w.qkv[row * D + L.pointerMark] = sign * gain;
      w.qkv[row * D + L.emb + SCOPE_BREAK_DIM] = sign * gain;
      w.qkv[row * D + L.flag] = sign * flag;
      w.conv[row * K + (K - 1)] = 0;
      w.conv[row * K + (K - 2)] = 1;
    }
    w.qkv[0 * D + L.constant] = SCOPE_GAINS.key; // query channel 0: slot A
  }
  const own = heads.length * ownDv;
  for (let j = 0; j < pairs.outDims; j++)
    for (let k = 0; k < own; k++) {
      const kc = Math.floor(k / ownDv) * dv + (k % ownDv);
      w.out[(L.content + j) * C + kc] = pairs.wo[j * own + k] as number;
    }
  return [allHeads, dv, w];
}
