/**
 * The function `clef-web train` fits: exactly what the constructed Clef weights (construct.ts)
 * compute for a request, small enough to differentiate by hand. Writing it out this way, rather
 * than fitting a generic network, is what lets the trained function and the released model agree
 * to float rounding (construct.test.ts runs the release through the float64 reference).
 *
 * Per state token s (the bag: the state and the template tokens the flag layer marks), with
 * c_s = θ(token) its content (features.ts composes θ from word and character features):
 *
 *   v_s   = √D · c_s / √(|c_s|² + K_s)                 layer 1's input RMSNorm on the content
 *   w^p_s = softmax_s(12 tanh ρ^p_s + C · later_s)      pooling weights of head p (C: the
 *                                                      clause weight, later_s: s follows the
 *                                                      state's first break; scope.ts)
 *   bag   = [Σ_s w^p_s v^p_s]_p                         the pooled content, P heads × headDim
 *
 * At each position i the head reads (the question's instruction tokens, and the last token):
 *
 *   h_i = c_i + B · bag                                 its own content plus the pooled bag (B:
 *                                                      bagScale, so that the bag dominates)
 *   H_i = g ⊙ [1, …, h_i] / rms                         the final RMSNorm keeps the constant
 *                                                      dim (gain F·β) and the content (gain F)
 *   N_i = LayerNorm(H_i)                                the head's hidden_norm (weight 1, bias 0)
 *   a_k = mean_{i ∈ instructions of k} N_i + N_last     the prior's anchor for question k
 *   logit_o = S · cos(lex_o, a_k)                       lex_o: mean lm_head row over o's span
 *
 * The content dims hold one direction per option of every trained question, so the model is a
 * linear classifier over weighted token features with a cosine read-out; β sets how much of the
 * read-out is a bias (the constant dim) against the state's evidence. Parameters: θ (through its
 * features), ρ, the lm_head rows R of option tokens (constant dim + content), S ≤ 100, β.
 *
 * This module holds the shape, the parameters and the pass up to the head's positions (h_i, H_i,
 * N_i); readout.ts holds the anchors and the logits, and modelLogits, the whole function.
 */

import {
  isPointer,
  pairForward,
  type PairContext,
  type PairForward,
  type PairParams,
  type PairShape,
} from './pairs.js';
import { Arena } from './arena.js';
import { exp, tanh } from './portable-math.js';
import { laterClauses, SCOPE_DIMS, SCOPE_LEFT_OUT } from './scope.js';

/** Sizes of the constructed model; `hidden` follows from them (hiddenLayout). */
export interface ModelShape {
  /** The order layer (pairs.ts), when the model has one: the learned one, or the pointer. */
  pairs?: PairShape;
  /**
   * The scope layer (scope.ts): words in a negation's scope leave the bag. With the pointer
   * (pointer.ts) the release runs it first, and the pointer reads the bag it leaves.
   */
  scope?: boolean;
  /**
   * The scope layer's cues leave the bag too (scope.ts SCOPE_LEFT_OUT): the flag layer's cue head
   * (flag-layer.ts) takes 2 from a cue's flag, −1 in the state and −3 after it.
   */
  cuesLeftOut?: boolean;
  /**
   * With the scope layer: the pooling score (in nats) the state's words after its first clause
   * break get over the words before it (scope.ts laterClauses; the flag layer's clause head in
   * flag-layer.ts). Where a request contrasts two things ("it was down this morning, it
   * works now"), the later clause tends to say what holds.
   */
  clauseWeight?: number;
  /** Pooling heads (the attention heads of both layers). */
  heads: number;
  /** Values per head (the attention head dim). */
  headDim: number;
  vocab: number;
}

/** The largest |token weight logit|: weights span e^±12 before normalisation. */
export const WEIGHT_RANGE = 12;
/**
 * The constant dim's value in every embedding row. Large against a token's content, it keeps
 * the RMSNorm a token's content passes through (v_s above) near linear.
 */
