/**
 * Writes fitted model parameters (model.ts) as a Clef release: a Qwen3.5 text model of two or
 * three layers (a linear-attention flag layer, the order or scope layer when the model has one,
 * then one full-attention pooling layer) and a joint head whose joint part is closed, so the
 * release's own forward computes the model's logits. Every weight below is set on purpose; none
 * is left random. The residual stream (hiddenLayout):
 *
 *   const | marker | pad | flag | angles (cos, sin per head) | content | pair embedding
 *
 * - Layer 0 writes the flag (flag-layer.ts): 0 before the prompt's `STATE` token, +1 from
 *   it up to its `SCHEMA` token (the rendered state and the template tokens on either side,
 *   ":\n", "\n\n": the bag), −1 from there on. It reads the marker dim (STATE +1, SCHEMA −1) and
 *   erases the pad dim, which only made its input's RMSNorm scale the same for every token.
 * - The pooling layer: head p's key is (cos θ, sin θ, flag) of the token, its query constant, so
 *   the score is 12 cos θ^p_t + 140 flag (at most ±17 with flag 0): softmax over the bag with
 *   weight logits 12 tanh ρ^p_t, nothing outside it (e^-111 at most, 0 in float32). Its value is
 *   the token's content after the input RMSNorm; o_proj adds the pooled values, × bagScale, to the
 *   content dims.
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
import { writeSafetensors, type TensorToWrite } from '../safetensors.js';
import { layerTensorName, TEXT_PREFIX, type JointHeadConfig } from '../release.js';
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
import { KEY_DIM, MAX_LAG, type PairParams } from './pairs.js';
import { scopeEmbedding, scopeLayerParams } from './scope.js';
import { POINTER_CONTENT, POINTER_MARK } from './pointer.js';
import { linearLayers, linearShape, orderLayer, scopeLayer } from './construct-linear.js';
import { CLAUSE_MARK, flagLayer, padRows } from './flag-layer.js';
import { cosh, exp, log, tanh } from './portable-math.js';

/**
 * The pooling layer: weight logits ±12 (matcher.WEIGHT_RANGE) and ±140 from the flag. A token
 * outside the bag scores at least 111 below every token in it, so float32's softmax gives it
 * exactly 0 (e^−111 is below the smallest subnormal, e^−104): at ±100 the prompt's tokens before
 * the state came out as subnormals, which x86 multiplies ~100 times slower, and made the pooled
 * product over the keys the slowest kernel of a decision.
 */
const POOL_WEIGHT = 12;
const POOL_FLAG = 140;
/** Gain on queries and keys that q_norm / k_norm then normalise away, eps with it. */
const NORM_GAIN = 1000;
/**
 * The clause weight's key component, relative to the flag's (at CLAUSE_MARK): its query is the
 * clause weight over this. So small that it leaves the key's norm unchanged in float32 (1 + 1e-8
 * rounds to 1; the float64 reference moves a score by 140 · 2.5e-9).
 */
const CLAUSE_KEY = 1e-4;

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
  const linear = linearShape(params.shape);
  // The flag layer, the scope and order layers the model has, the pooling layer.
  const layerTypes = [
    'linear_attention',
    ...linearLayers(params.shape).map(() => 'linear_attention'),
    'full_attention',
  ];
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
      linear_key_head_dim: KEY_DIM,
      linear_num_key_heads: 1,
      linear_num_value_heads: linear.heads,
      linear_value_head_dim: linear.dv,
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

/**
 * Of the float32 `sin` and the float32 values a step of ~1 ulp below and above it, the one that
 * makes the stored (cos, sin) pair closest to unit length. Only the pair's norm reads the sine (the pooling query has no sine
 * component), and the norm scales the flag's 140 in the pooling score: a pair 1e-7 off unit moves
 * its token's score by ~4e-6.
 */
function unitSine(cos: number, sin: number): number {
  const mid = Math.fround(sin);
  const step = Math.abs(mid) * 2 ** -23 + Number.MIN_VALUE;
  let best = mid;
  for (const s of [Math.fround(mid - step), Math.fround(mid + step)])
    if (Math.abs(cos * cos + s * s - 1) < Math.abs(cos * cos + best * best - 1)) best = s;
  return best;
}

