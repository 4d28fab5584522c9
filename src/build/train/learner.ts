/**
 * Fitting the model (model.ts) to labelled examples: the option directions set once by least
 * squares, then the token features (features.ts), the option biases, the read-out's scale S and
 * bias weight β fitted together by L-BFGS on the mean cross-entropy plus an L2 penalty. The
 * objective is smooth and nearly convex (the content directions are fixed, so the model is a
 * linear classifier over tf-idf weighted features seen through a cosine), and L-BFGS needs no
 * learning rate: the same examples and λ give the same weights. The objective is a sum over
 * shards of the examples (shards.ts): on one thread or several, the same bits.
 */
import { zeroGradients } from './gradients.js';
import { minimizeAsync } from './lbfgs.js';
import {
  backTheta,
  composeTheta,
  featureIdf,
  projectTheta,
  tokenFeatures,
  zeroFeatureWeights,
  type FeatureIdf,
  type FeatureWeights,
  type TokenFeatures,
} from './features.js';
import {
  CONST_VALUE,
  hiddenLayout,
  type ModelExample,
  type ModelParams,
  type ModelShape,
} from './model.js';
import { modelLogits } from './readout.js';
import type { ClefTokenizer } from '../../clef/tokenizer.js';
import { Rng } from '../../calibrate/prng.js';
import { isPointer, zeroPairParams, type PairParams, type PairShape } from './pairs.js';
import { POINTER_CONTENT, POINTER_MARK, pointerMarks, pointerWeights } from './pointer.js';
import { log, normal } from './portable-math.js';
import { localShards, shardRanges, type ShardPool, type ShardSession } from './shards.js';
import { leavesCuesOut, scopeEmbedding, scopeMarks, scopedBag, type ScopeCues } from './scope.js';

/** ρ of the markers: weight e^(12 tanh −3) ≈ e^−12 in the pool (they carry no content). */
export const MARKER_RHO = -3;
/** L2 on the option biases, relative to λ. */
const BIAS_PENALTY = 0.1;
/** The prior's scale is fixed at its cap (S = 100 · sigmoid(12)); λ sets the evidence's scale. */
const SCALE_LOGIT = 12;

/** A trained question as the learner sees it: its options' class dims. */
export interface LearnerSetup {
  shape: ModelShape;
  /** Content dims that hold the options' directions (the rest are the norm dims). */
  classWidth: number;
  /** Norm dims (features.ts projectTheta). */
  normDims: number;
  features: TokenFeatures;
  /** Tokens whose content and weight never train (the markers). */
  frozen: Set<number>;
  /** Token id → row in the rows matrix, for every token of an option span. */
  rowOf: Map<number, number>;
  /** [rows, 1 + width]: fixed content directions (least squares), constant dim 0. */
  rows0: Float64Array;
  baseNorm: Float64Array;
  /** Per token, its scope mark (scope.ts), when the shape has the scope layer. */
  scopeMarks?: Uint8Array;
  /** Per token, its pointer mark (pointer.ts), where the order layer is the pointer. */
  pointerMarks?: Uint8Array;
}

export interface FittedModel {
  params: ModelParams;
  weights: FeatureWeights;
  idf: FeatureIdf;
  settings: FitSettings;
  iterations: number;
}

/** The fit's hyperparameters. */
export interface FitSettings {
  /** L2 penalty on the feature weights. */
  lambda: number;
  /** Scale of the norm dims: how much the state's L2 length normalises its evidence. */
  normScale: number;
  /** β: the constant dim's weight in the anchor (the option biases' lever). */
  bias: number;
  /** The order layer's L2 penalty, relative to λ (when the setup has one). */
  pairLambda?: number;
}

export const DEFAULT_NORM_DIMS = 32;
/** The memory heads' write bias at the start of a fit (pairs.ts β = σ(bias + …)). */
const MEMORY_START_BIAS = -2;

/**
 * The class dims: one per distinct option id of each trained question, in order.
 */
export function classDims(optionIds: ReadonlyArray<readonly string[]>): {
  dimOf: Map<string, number>;
  width: number;
} {
  const dimOf = new Map<string, number>();
  optionIds.forEach((ids, k) => ids.forEach((id) => dimOf.set(`${k}\u0000${id}`, dimOf.size)));
  return { dimOf, width: dimOf.size };
}

