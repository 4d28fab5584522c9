/**
 * Writes fitted model parameters (model.ts) as a Clef release: a two-layer Qwen3.5 text model
 * (both layers full attention) and a joint head whose joint part is closed, so the release's
 * own forward computes the model's logits. Every weight below is set on purpose; none is left
 * random. The residual stream (hiddenLayout):
 *
 *   const | STATE marker | SCHEMA marker | flag | angles (cos, sin per head) | content
 *
 * - Layer 0 writes the flag: its head 0 attends from every position to the STATE token (score
 *   100) or, once one has passed, to the SCHEMA token (score 200); other keys are zero vectors
 *   (score 0). The STATE token's value gives flag +1, SCHEMA's −1, none (before STATE) 0. So the
 *   flag is +1 from the prompt's `STATE` token up to its `SCHEMA` token: the rendered state and
 *   the template tokens on either side (":\n", "\n\n"), the bag.
 * - Layer 1 pools: head p's key is (cos θ, sin θ, flag) of the token, its query constant, so the
 *   score is 12 cos θ^p_t + 100 flag (at most ±17 with flag 0): softmax over the bag with weight
 *   logits 12 tanh ρ^p_t, nothing outside it (e^-71 at most). Its value is the token's content
 *   after the input RMSNorm; o_proj adds the pooled values, × bagScale, to the content dims.
 * - Output gates are saturated open (sigmoid ≥ sigmoid(50)); the MLPs' down_proj is zero; the final
 *   norm keeps the content dims (gain FINAL_SCALE) and the constant dim (gain FINAL_SCALE · β /
 *   CONST_VALUE). Rotary touches dims [0, head_dim/4): keys and queries live after them.
 * - The joint head's hidden_norm is LayerNorm with weight 1, bias 0 (the model's N); its prior
 *   reads the lm_head rows (the model's R: the constant dim and the content dims); every other
 *   head weight is zero, so the joint score is exactly 0 and σ(residual_gate) multiplies nothing.
 */
import { mkdirSync, writeFileSync } from '../host/files.js';
export { RMS_EPS } from './model.js';
import { join } from '../host/paths.js';
import {
  layerTensorName,
  TEXT_PREFIX,
  writeSafetensors,
  type JointHeadConfig,
  type TensorToWrite,
} from '../safetensors.js';
import { jointHeadTensors } from '../head-tensors.js';
import {
  bagScale,
  CONST_VALUE,
  RMS_EPS,
  FINAL_SCALE,
  hiddenLayout,
  priorScale,
  type ModelParams,
} from './model.js';
import { CONSTANT_CHANNEL, FLAG_GATE, KEY_DIM, MAX_LAG, type PairParams } from './pairs.js';
import { FLAG_DROP, SCOPE_GAINS, scopeEmbedding, scopeLayerParams } from './scope.js';
import { cosh, exp, log, tanh } from './portable-math.js';

const SCOPE_SHAPE = scopeLayerParams().shape;

/** The flag layer's scores: STATE, and SCHEMA (which wins once it has passed). */
const MARKER_SCORE = 100;
/** The pooling layer: weight logits ±12 (matcher.WEIGHT_RANGE) and ±100 from the flag. */
const POOL_WEIGHT = 12;
const POOL_FLAG = 100;
/** Gain on queries and keys that q_norm / k_norm then normalise away, eps with it. */
const NORM_GAIN = 1000;

export interface ConstructOptions {
  /** Context length written into the config (max_position_embeddings). */
  contextTokens: number;
  tokenizerJson: object;
  tokenizerConfig: object;
  markers: { state: number; schema: number };
  eosTokenId?: number;
}

export const HEAD_CONFIG_BASE = {
  width: 16,
  routing_layers: 1,
  layers: 1,
  heads: 2,
  feedforward: 16,
  dropout: 0,
};

