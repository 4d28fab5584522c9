/**
 * The function `clef-web train` fits: exactly what the constructed Clef weights
 * (construct.ts) compute for a request, written small enough to differentiate by hand.
 *
 *   w^p_t  = softmax_t(U · tanh ρ^p_t)              over the state's tokens t ("the bag"), per head p
 *   v^p_t  = c^p_t / sqrt(Σ_p' |c^p'_t|² + K_t)      (the layer's input RMSNorm, up to a constant)
 *   bag    = [Σ_t w^p_t v^p_t]_p                     (P heads of `headDim` values each)
 *   N      = LayerNorm(bag, padded to the hidden size)   (the head's hidden_norm; scale-free)
 *   logit_o = S · cos(Σ_{t ∈ span(o)} r_t, N)          (the head's lexical prior)
 *
 * ρ (a token's weight in each head), c (its content in each head), the `lm_head` rows r of the
 * tokens in option spans, and S = exp(σ) ≤ 100 are the parameters. The joint part of the head is
 * closed in the construction, so these logits are the model's logits (to float rounding:
 * construct.test.ts checks the release's float64 forward against them).
 */
import { Rng } from '../rng.js';

/** Sizes of the constructed model; `hidden` follows from them (layout in construct.ts). */
export interface MatcherShape {
  /** Pooling heads (the attention heads of both layers). */
  heads: number;
  /** Values per head (the attention head dim). */
  headDim: number;
  vocab: number;
}

/** The largest |token weight logit|: weights span e^±12 before normalisation. */
export const WEIGHT_RANGE = 12;
/** ρ of tokens the bag never sees in training (and of the markers): weight e^-12·tanh(3). */
export const UNUSED_RHO = -3;
const MAX_LOG_SCALE = Math.log(100);

/** The residual-stream layout (construct.ts writes weights for exactly this). */
export function hiddenLayout(shape: MatcherShape) {
  const { heads: P, headDim: hd } = shape;
  const angles = 4;
  const content = angles + 2 * P;
  const bag = content + P * hd;
  return {
    constant: 0,
    stateMarker: 1,
    schemaMarker: 2,
    flag: 3,
    angles,
    content,
    bag,
    hidden: bag + P * hd,
  };
}

export interface MatcherParams {
  shape: MatcherShape;
  /** [vocab, heads] */
  rho: Float64Array;
  /** [vocab, heads, headDim] */
  content: Float64Array;
  /** Token id → row index in `rows`, for tokens of option spans. */
  rowOf: Map<number, number>;
  /** [rows, heads * headDim]: the lm_head rows over the bag dims (zero elsewhere). */
  rows: Float64Array;
  /** log of the prior's scale S. */
  logScale: number;
  /** Tokens whose ρ and c never train (the markers). */
  frozen: Set<number>;
  /** K_t - (the content part), per token: the constant part of |x_t|² (markers count 1 more). */
  baseNorm: Float64Array;
}

export interface MatcherQuestion {
  /** Token ids of each option's span, in prompt order. */
  options: readonly Int32Array[];
  /** The labelled option's index (training), or -1. */
  label: number;
}

export interface MatcherExample {
  /** Token ids the bag pools (the state and the template tokens around it). */
  bag: Int32Array;
  questions: readonly MatcherQuestion[];
}

export function initParams(
  shape: MatcherShape,
  optionTokens: Iterable<number>,
  bagTokens: Set<number>,
  markers: { state: number; schema: number },
  seed: number,
  rmsEps: number,
): MatcherParams {
  const { heads: P, headDim: hd, vocab } = shape;
  const rng = new Rng(seed);
  const rho = new Float64Array(vocab * P).fill(UNUSED_RHO);
  const content = new Float64Array(vocab * P * hd);
  for (let t = 0; t < vocab; t++) {
    if (!bagTokens.has(t) || t === markers.state || t === markers.schema) continue;
    for (let p = 0; p < P; p++) rho[t * P + p] = 0;
    for (let i = 0; i < P * hd; i++) content[t * P * hd + i] = 0.3 * rng.normal();
  }
  const rowOf = new Map<number, number>();
  for (const t of [...new Set(optionTokens)].sort((a, b) => a - b)) rowOf.set(t, rowOf.size);
  const rows = new Float64Array(rowOf.size * P * hd);
  for (let i = 0; i < rows.length; i++) rows[i] = 0.3 * rng.normal();
  const hidden = hiddenLayout(shape).hidden;
  // |x_t|² beyond the content: the constant 1, the angles (cos² + sin² = 1 per head), the flag
  // (1 inside the state), a marker's own 1; plus the RMSNorm's eps (mean(x²) + eps).
  const baseNorm = new Float64Array(vocab).fill(2 + P + hidden * rmsEps);
  baseNorm[markers.state] = (baseNorm[markers.state] as number) + 1;
  baseNorm[markers.schema] = (baseNorm[markers.schema] as number) + 1;
  return {
    shape,
    rho,
    content,
    rowOf,
    rows,
    logScale: Math.log(20),
    frozen: new Set([markers.state, markers.schema]),
    baseNorm,
  };
}