/** The content width for these class dims and norm dims: a multiple of 8 (whole rotary pairs). */
export function contentWidth(classWidth: number, normDims: number): number {
  return Math.max(8, Math.ceil((classWidth + normDims) / 8) * 8);
}

/** The residual stream's width for a model of one pooling head (model.ts hiddenLayout). */
export function hiddenOf(classWidth: number, normDims = DEFAULT_NORM_DIMS, pairDims = 0): number {
  return hiddenLayout({
    heads: 1,
    headDim: contentWidth(classWidth, normDims),
    pairs: pairDims > 0 ? { heads: [], dv: 0, m: pairDims } : undefined,
  }).hidden;
}

/** A model's layers beyond the bag: the order layer, the scope layer, both, or neither. */
export type LayerChoice = PairShape | ScopeCues | { cues: ScopeCues; pairs: PairShape } | null;

export function setupLearner(
  tokenizer: Pick<ClefTokenizer, 'decode'>,
  vocab: number,
  markers: { state: number; schema: number },
  /** Template tokens of the bag besides the markers (around the state): no content, no weight. */
  template: Iterable<number>,
  classWidth: number,
  /** Every distinct option span with the class dim it must point along. */
  spans: ReadonlyArray<{ tokens: Int32Array; dim: number }>,
  rmsEps: number,
  normDims = DEFAULT_NORM_DIMS,
  /**
   * The order layer (its shape), the scope layer (scope.ts) with the cues it reads, both (the
   * scope layer and the pointer after it), or neither.
   */
  layer: LayerChoice = null,
): LearnerSetup {
  const width = contentWidth(classWidth, normDims);
  const cues =
    typeof layer === 'string' ? layer : layer !== null && 'cues' in layer ? layer.cues : null;
  const pairs =
    layer === null || typeof layer === 'string' ? null : 'cues' in layer ? layer.pairs : layer;
  const shape: ModelShape = {
    heads: 1,
    headDim: width,
    vocab,
    ...(cues !== null ? { scope: true } : {}),
    ...(cues !== null && leavesCuesOut(cues) ? { cuesLeftOut: true } : {}),
    ...(pairs !== null ? { pairs } : {}),
  };
  const frozen = new Set([markers.state, markers.schema, ...template]);
  const features = tokenFeatures(tokenizer, vocab, frozen);
  const rowOf = new Map<number, number>();
  for (const { tokens } of spans)
    for (const t of [...tokens].sort((a, b) => a - b)) if (!rowOf.has(t)) rowOf.set(t, rowOf.size);
  const rows0 = optionDirections(spans, rowOf, width);
  const D = hiddenLayout(shape).hidden;
  // |x|² beyond the content (model.ts baseNorm): the constant, the angles, the flag, the eps.
  const baseNorm = new Float64Array(vocab).fill(
    CONST_VALUE * CONST_VALUE + shape.heads + 1 + D * rmsEps,
  );
  baseNorm[markers.state] = (baseNorm[markers.state] as number) + 1;
  baseNorm[markers.schema] = (baseNorm[markers.schema] as number) + 1;
  // The pointer's marks are in the embedding too (a content word's), and only with the scope layer:
  // a break's clearing reads the scope layer's break mark.
  let pointer: Uint8Array | undefined;
  if (pairs !== null && isPointer(pairs)) {
    if (cues === null) throw new Error('the pointer needs the scope layer before it');
    pointer = pointerMarks((ids) => tokenizer.decode(ids), vocab, frozen);
    pointer.forEach((mark, t) => {
      if (mark === POINTER_CONTENT) baseNorm[t] = (baseNorm[t] as number) + POINTER_MARK ** 2;
    });
  }
  if (cues === null)
    return { shape, classWidth, normDims, features, frozen, rowOf, rows0, baseNorm };
  // A token's marks are in its embedding: part of |x|² wherever the token is.
  const marks = scopeMarks((ids) => tokenizer.decode(ids), vocab, frozen, cues);
  marks.forEach((mark, t) => {
    for (const e of scopeEmbedding(mark)) baseNorm[t] = (baseNorm[t] as number) + e * e;
  });
  return {
    shape,
    classWidth,
    normDims,
    features,
    frozen,
    rowOf,
    rows0,
    baseNorm,
    scopeMarks: marks,
    ...(pointer === undefined ? {} : { pointerMarks: pointer }),
  };
}