/** The release's config.json (Qwen3_5ForConditionalGeneration with a text_config). */
export function releaseConfig(
  params: ModelParams,
  options: ConstructOptions,
): Record<string, unknown> {
  const { heads: P, headDim: hd, vocab } = params.shape;
  const rotary = Math.floor(hd / 4);
  const half = rotary / 2;
  const pairs = params.shape.pairs ?? (params.shape.scope === true ? SCOPE_SHAPE : undefined);
  const layerTypes = pairs
    ? ['full_attention', 'linear_attention', 'full_attention']
    : ['full_attention', 'full_attention'];
  return {
    architectures: ['Qwen3_5ForConditionalGeneration'],
    model_type: 'qwen3_5',
    text_config: {
      attention_bias: false,
      attention_dropout: 0,
      attn_output_gate: true,
      dtype: 'float32',
      eos_token_id: options.eosTokenId ?? null,
      full_attention_interval: 1,
      head_dim: hd,
      hidden_act: 'silu',
      hidden_size: hiddenLayout(params.shape).hidden,
      initializer_range: 0.02,
      intermediate_size: 8,
      layer_types: layerTypes,
      linear_conv_kernel_dim: MAX_LAG + 1,
      linear_key_head_dim: pairs ? KEY_DIM : 16,
      linear_num_key_heads: 1,
      linear_num_value_heads: pairs ? pairs.heads.length : 1,
      linear_value_head_dim: pairs ? pairs.dv : 16,
      mamba_ssm_dtype: 'float32',
      max_position_embeddings: options.contextTokens,
      mlp_only_layers: [],
      model_type: 'qwen3_5_text',
      num_attention_heads: P,
      num_hidden_layers: layerTypes.length,
      num_key_value_heads: P,
      partial_rotary_factor: 0.25,
      rms_norm_eps: RMS_EPS,
      rope_parameters: {
        mrope_interleaved: true,
        mrope_section: [
          half - 2 * Math.floor(half / 4),
          Math.floor(half / 4),
          Math.floor(half / 4),
        ],
        partial_rotary_factor: 0.25,
        rope_theta: 10_000_000,
        rope_type: 'default',
      },
      use_cache: true,
      vocab_size: vocab,
    },
    tie_word_embeddings: false,
    transformers_version: '5.0.0',
  };
}