export const CONST_VALUE = 16;
/**
 * The scale o_proj writes the pooled bag at: the bag (≈ √D · content / CONST_VALUE) comes out 100
 * times larger than a token's own content, so the head's positions see the state, and their own
 * token only as a small, fixed offset.
 */
export function bagScale(shape: Pick<ModelShape, 'heads' | 'headDim' | 'pairs' | 'scope'>): number {
  return (100 * CONST_VALUE) / Math.sqrt(hiddenLayout(shape).hidden);
}
/** The final norm's gain on the content dims: keeps the head LayerNorm's eps negligible. */
export const FINAL_SCALE = 100;
/** torch's LayerNorm eps, which the head's hidden_norm uses. */
export const LN_EPS = 1e-5;
/** The backbone's RMSNorm eps (rms_norm_eps in the release's config). */
export const RMS_EPS = 1e-6;
/** The head caps the prior's scale at 100 (exp(min(prior_logit_scale, ln 100))). */
export const MAX_SCALE = 100;

export function priorScale(params: Pick<ModelParams, 'scaleLogit'>): number {
  return MAX_SCALE / (1 + exp(-params.scaleLogit));
}

/** The residual-stream layout (construct.ts writes weights for exactly this). */
export function hiddenLayout(
  shape: Pick<ModelShape, 'heads' | 'headDim' | 'pairs' | 'scope' | 'clauseWeight'>,
) {
  const { heads: P, headDim: hd } = shape;
  const clauseDims = shape.clauseWeight === undefined ? 0 : 1;
  const angles = 4;
  const content = angles + 2 * P;
  const scopeDims = shape.scope === true ? SCOPE_DIMS : 0;
  // The pointer's mark of a content word (pointer.ts), after the scope marks.
  const markDims = isPointer(shape.pairs) ? 1 : 0;
  const m = scopeDims + markDims + (shape.pairs?.m ?? 0);
  return {
    constant: 0,
    /** +1 on the STATE token, −1 on SCHEMA: what the flag layer reads. */
    marker: 1,
    /** Brings every embedding row to one norm for the flag layer, which then erases it. */
    pad: 2,
    flag: 3,
    angles,
    content,
    width: P * hd,
    /** The scope layer's marks (scope.ts), then the order layer's pair embedding (pairs.ts). */
    emb: content + P * hd,
    embDims: m,
    /** The pointer's content-word mark (pointer.ts), when the order layer is the pointer. */
    pointerMark: content + P * hd + scopeDims,
    /** Where the order layer's pair embedding starts (after the scope marks, when both). */
    pairEmb: content + P * hd + scopeDims + markDims,
    /**
     * CLAUSE_MARK where a break came earlier in the state (the flag layer's clause head), 0
     * elsewhere and at the breaks: what the pooling reads the clause weight from.
     */
    laterClause: content + P * hd + m,
    hidden: content + P * hd + m + clauseDims,
  };
}

export interface ModelParams {
  shape: ModelShape;
  /** [vocab, width]: each token's content (composed from features; see features.ts). */
  theta: Float64Array;
  /** [vocab, heads]: pooling weight logits (12 tanh ρ). */
  rho: Float64Array;
  /** Token id → row index in `rows`, for tokens of option spans. */
  rowOf: Map<number, number>;
  /** [rows, 1 + width]: lm_head rows of option tokens, the constant dim then the content dims. */
  rows: Float64Array;
  /** The prior's scale S = 100 · sigmoid(scaleLogit): at most the head's cap, 100. */
  scaleLogit: number;
  /** log of β, the constant dim's weight in the anchor. */
  logBias: number;
  /**
   * Per token, |x|² of the residual beyond its content at the pooling layer's input: the constant
   * (1), the angles (1 per head), the flag (1 in the state) and a marker's own 1, plus the RMSNorm
   * eps times the hidden size. At the head's positions the flag is there too (−1 after SCHEMA).
   */
  baseNorm: Float64Array;
  /** The order layer's weights and [vocab, m] pair embeddings, when the shape has one. */
  pairs?: PairParams;
  emb?: Float64Array;
  /** Per token, its scope mark (scope.ts), when the shape has the scope layer. */
  scope?: Uint8Array;
  /** Per token, its pointer mark (pointer.ts), when the order layer is the pointer. */
  pointerMarks?: Uint8Array;
}