/** The forward's intermediate values for one example (kept for the backward pass). */
interface Forward {
  weights: Float64Array[]; // per head, per bag position
  values: Float64Array; // [bag length, heads * headDim]
  norms: Float64Array; // per bag position: sqrt(n_t + K_t)
  bag: Float64Array; // heads * headDim
  normed: Float64Array; // N, hidden dims
  normedLength: number;
  sigma: number;
}

function forwardBag(params: MatcherParams, bag: Int32Array): Forward {
  const { heads: P, headDim: hd } = params.shape;
  const width = P * hd;
  const layout = hiddenLayout(params.shape);
  const n = bag.length;
  const values = new Float64Array(n * width);
  const norms = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const t = bag[i] as number;
    let sq = 0;
    for (let j = 0; j < width; j++) sq += (params.content[t * width + j] as number) ** 2;
    const norm = Math.sqrt(sq + (params.baseNorm[t] as number));
    norms[i] = norm;
    for (let j = 0; j < width; j++)
      values[i * width + j] = (params.content[t * width + j] as number) / norm;
  }
  const weights: Float64Array[] = [];
  const pooled = new Float64Array(width);
  for (let p = 0; p < P; p++) {
    const w = new Float64Array(n);
    let max = -Infinity;
    for (let i = 0; i < n; i++) {
      w[i] = WEIGHT_RANGE * Math.tanh(params.rho[(bag[i] as number) * P + p] as number);
      max = Math.max(max, w[i] as number);
    }
    let sum = 0;
    for (let i = 0; i < n; i++) sum += w[i] = Math.exp((w[i] as number) - max);
    for (let i = 0; i < n; i++) {
      const wi = (w[i] as number) / sum;
      w[i] = wi;
      for (let j = 0; j < hd; j++) {
        pooled[p * hd + j] =
          (pooled[p * hd + j] as number) + wi * (values[i * width + p * hd + j] as number);
      }
    }
    weights.push(w);
  }
  // LayerNorm over the hidden dims, the bag's values at layout.bag and zeros elsewhere.
  const D = layout.hidden;
  let mean = 0;
  for (const v of pooled) mean += v;
  mean /= D;
  let variance = (D - width) * mean * mean;
  for (const v of pooled) variance += (v - mean) ** 2;
  const sigma = Math.sqrt(variance / D) || 1e-12;
  const normed = new Float64Array(D).fill(-mean / sigma);
  for (let j = 0; j < width; j++) normed[layout.bag + j] = ((pooled[j] as number) - mean) / sigma;
  let sq = 0;
  for (const v of normed) sq += v * v;
  return { weights, values, norms, bag: pooled, normed, normedLength: Math.sqrt(sq), sigma };
}

/** Σ of the rows of an option span's tokens (bag dims), and its length. */
function optionVector(
  params: MatcherParams,
  tokens: Int32Array,
): { lex: Float64Array; length: number } {
  const width = params.shape.heads * params.shape.headDim;
  const lex = new Float64Array(width);
  for (const t of tokens) {
    const r = params.rowOf.get(t);
    if (r === undefined) continue;
    for (let j = 0; j < width; j++)
      lex[j] = (lex[j] as number) + (params.rows[r * width + j] as number);
  }
  let sq = 0;
  for (const v of lex) sq += v * v;
  return { lex, length: Math.sqrt(sq) };
}

function questionLogits(
  params: MatcherParams,
  f: Forward,
  q: MatcherQuestion,
  cache?: OptionCache,
) {
  const layout = hiddenLayout(params.shape);
  const scale = Math.exp(Math.min(params.logScale, MAX_LOG_SCALE));
  const width = params.shape.heads * params.shape.headDim;
  return q.options.map((tokens) => {
    const o = cache?.get(tokens) ?? optionVector(params, tokens);
    if (o.length === 0) return { o, cosine: 0, logit: 0 };
    let dot = 0;
    for (let j = 0; j < width; j++)
      dot += (o.lex[j] as number) * (f.normed[layout.bag + j] as number);
    const cosine = dot / (Math.max(o.length, 1e-12) * Math.max(f.normedLength, 1e-12));
    return { o, cosine, logit: scale * cosine };
  });
}

/** Each question's logits for one example, in option order. */
export function matcherLogits(params: MatcherParams, example: MatcherExample): Float64Array[] {
  const f = forwardBag(params, example.bag);
  return example.questions.map((q) =>
    Float64Array.from(questionLogits(params, f, q), (x) => x.logit),
  );
}