/** The release's tensors: the backbone and lm_head (model.safetensors), and the head. */
export function constructTensors(params: ModelParams, markers: { state: number; schema: number }) {
  const { heads: P, headDim: hd, vocab: V } = params.shape;
  const L = hiddenLayout(params.shape);
  const D = L.hidden;
  const width = P * hd;
  const r0 = Math.floor(hd / 4); // first dim after the rotary ones
  if (r0 + 3 > hd) throw new Error(`head dim ${hd} leaves no room after rotary`);

  const embed = new Float32Array(V * D);
  let maxNormSq = 0;
  for (let t = 0; t < V; t++) {
    const row = embed.subarray(t * D, (t + 1) * D);
    row[L.constant] = CONST_VALUE;
    if (t === markers.state) row[L.stateMarker] = 1;
    if (t === markers.schema) row[L.schemaMarker] = 1;
    for (let p = 0; p < P; p++) {
      const rho = params.rho[t * P + p] as number;
      row[L.angles + 2 * p] = tanh(rho);
      row[L.angles + 2 * p + 1] = 1 / cosh(rho);
    }
    for (let j = 0; j < width; j++) row[L.content + j] = params.theta[t * width + j] as number;
    if (params.scope !== undefined) {
      const [cue, stop] = scopeEmbedding(params.scope[t] as number);
      row[L.emb] = cue;
      row[L.emb + 1] = stop;
    } else {
      for (let j = 0; j < L.embDims; j++)
        row[L.emb + j] = (params.emb as Float64Array)[t * L.embDims + j] as number;
    }
    let sq = 1; // the flag
    for (const v of row) sq += v * v;
    maxNormSq = Math.max(maxNormSq, sq);
  }
  // Output gates: G · x̂_const ≥ 50 for every token, x̂_const = sqrt(D) / |x|.
  const gate = (50 * Math.sqrt(maxNormSq)) / Math.sqrt(D) + 1;

  const tensors: TensorToWrite[] = [];
  const add = (name: string, shape: number[], data: Float32Array): void => {
    tensors.push({ name, dtype: 'F32', shape, data });
  };
  const lm = new Float32Array(V * D);
  const stride = 1 + width;
  for (const [t, r] of params.rowOf) {
    lm[t * D + L.constant] = params.rows[r * stride] as number;
    for (let j = 0; j < width; j++)
      lm[t * D + L.content + j] = params.rows[r * stride + 1 + j] as number;
  }
  add('lm_head.weight', [V, D], lm);
  add(`${TEXT_PREFIX}embed_tokens.weight`, [V, D], embed);

  const qRows = 2 * P * hd;
  const kvRows = P * hd;
  const layer = (i: number, build: (w: Record<string, Float32Array>) => void): void => {
    const w: Record<string, Float32Array> = {
      'input_layernorm.weight': new Float32Array(D),
      'self_attn.k_norm.weight': new Float32Array(hd),
      'self_attn.k_proj.weight': new Float32Array(kvRows * D),
      'self_attn.o_proj.weight': new Float32Array(D * P * hd),
      'self_attn.q_norm.weight': new Float32Array(hd),
      'self_attn.q_proj.weight': new Float32Array(qRows * D),
      'self_attn.v_proj.weight': new Float32Array(kvRows * D),
      'mlp.down_proj.weight': new Float32Array(D * 8),
      'mlp.gate_proj.weight': new Float32Array(8 * D),
      'mlp.up_proj.weight': new Float32Array(8 * D),
      'post_attention_layernorm.weight': new Float32Array(D),
    };
    build(w);
    const shapes: Record<string, number[]> = {
      'input_layernorm.weight': [D],
      'self_attn.k_norm.weight': [hd],
      'self_attn.k_proj.weight': [kvRows, D],
      'self_attn.o_proj.weight': [D, P * hd],
      'self_attn.q_norm.weight': [hd],
      'self_attn.q_proj.weight': [qRows, D],
      'self_attn.v_proj.weight': [kvRows, D],
      'mlp.down_proj.weight': [D, 8],
      'mlp.gate_proj.weight': [8, D],
      'mlp.up_proj.weight': [8, D],
      'post_attention_layernorm.weight': [D],
    };
    for (const [suffix, data] of Object.entries(w))
      add(layerTensorName(i, suffix), shapes[suffix] as number[], data);
  };
  const set = (m: Float32Array, cols: number, row: number, col: number, value: number): void => {
    m[row * cols + col] = value;
  };

  layer(0, (w) => {
    const q = w['self_attn.q_proj.weight'] as Float32Array;
    set(q, D, r0, L.constant, NORM_GAIN); // head 0 query: (1, 2) on dims r0, r0 + 1
    set(q, D, r0 + 1, L.constant, 2 * NORM_GAIN);
    set(q, D, hd, L.constant, gate); // head 0 gate, dim 0
    const k = w['self_attn.k_proj.weight'] as Float32Array;
    set(k, D, r0, L.stateMarker, 1);
    set(k, D, r0 + 1, L.schemaMarker, 1);
    // q̂ = (1, 2)·sqrt(hd/5); a marker's k̂ = sqrt(hd)·(1 + w): score = sqrt(hd/5)(1 + w)·(1 or 2).
    const kn = w['self_attn.k_norm.weight'] as Float32Array;
    kn[r0] = kn[r0 + 1] = (MARKER_SCORE * Math.sqrt(5)) / Math.sqrt(hd) - 1;
    const v = w['self_attn.v_proj.weight'] as Float32Array;
    set(v, D, 0, L.stateMarker, 1);
    set(v, D, 0, L.schemaMarker, -1);
    // A marker's x̂ = x · sqrt(D / (|x|² + D eps)), |x|² = CONST² + 1 + P (constant, marker, angles).
    const markerValue = Math.sqrt(D / (CONST_VALUE * CONST_VALUE + 1 + P + D * RMS_EPS));
    set(w['self_attn.o_proj.weight'] as Float32Array, P * hd, L.flag, 0, 1 / markerValue);
  });

  const pool = params.pairs !== undefined || params.shape.scope === true ? 2 : 1;
  if (params.pairs !== undefined) tensors.push(...orderLayer(params, params.pairs, 1, D));
  else if (params.shape.scope === true)
    tensors.push(...orderLayer(params, scopeLayerParams(), 1, D, SCOPE_GAINS));
  layer(pool, (w) => {
    const q = w['self_attn.q_proj.weight'] as Float32Array;
    const k = w['self_attn.k_proj.weight'] as Float32Array;
    const v = w['self_attn.v_proj.weight'] as Float32Array;
    const o = w['self_attn.o_proj.weight'] as Float32Array;
    for (let p = 0; p < P; p++) {
      const qBase = 2 * p * hd;
      set(q, D, qBase + r0, L.constant, POOL_WEIGHT);
      set(q, D, qBase + r0 + 2, L.constant, POOL_FLAG);
      for (let j = 0; j < hd; j++) set(q, D, qBase + hd + j, L.constant, gate);
      // k_norm rescales the key: a large gain keeps its eps (1e-6) from moving the scores.
      set(k, D, p * hd + r0, L.angles + 2 * p, NORM_GAIN);
      set(k, D, p * hd + r0 + 1, L.angles + 2 * p + 1, NORM_GAIN);
      set(k, D, p * hd + r0 + 2, L.flag, NORM_GAIN);
      for (let j = 0; j < hd; j++) {
        set(v, D, p * hd + j, L.content + p * hd + j, 1);
        set(o, P * hd, L.content + p * hd + j, p * hd + j, bagScale(params.shape));
      }
    }
    // score = sqrt(hd)·κ·(12 cos θ + 100 f) / (sqrt(12² + 100²)·sqrt(1 + f²)): κ makes it exact at f = 1.
    const kappa =
      (Math.sqrt(POOL_WEIGHT * POOL_WEIGHT + POOL_FLAG * POOL_FLAG) * Math.SQRT2) / Math.sqrt(hd);
    const kn = w['self_attn.k_norm.weight'] as Float32Array;
    kn[r0] = kn[r0 + 1] = kn[r0 + 2] = kappa - 1;
  });
  // The content dims and the constant dim survive, scaled up so the head's LayerNorm eps (1e-5)
  // is negligible against their variance (it would otherwise move logits by ~1e-3).
  const finalNorm = new Float32Array(D).fill(-1);
  finalNorm.fill(FINAL_SCALE - 1, L.content, L.content + width);
  finalNorm[L.constant] = (FINAL_SCALE * exp(params.logBias)) / CONST_VALUE - 1;
  add(`${TEXT_PREFIX}norm.weight`, [D], finalNorm);

  return { backbone: tensors, head: headTensors(D, log(priorScale(params))) };
}