export interface ModelQuestion {
  /** Token ids of each option's span, in prompt order. */
  options: readonly Int32Array[];
  /** Token ids of the question's instruction span. */
  instructions: Int32Array;
  /** The labelled option's index (training), or -1. */
  label: number;
}

export interface ModelExample {
  /** Token ids the bag pools (the state and the template tokens around it). */
  bag: Int32Array;
  /** The template tokens just before the bag (the order layer's lags reach back into them). */
  before: Int32Array;
  /** The prompt's last token (the head's "global" position). */
  last: number;
  questions: readonly ModelQuestion[];
}

/**
 * The scratch every example's pass takes its vectors from (arena.ts); the passes are synchronous
 * and reset it per example, so one serves the module.
 */
export const ARENA = new Arena();

/** One head position's normalised vector, stored compactly (see forwardPosition). */
export interface Position {
  token: number;
  h: Float64Array;
  rms: number;
  sigma: number;
  n0: number;
  nc: Float64Array;
  nz: number;
  h0: number;
  hc: Float64Array;
}

export interface BagForward {
  weights: Float64Array[];
  /** [bag, width]: each position's content, θ plus the order layer's p. */
  content: Float64Array;
  values: Float64Array;
  norms: Float64Array;
  bag: Float64Array;
  pairs: { input: PairInputOf; forward: PairForward } | null;
}

type PairInputOf = Parameters<typeof pairForward>[1];

/** The order layer's context: what pairs.ts reads of the model. */
export function pairContext(params: ModelParams): PairContext | null {
  if (params.pairs === undefined || params.emb === undefined) return null;
  const D = hiddenLayout(params.shape).hidden;
  const rmsEps = RMS_EPS;
  return {
    params: params.pairs,
    emb: params.emb,
    theta: params.theta,
    width: params.shape.heads * params.shape.headDim,
    baseNormNoFlag: params.baseNorm.map((k) => k - 1 - D * rmsEps),
    hidden: D,
    rmsEps,
    constValue: CONST_VALUE,
    ...(params.pointerMarks === undefined ? {} : { pointerMarks: params.pointerMarks }),
  };
}

/** |e_t|² of a token's pair embedding (0 without an order layer). */
export function embNorm(params: ModelParams, t: number): number {
  const m = params.shape.pairs?.m ?? 0;
  if (m === 0 || params.emb === undefined) return 0;
  let sq = 0;
  for (let j = 0; j < m; j++) {
    const e = params.emb[t * m + j] as number;
    sq += e * e;
  }
  return sq;
}