/**
 * Rows such that every span's mean row is (nearly) its class dim's unit vector: the minimum-norm
 * least-squares solution R = Mᵀ (M Mᵀ + εI)⁻¹ E, with M the spans' mean-over-tokens matrix. Only
 * spans × spans is inverted (a few hundred at most), not tokens × tokens.
 */
function optionDirections(
  spans: ReadonlyArray<{ tokens: Int32Array; dim: number }>,
  rowOf: Map<number, number>,
  width: number,
): Float64Array {
  const n = spans.length;
  const stride = 1 + width;
  const rows = new Float64Array(rowOf.size * stride);
  if (n === 0) return rows;
  const weightsOf = spans.map(({ tokens }) => {
    const w = new Map<number, number>();
    for (const t of tokens) {
      const r = rowOf.get(t) as number;
      w.set(r, (w.get(r) ?? 0) + 1 / tokens.length);
    }
    return w;
  });
  const gram = new Float64Array(n * n);
  for (let a = 0; a < n; a++) {
    for (let b = a; b < n; b++) {
      let s = 0;
      for (const [r, w] of weightsOf[a] as Map<number, number>) {
        const v = (weightsOf[b] as Map<number, number>).get(r);
        if (v !== undefined) s += w * v;
      }
      gram[a * n + b] = gram[b * n + a] = s;
    }
    gram[a * n + a] = (gram[a * n + a] as number) + 1e-6;
  }
  // Solve gram · alpha = E (E: one-hot per span's dim) by Cholesky, one column per dim used.
  const chol = cholesky(gram, n);
  const dims = [...new Set(spans.map((s) => s.dim))];
  for (const dim of dims) {
    const rhs = Float64Array.from(spans, (s) => (s.dim === dim ? 1 : 0));
    const alpha = cholSolve(chol, n, rhs);
    weightsOf.forEach((w, a) => {
      for (const [r, v] of w)
        rows[r * stride + 1 + dim] =
          (rows[r * stride + 1 + dim] as number) + v * (alpha[a] as number);
    });
  }
  return rows;
}

function cholesky(a: Float64Array, n: number): Float64Array {
  const l = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      let s = a[i * n + j] as number;
      for (let k = 0; k < j; k++) s -= (l[i * n + k] as number) * (l[j * n + k] as number);
      l[i * n + j] = i === j ? Math.sqrt(Math.max(s, 1e-12)) : s / (l[j * n + j] as number);
    }
  }
  return l;
}

function cholSolve(l: Float64Array, n: number, b: Float64Array): Float64Array {
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let s = b[i] as number;
    for (let k = 0; k < i; k++) s -= (l[i * n + k] as number) * (y[k] as number);
    y[i] = s / (l[i * n + i] as number);
  }
  const x = new Float64Array(n);
  for (let i = n - 1; i >= 0; i--) {
    let s = y[i] as number;
    for (let k = i + 1; k < n; k++) s -= (l[k * n + i] as number) * (x[k] as number);
    x[i] = s / (l[i * n + i] as number);
  }
  return x;
}

export interface FitOptions {
  settings: FitSettings;
  /** Seed of the order layer's random start (the rest starts at zero). */
  seed?: number;
  maxIterations: number;
  onIteration?: (iteration: number, value: number) => void;
  /** Threads to run the objective's shards on (Node); without one, this thread runs them. */
  pool?: ShardPool;
  /** Shards of the examples instead of shardRanges' count (tests and benchmarks on small files). */
  shards?: number;
}

/** A block of the parameter vector L-BFGS sees: where it lives, and its L2 weight. */
interface Block {
  values: Float64Array;
  /** The gradient of the loss (without the penalty) for these values, after accumulate. */
  gradient: () => Float64Array;
  l2: number;
}