/**
 * The order layer (pairs.ts) as a Gated DeltaNet layer: keys and queries one constant direction
 * (so the recurrent state of a value head is one memory vector), lag heads that forget at once
 * (decay exp(−huge) = 0, write strength 1) and read the token `lag` back through the causal
 * conv's one tap, memory heads that never forget (decay 1) and write with σ(B · ê + ...); the
 * gate z and the memory writes are shut outside the state by FLAG_GATE on the flag; out_proj
 * writes into the content dims. Its MLP is zero.
 */
function orderLayer(
  params: ModelParams,
  pairs: PairParams,
  i: number,
  D: number,
  gains: { flag: number; key: number } = { flag: FLAG_GATE, key: 1 },
): TensorToWrite[] {
  const L = hiddenLayout(params.shape);
  const F = gains.flag;
  const { heads, dv, m } = pairs.shape;
  const H = heads.length;
  const C = H * dv;
  const keyDim = KEY_DIM;
  const convDim = 2 * keyDim + C;
  const K = MAX_LAG + 1;
  const qkv = new Float32Array(convDim * D);
  qkv[0 * D + L.constant] = gains.key; // query channel 0
  qkv[keyDim * D + L.constant] = gains.key; // key channel 0
  const conv = new Float32Array(convDim * K);
  for (let c = 0; c < 2 * keyDim; c++) conv[c * K + (K - 1)] = 1;
  const z = new Float32Array(C * D);
  const b = new Float32Array(H * D);
  const aLog = new Float32Array(H);
  const dtBias = new Float32Array(H);
  heads.forEach((head, h) => {
    for (let c = 0; c < dv; c++) {
      const k = h * dv + c;
      const row = 2 * keyDim + k;
      if (c === 0) qkv[row * D + L.constant] = CONSTANT_CHANNEL / CONST_VALUE;
      else for (let j = 0; j < m; j++) qkv[row * D + L.emb + j] = pairs.u[k * m + j] as number;
      conv[row * K + (K - 1 - (head.kind === 'lag' ? head.lag : 0))] = 1;
      for (let j = 0; j < m; j++) z[k * D + L.emb + j] = pairs.z[k * m + j] as number;
      z[k * D + L.constant] = ((pairs.zBias[k] as number) - F) / CONST_VALUE;
      z[k * D + L.flag] = F;
    }
    if (head.kind === 'lag') {
      // β = σ(1000 r) = 1 and decay exp(−e^20 · 20) = 0: the memory is the current value.
      b[h * D + L.constant] = 1000 / CONST_VALUE;
      aLog[h] = 20;
      dtBias[h] = 20;
    } else {
      for (let j = 0; j < m; j++) b[h * D + L.emb + j] = pairs.b[h * m + j] as number;
      b[h * D + L.constant] = ((pairs.bBias[h] as number) - F) / CONST_VALUE;
      b[h * D + L.flag] = F;
      // decay exp(−e^−60 · softplus(0)) = 1 to double precision: the memory never fades.
      aLog[h] = -60;
      dtBias[h] = 0;
    }
  });
  const out = new Float32Array(D * C);
  for (let j = 0; j < pairs.outDims; j++)
    for (let k = 0; k < C; k++) out[(L.content + j) * C + k] = pairs.wo[j * C + k] as number;
  // The scope layer writes its gated value (channel 1) into the flag dim, not the content.
  if (params.shape.scope === true) out[L.flag * C + 1] = -FLAG_DROP;
  const f32 = (name: string, shape: number[], data: Float32Array): TensorToWrite => ({
    name: layerTensorName(i, name),
    dtype: 'F32',
    shape,
    data,
  });
  return [
    f32('input_layernorm.weight', [D], new Float32Array(D)),
    f32('linear_attn.A_log', [H], aLog),
    f32('linear_attn.conv1d.weight', [convDim, 1, K], conv),
    f32('linear_attn.dt_bias', [H], dtBias),
    f32('linear_attn.in_proj_a.weight', [H, D], new Float32Array(H * D)),
    f32('linear_attn.in_proj_b.weight', [H, D], b),
    f32('linear_attn.in_proj_qkv.weight', [convDim, D], qkv),
    f32('linear_attn.in_proj_z.weight', [C, D], z),
    f32('linear_attn.norm.weight', [dv], new Float32Array(dv).fill(1)),
    f32('linear_attn.out_proj.weight', [D, C], out),
    f32('mlp.down_proj.weight', [D, 8], new Float32Array(D * 8)),
    f32('mlp.gate_proj.weight', [8, D], new Float32Array(8 * D)),
    f32('mlp.up_proj.weight', [8, D], new Float32Array(8 * D)),
    f32('post_attention_layernorm.weight', [D], new Float32Array(D)),
  ];
}