type OptionCache = Map<Int32Array, { lex: Float64Array; length: number }>;

export interface Gradients {
  rho: Float64Array;
  content: Float64Array;
  rows: Float64Array;
  logScale: number;
}

export function zeroGradients(params: MatcherParams): Gradients {
  return {
    rho: new Float64Array(params.rho.length),
    content: new Float64Array(params.content.length),
    rows: new Float64Array(params.rows.length),
    logScale: 0,
  };
}

/**
 * Adds the gradient of the mean cross-entropy over the batch's labelled questions; returns the
 * summed loss and the number of questions. `drop(i)` says to leave bag position i out (dropout).
 */
export function accumulate(
  params: MatcherParams,
  batch: readonly MatcherExample[],
  grads: Gradients,
  drop?: (bag: Int32Array) => Int32Array,
): { loss: number; questions: number } {
  const { heads: P, headDim: hd } = params.shape;
  const width = P * hd;
  const layout = hiddenLayout(params.shape);
  const D = layout.hidden;
  const cache: OptionCache = new Map();
  const optionGrads = new Map<Int32Array, Float64Array>();
  const scale = Math.exp(Math.min(params.logScale, MAX_LOG_SCALE));
  let loss = 0;
  let count = 0;
  for (const q of batch.flatMap((e) => e.questions))
    for (const tokens of q.options)
      if (!cache.has(tokens)) cache.set(tokens, optionVector(params, tokens));
  const total = batch.reduce((n, e) => n + e.questions.filter((q) => q.label >= 0).length, 0);
  for (const example of batch) {
    const bag = drop === undefined ? example.bag : drop(example.bag);
    const f = forwardBag(params, bag);
    const dNormed = new Float64Array(D); // dL/da, a = normed / |normed|
    for (const q of example.questions) {
      if (q.label < 0) continue;
      const scored = questionLogits(params, f, q, cache);
      let max = -Infinity;
      for (const s of scored) max = Math.max(max, s.logit);
      let sum = 0;
      for (const s of scored) sum += Math.exp(s.logit - max);
      loss += -((scored[q.label] as (typeof scored)[number]).logit - max - Math.log(sum));
      count++;
      scored.forEach((s, i) => {
        const g = (Math.exp(s.logit - max) / sum - (i === q.label ? 1 : 0)) / total;
        if (g === 0 || s.o.length === 0) return;
        if (params.logScale < MAX_LOG_SCALE) grads.logScale += g * s.logit;
        // logit = S · (l/|l|) · a: dL/da += g S l̂; dL/dl̂ = g S a.
        const tokens = q.options[i] as Int32Array;
        let og = optionGrads.get(tokens);
        if (og === undefined) optionGrads.set(tokens, (og = new Float64Array(width)));
        for (let j = 0; j < width; j++) {
          const lHat = (s.o.lex[j] as number) / s.o.length;
          dNormed[layout.bag + j] = (dNormed[layout.bag + j] as number) + g * scale * lHat;
          og[j] =
            (og[j] as number) + (g * scale * (f.normed[layout.bag + j] as number)) / f.normedLength;
        }
      });
    }
    backwardBag(params, bag, f, dNormed, grads);
  }
  // dL/dl̂ → dL/dlex = (dl̂ - l̂ (l̂·dl̂)) / |lex| → every row of the span's tokens.
  for (const [tokens, og] of optionGrads) {
    const o = cache.get(tokens) as { lex: Float64Array; length: number };
    let proj = 0;
    for (let j = 0; j < width; j++) proj += (og[j] as number) * ((o.lex[j] as number) / o.length);
    for (const t of tokens) {
      const r = params.rowOf.get(t);
      if (r === undefined) continue;
      for (let j = 0; j < width; j++) {
        const dl = ((og[j] as number) - ((o.lex[j] as number) / o.length) * proj) / o.length;
        grads.rows[r * width + j] = (grads.rows[r * width + j] as number) + dl;
      }
    }
  }
  return { loss, questions: count };
}