/** The release's tensors: the backbone and lm_head (model.safetensors), and the head. */
export function constructTensors(params: ModelParams, markers: { state: number; schema: number }) {
  const { heads: P, headDim: hd, vocab: V } = params.shape;
  const L = hiddenLayout(params.shape);
  const D = L.hidden;
  const width = P * hd;
  const r0 = Math.floor(hd / 4); // first dim after the rotary ones
  if (r0 + 4 > hd) throw new Error(`head dim ${hd} leaves no room after rotary`);

  const embed = new Float32Array(V * D);
  let maxNormSq = 0;
  for (let t = 0; t < V; t++) {
    const row = embed.subarray(t * D, (t + 1) * D);
    row[L.constant] = CONST_VALUE;
    if (t === markers.state) row[L.marker] = 1;
    if (t === markers.schema) row[L.marker] = -1;
    for (let p = 0; p < P; p++) {
      const rho = params.rho[t * P + p] as number;
      row[L.angles + 2 * p] = tanh(rho);
      row[L.angles + 2 * p + 1] = unitSine(row[L.angles + 2 * p] as number, 1 / cosh(rho));
    }
    for (let j = 0; j < width; j++) row[L.content + j] = params.theta[t * width + j] as number;
    if (params.scope !== undefined)
      scopeEmbedding(params.scope[t] as number).forEach((e, j) => (row[L.emb + j] = e));
    if (params.pointerMarks?.[t] === POINTER_CONTENT) row[L.pointerMark] = POINTER_MARK;
    const m = params.shape.pairs?.m ?? 0;
    for (let j = 0; j < m; j++)
      row[L.pairEmb + j] = (params.emb as Float64Array)[t * m + j] as number;
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
  const n2 = padRows(embed, D, L.pad);
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

  tensors.push(...flagLayer(params.shape, D, Math.sqrt(D / (n2 + D * RMS_EPS))));

  // The scope layer first: the pointer after it sees the words in scope shut by their flag.
  const linear = linearLayers(params.shape);
  linear.forEach((kind, n) => {
    if (kind === 'scope') tensors.push(...scopeLayer(params, scopeLayerParams(), 1 + n, D));
    else tensors.push(...orderLayer(params, params.pairs as PairParams, 1 + n, D));
  });
  const pool = 1 + linear.length;
  layer(pool, (w) => {
    const q = w['self_attn.q_proj.weight'] as Float32Array;
    const k = w['self_attn.k_proj.weight'] as Float32Array;
    const v = w['self_attn.v_proj.weight'] as Float32Array;
    const o = w['self_attn.o_proj.weight'] as Float32Array;
    // The clause weight: a fourth query and key component, the key's the clause head's mark.
    const clauseQuery = (params.shape.clauseWeight ?? 0) / CLAUSE_KEY;
    for (let p = 0; p < P; p++) {
      const qBase = 2 * p * hd;
      set(q, D, qBase + r0, L.constant, POOL_WEIGHT);
      set(q, D, qBase + r0 + 2, L.constant, POOL_FLAG);
      if (params.shape.clauseWeight !== undefined) {
        set(q, D, qBase + r0 + 3, L.constant, clauseQuery);
        set(k, D, p * hd + r0 + 3, L.laterClause, (NORM_GAIN * CLAUSE_KEY) / CLAUSE_MARK);
      }
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
    // score = sqrt(hd)·κ·(12 cos θ + 140 f + c a) / (sqrt(12² + 140² + c²)·sqrt(1 + f² + a²)),
    // c the clause query (0 without), a CLAUSE_KEY after a clause break, else 0: κ makes it
    // exact at f = 1, a = 0, and a word after a break gains c · CLAUSE_KEY, the clause weight.
    const kappa =
      (Math.sqrt(POOL_WEIGHT * POOL_WEIGHT + POOL_FLAG * POOL_FLAG + clauseQuery * clauseQuery) *
        Math.SQRT2) /
      Math.sqrt(hd);
    const kn = w['self_attn.k_norm.weight'] as Float32Array;
    kn[r0] = kn[r0 + 1] = kn[r0 + 2] = kappa - 1;
    if (params.shape.clauseWeight !== undefined) kn[r0 + 3] = kappa - 1;
  });
  // The content dims and the constant dim survive, scaled up so the head's LayerNorm eps (1e-5)
  // is negligible against their variance (it would otherwise move logits by ~1e-3).
  const finalNorm = new Float32Array(D).fill(-1);
  finalNorm.fill(FINAL_SCALE - 1, L.content, L.content + width);
  finalNorm[L.constant] = (FINAL_SCALE * exp(params.logBias)) / CONST_VALUE - 1;
  add(`${TEXT_PREFIX}norm.weight`, [D], finalNorm);

  return { backbone: tensors, head: headTensors(D, log(priorScale(params))) };
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