/** The head: LayerNorms the identity, the prior's scale fitted, everything else zero. */
function headTensors(D: number, logScale: number): TensorToWrite[] {
  const scalars: Record<string, number> = {
    prior_logit_scale: logScale,
    joint_logit_scale: 0,
    residual_gate: -30,
  };
  return jointHeadTensors({ hidden_size: D, ...HEAD_CONFIG_BASE }).map(({ name, shape, kind }) => {
    const n = shape.reduce((a, b) => a * b, 1);
    const fill = kind === 'norm-weight' ? 1 : kind === 'scalar' ? (scalars[name] as number) : 0;
    return { name, dtype: 'F32' as const, shape, data: new Float32Array(n).fill(fill) };
  });
}

/** Writes the release directory: config, weights, head, tokenizer. */
export function writeRelease(dir: string, params: ModelParams, options: ConstructOptions): void {
  mkdirSync(dir, { recursive: true });
  const { backbone, head } = constructTensors(params, options.markers);
  const D = hiddenLayout(params.shape).hidden;
  writeFileSync(
    join(dir, 'config.json'),
    `${JSON.stringify(releaseConfig(params, options), null, 2)}\n`,
  );
  writeSafetensors(join(dir, 'model.safetensors'), backbone, { format: 'pt' });
  writeSafetensors(join(dir, 'joint_head.safetensors'), head, { format: 'pt' });
  const headConfig: JointHeadConfig = { hidden_size: D, ...HEAD_CONFIG_BASE };
  writeFileSync(join(dir, 'joint_head_config.json'), `${JSON.stringify(headConfig, null, 2)}\n`);
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(options.tokenizerJson));
  writeFileSync(
    join(dir, 'tokenizer_config.json'),
    `${JSON.stringify(options.tokenizerConfig, null, 2)}\n`,
  );
}