export function forwardBag(
  params: ModelParams,
  bag: Int32Array,
  before: Int32Array,
  ctx: PairContext | null,
  arena: Arena,
): BagForward {
  const { heads: P, headDim: hd } = params.shape;
  const width = P * hd;
  const D = hiddenLayout(params.shape).hidden;
  const rootD = Math.sqrt(D);
  const n = bag.length;
  let pairs: BagForward['pairs'] = null;
  if (ctx !== null) {
    const tokens = Int32Array.from([...before, ...bag]);
    const flag = new Float64Array(tokens.length);
    flag.fill(1, before.length);
    const input = { tokens, bagStart: before.length, flag };
    pairs = { input, forward: pairForward(ctx, input, (k) => arena.take(k)) };
  }
  const content = arena.take(n * width);
  const values = arena.take(n * width);
  const norms = arena.take(n);
  for (let i = 0; i < n; i++) {
    const t = bag[i] as number;
    let sq = 0;
    for (let j = 0; j < width; j++) {
      const c =
        (params.theta[t * width + j] as number) +
        (pairs === null ? 0 : (pairs.forward.p[i * width + j] as number));
      content[i * width + j] = c;
      sq += c * c;
    }
    const norm = Math.sqrt(sq + (params.baseNorm[t] as number) + embNorm(params, t));
    norms[i] = norm;
    for (let j = 0; j < width; j++)
      values[i * width + j] = (rootD * (content[i * width + j] as number)) / norm;
  }
  const weights: Float64Array[] = [];
  const pooled = arena.take(width);
  const later =
    params.shape.clauseWeight === undefined || params.scope === undefined
      ? null
      : laterClauses(params.scope, bag, arena.take(n));
  const clauseWeight = params.shape.clauseWeight ?? 0;
  for (let p = 0; p < P; p++) {
    const w = arena.take(n);
    let max = -Infinity;
    for (let i = 0; i < n; i++) {
      w[i] =
        WEIGHT_RANGE * tanh(params.rho[(bag[i] as number) * P + p] as number) +
        (later !== null && later[i] === 1 ? clauseWeight : 0);
      max = Math.max(max, w[i] as number);
    }
    let sum = 0;
    for (let i = 0; i < n; i++) sum += w[i] = exp((w[i] as number) - max);
    for (let i = 0; i < n; i++) {
      const wi = (w[i] as number) / sum;
      w[i] = wi;
      const base = i * width + p * hd;
      for (let j = 0; j < hd; j++)
        pooled[p * hd + j] = (pooled[p * hd + j] as number) + wi * (values[base + j] as number);
    }
    weights.push(w);
  }
  return { weights, content, values, norms, bag: pooled, pairs };
}

/**
 * What a cue the bag leaves out adds to |x|² at the head's positions (after the state): its flag
 * is −3 there, not −1 (baseNorm counts 1). Beside the bag's |h|² it moves a logit by less than
 * the construction test resolves, but it is what the release computes.
 */
export const CUE_FLAG_NORM = 8;

function cueFlagNorm(params: ModelParams, token: number): number {
  return params.scope !== undefined && ((params.scope[token] as number) & SCOPE_LEFT_OUT) !== 0
    ? CUE_FLAG_NORM
    : 0;
}

/** The final RMSNorm and the head's LayerNorm at one position whose token is `token`. */
export function forwardPosition(
  params: ModelParams,
  token: number,
  bag: Float64Array,
  arena: Arena,
): Position {
  const width = bag.length;
  const D = hiddenLayout(params.shape).hidden;
  const beta = exp(params.logBias);
  const scale = bagScale(params.shape);
  const h = arena.take(width);
  let sq = 0;
  for (let j = 0; j < width; j++) {
    const v = (params.theta[token * width + j] as number) + scale * (bag[j] as number);
    h[j] = v;
    sq += v * v;
  }
  const rms = Math.sqrt(
    (sq +
      (params.baseNorm[token] as number) +
      embNorm(params, token) +
      cueFlagNorm(params, token)) /
      D,
  );
  const h0 = (FINAL_SCALE * beta) / rms;
  const hc = arena.take(width);
  let sum = h0;
  let sumSq = h0 * h0;
  for (let j = 0; j < width; j++) {
    const v = (FINAL_SCALE * (h[j] as number)) / rms;
    hc[j] = v;
    sum += v;
    sumSq += v * v;
  }
  const mean = sum / D;
  const sigma = Math.sqrt(Math.max(sumSq / D - mean * mean, 0) + LN_EPS);
  const nc = arena.take(width);
  for (let j = 0; j < width; j++) nc[j] = ((hc[j] as number) - mean) / sigma;
  return { token, h, rms, sigma, h0, hc, n0: (h0 - mean) / sigma, nc, nz: -mean / sigma };
}