/** A fit's objective over the packed parameter vector, its start, and the model at a point. */
export interface FitObjective {
  start: Float64Array;
  /** Writes the gradient into `grad`; returns the mean cross-entropy plus the penalties. */
  objective: (x: Float64Array, grad: Float64Array) => Promise<number>;
  /** The fitted model at `x` (its arrays are the objective's own: call once, at the end). */
  model: (x: Float64Array, iterations: number) => FittedModel;
  /** Lets go of the shards' examples on the pool's threads. */
  close: () => void;
}

/** Fits the model to `train` (examples whose questions carry labels). */
export async function fitModel(
  setup: LearnerSetup,
  train: readonly ModelExample[],
  options: FitOptions,
): Promise<FittedModel> {
  const fit = fitObjective(setup, train, options);
  try {
    const result = await minimizeAsync(fit.objective, fit.start, {
      maxIterations: options.maxIterations,
      onIteration: options.onIteration,
    });
    return fit.model(result.x, result.iterations);
  } finally {
    fit.close();
  }
}

/** The objective fitModel minimises (exported for the benchmark that times one evaluation). */
export function fitObjective(
  setup: LearnerSetup,
  examples: readonly ModelExample[],
  options: Pick<FitOptions, 'settings' | 'seed' | 'pool' | 'shards'>,
): FitObjective {
  const { shape, features, classWidth } = setup;
  const { lambda, normScale, bias } = options.settings;
  const marks = setup.scopeMarks;
  // Under the scope layer the words in a negation's scope are not in the bag at all.
  const train =
    marks === undefined ? examples : examples.map((e) => ({ ...e, bag: scopedBag(marks, e.bag) }));
  const width = shape.heads * shape.headDim;
  const stride = 1 + width;
  const idf = featureIdf(
    features,
    train.map((e) => e.bag),
  );
  const rho = new Float64Array(shape.vocab * shape.heads);
  for (const t of setup.frozen) rho.fill(MARKER_RHO, t * shape.heads, (t + 1) * shape.heads);
  const pairShape = shape.pairs;
  const params: ModelParams = {
    shape,
    theta: new Float64Array(shape.vocab * width),
    rho,
    rowOf: setup.rowOf,
    rows: setup.rows0.slice(),
    scaleLogit: SCALE_LOGIT,
    logBias: log(bias),
    baseNorm: setup.baseNorm,
    ...(marks === undefined ? {} : { scope: marks }),
    ...(setup.pointerMarks === undefined ? {} : { pointerMarks: setup.pointerMarks }),
    ...(pairShape === undefined
      ? {}
      : {
          pairs: zeroPairParams(pairShape, classWidth),
          emb: new Float64Array(shape.vocab * pairShape.m),
        }),
  };
  projectTheta(features, idf, params.theta, width, classWidth, setup.normDims, normScale);
  const weights = zeroFeatureWeights(features, classWidth);
  const embWeights = zeroFeatureWeights(features, pairShape?.m ?? 0);
  const rowBias = new Float64Array(setup.rowOf.size);
  const grads = zeroGradients(params);
  const dWeights = zeroFeatureWeights(features, classWidth);
  const dEmbWeights = zeroFeatureWeights(features, pairShape?.m ?? 0);
  const blocks: Block[] = [
    { values: weights.u, gradient: () => dWeights.u, l2: lambda },
    { values: weights.g, gradient: () => dWeights.g, l2: lambda },
    {
      values: rowBias,
      gradient: () => rowBias.map((_, r) => grads.rows[r * stride] as number),
      l2: BIAS_PENALTY * lambda,
    },
  ];
  const pairs = params.pairs;
  if (pairs !== undefined && pairShape !== undefined) {
    const pl = lambda * (options.settings.pairLambda ?? 1);
    const g = () => grads.pairs as PairParams;
    blocks.push(
      { values: embWeights.u, gradient: () => dEmbWeights.u, l2: pl },
      { values: embWeights.g, gradient: () => dEmbWeights.g, l2: pl },
      // The pointer's U and out_proj are fixed (pointer.ts pointerWeights), not fitted.
      ...(isPointer(pairShape) ? [] : [{ values: pairs.u, gradient: () => g().u, l2: pl }]),
      { values: pairs.z, gradient: () => g().z, l2: pl },
      { values: pairs.zBias, gradient: () => g().zBias, l2: BIAS_PENALTY * pl },
      { values: pairs.b, gradient: () => g().b, l2: pl },
      { values: pairs.bBias, gradient: () => g().bBias, l2: BIAS_PENALTY * pl },
      ...(isPointer(pairShape) ? [] : [{ values: pairs.wo, gradient: () => g().wo, l2: pl }]),
    );
    if (isPointer(pairShape)) pointerWeights(pairs);
  }
  const size = blocks.reduce((n, b) => n + b.values.length, 0);
  const questions = train.reduce((n, e) => n + e.questions.filter((q) => q.label >= 0).length, 0);
  const unpack = (x: Float64Array): void => {
    let at = 0;
    for (const b of blocks) {
      b.values.set(x.subarray(at, at + b.values.length));
      at += b.values.length;
    }
    rowBias.forEach((v, r) => (params.rows[r * stride] = v));
    composeTheta(features, weights, idf, params.theta, width);
    if (params.emb !== undefined && pairShape !== undefined)
      composeTheta(features, embWeights, idf, params.emb, pairShape.m);
  };
  const ranges = shardRanges(train.length, options.shards);
  const fit = {
    shape,
    rowOf: params.rowOf,
    baseNorm: params.baseNorm,
    ...(params.pairs === undefined ? {} : { pairOutDims: params.pairs.outDims }),
    ...(params.pointerMarks === undefined ? {} : { pointerMarks: params.pointerMarks }),
    examples: train,
    ranges,
    weight: 1 / Math.max(questions, 1),
  };
  let shards: ShardSession | null = null;
  const objective = async (x: Float64Array, grad: Float64Array): Promise<number> => {
    unpack(x);
    shards ??=
      options.pool !== undefined && ranges.length > 1 ? options.pool.open(fit) : localShards(fit);
    const loss = await shards.evaluate(params, grads);
    dWeights.u.fill(0);
    dWeights.g.fill(0);
    backTheta(features, idf, grads.theta, width, dWeights);
    if (grads.emb !== undefined && pairShape !== undefined) {
      dEmbWeights.u.fill(0);
      dEmbWeights.g.fill(0);
      backTheta(features, idf, grads.emb, pairShape.m, dEmbWeights);
    }
    let penalty = 0;
    let at = 0;
    for (const b of blocks) {
      const d = b.gradient();
      for (let i = 0; i < b.values.length; i++) {
        const v = b.values[i] as number;
        penalty += b.l2 * v * v;
        grad[at + i] = (d[i] as number) + 2 * b.l2 * v;
      }
      at += b.values.length;
    }
    return loss / Math.max(questions, 1) + penalty;
  };
  const start = new Float64Array(size);
  if (pairs !== undefined && pairShape !== undefined) {
    // The order layer starts small and random (a zero start has no gradient through its
    // products); its out_proj starts at zero, so the first fit is the unigram model's.
    const rng = new Rng(options.seed ?? 1);
    let at = 0;
    for (const b of blocks) {
      const init =
        b.values === pairs.u || b.values === pairs.z || b.values === pairs.b
          ? 1 / Math.sqrt(pairShape.m)
          : b.values === embWeights.u || b.values === embWeights.g
            ? 0.1
            : 0;
      if (init > 0) for (let i = 0; i < b.values.length; i++) start[at + i] = init * normal(rng);
      // Memory heads start long (β ≈ 0.12: a word is still there ten words on), so a word's
      // pairing with an earlier one has a gradient from the first iteration.
      if (b.values === pairs.bBias)
        pairShape.heads.forEach((h, i) => {
          if (h.kind === 'memory') start[at + i] = MEMORY_START_BIAS;
        });
      at += b.values.length;
    }
  }
  return {
    start,
    objective,
    model: (x, iterations) => {
      unpack(x);
      return { params, weights, idf, settings: options.settings, iterations };
    },
    close: () => (shards as ShardSession | null)?.close(),
  };
}

/** Logits of every example (each question, in option order). */
export function predictAll(params: ModelParams, examples: readonly ModelExample[]) {
  return examples.map((e) => modelLogits(params, e));
}