/** dL/da (a = N/|N|) back to ρ and c of the bag's tokens. */
function backwardBag(
  params: MatcherParams,
  bag: Int32Array,
  f: Forward,
  dA: Float64Array,
  grads: Gradients,
): void {
  const { heads: P, headDim: hd } = params.shape;
  const width = P * hd;
  const layout = hiddenLayout(params.shape);
  const D = layout.hidden;
  if (!(f.normedLength > 1e-9)) return; // an all-zero bag: no direction to move
  // a = N / |N|: dN = (dA - a (a·dA)) / |N|
  let aDot = 0;
  for (let d = 0; d < D; d++)
    aDot += ((f.normed[d] as number) / f.normedLength) * (dA[d] as number);
  const dN = new Float64Array(D);
  for (let d = 0; d < D; d++)
    dN[d] =
      ((dA[d] as number) - ((f.normed[d] as number) / f.normedLength) * aDot) / f.normedLength;
  // N = (x - mean) / sigma: dx = (dN - mean(dN) - N mean(dN ⊙ N)) / sigma
  let m1 = 0;
  let m2 = 0;
  for (let d = 0; d < D; d++) {
    m1 += dN[d] as number;
    m2 += (dN[d] as number) * (f.normed[d] as number);
  }
  m1 /= D;
  m2 /= D;
  const dBag = new Float64Array(width);
  for (let j = 0; j < width; j++) {
    const d = layout.bag + j;
    dBag[j] = ((dN[d] as number) - m1 - (f.normed[d] as number) * m2) / f.sigma;
  }
  const n = bag.length;
  const dValues = new Float64Array(n * width);
  for (let p = 0; p < P; p++) {
    const w = f.weights[p] as Float64Array;
    const dw = new Float64Array(n);
    let wdw = 0;
    for (let i = 0; i < n; i++) {
      let s = 0;
      for (let j = 0; j < hd; j++) {
        const k = p * hd + j;
        s += (f.values[i * width + k] as number) * (dBag[k] as number);
        dValues[i * width + k] =
          (dValues[i * width + k] as number) + (w[i] as number) * (dBag[k] as number);
      }
      dw[i] = s;
      wdw += (w[i] as number) * s;
    }
    for (let i = 0; i < n; i++) {
      const t = bag[i] as number;
      if (params.frozen.has(t)) continue;
      const du = (w[i] as number) * ((dw[i] as number) - wdw);
      const th = Math.tanh(params.rho[t * P + p] as number);
      grads.rho[t * P + p] = (grads.rho[t * P + p] as number) + du * WEIGHT_RANGE * (1 - th * th);
    }
  }
  // v = c / norm, norm = sqrt(|c|² + K): dc = dv / norm - c (c·dv) / norm³
  for (let i = 0; i < n; i++) {
    const t = bag[i] as number;
    if (params.frozen.has(t)) continue;
    const norm = f.norms[i] as number;
    let cdv = 0;
    for (let j = 0; j < width; j++)
      cdv += (params.content[t * width + j] as number) * (dValues[i * width + j] as number);
    for (let j = 0; j < width; j++) {
      const c = params.content[t * width + j] as number;
      grads.content[t * width + j] =
        (grads.content[t * width + j] as number) +
        (dValues[i * width + j] as number) / norm -
        (c * cdv) / norm ** 3;
    }
  }
}

/** Adam with L2 on content and rows; moments live beside the parameters. */
export class Adam {
  private readonly m: Gradients;
  private readonly v: Gradients;
  private step = 0;

  constructor(
    private readonly params: MatcherParams,
    private readonly lr: number,
    private readonly weightDecay: number,
  ) {
    this.m = zeroGradients(params);
    this.v = zeroGradients(params);
  }

  apply(grads: Gradients): void {
    this.step++;
    const b1 = 0.9;
    const b2 = 0.999;
    const c1 = 1 - b1 ** this.step;
    const c2 = 1 - b2 ** this.step;
    const update = (
      p: Float64Array,
      g: Float64Array,
      m: Float64Array,
      v: Float64Array,
      decay: number,
    ) => {
      for (let i = 0; i < p.length; i++) {
        const gi = (g[i] as number) + decay * (p[i] as number);
        if (gi === 0 && m[i] === 0) continue;
        m[i] = b1 * (m[i] as number) + (1 - b1) * gi;
        v[i] = b2 * (v[i] as number) + (1 - b2) * gi * gi;
        p[i] =
          (p[i] as number) -
          (this.lr * ((m[i] as number) / c1)) / (Math.sqrt((v[i] as number) / c2) + 1e-8);
      }
    };
    update(this.params.rho, grads.rho, this.m.rho, this.v.rho, 0);
    update(this.params.content, grads.content, this.m.content, this.v.content, this.weightDecay);
    update(this.params.rows, grads.rows, this.m.rows, this.v.rows, this.weightDecay);
    const g = grads.logScale;
    this.m.logScale = b1 * this.m.logScale + (1 - b1) * g;
    this.v.logScale = b2 * this.v.logScale + (1 - b2) * g * g;
    this.params.logScale -=
      (this.lr * (this.m.logScale / c1)) / (Math.sqrt(this.v.logScale / c2) + 1e-8);
  }
}

export function cloneParams(p: MatcherParams): MatcherParams {
  return { ...p, rho: p.rho.slice(), content: p.content.slice(), rows: p.rows.slice() };
}
