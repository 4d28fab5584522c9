/**
 * The learner's setup for the trained questions, fixed through every fit of it (learner.ts): the
 * model's shape with the layers beyond the bag chosen, the token features, the frozen markers, and
 * the option directions, set once by least squares so that each option span's mean row points
 * along its class dim.
 */
import type { ClefTokenizer } from '../../clef/tokenizer.js';
import { tokenFeatures, type TokenFeatures } from './features.js';
import { CONST_VALUE, hiddenLayout, type ModelShape } from './model.js';
import { isPointer, type PairShape } from './pairs.js';
import { POINTER_CONTENT, POINTER_MARK, pointerMarks } from './pointer.js';
import { leavesCuesOut, scopeEmbedding, scopeMarks, type ScopeCues } from './scope.js';

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

export const DEFAULT_NORM_DIMS = 32;

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

/**
 * A model's layers beyond the bag: the order layer, the scope layer, the scope layer with the
 * pointer after it and/or a clause weight (model.ts ModelShape.clauseWeight), or neither.
 */
export type LayerChoice =
  PairShape | ScopeCues | { cues: ScopeCues; pairs?: PairShape; clauseWeight?: number } | null;

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
   * The order layer (its shape), the scope layer (scope.ts) with the cues it reads, the scope
   * layer with the pointer after it and/or a clause weight, or neither.
   */
  layer: LayerChoice = null,
): LearnerSetup {
  const width = contentWidth(classWidth, normDims);
  const cues =
    typeof layer === 'string' ? layer : layer !== null && 'cues' in layer ? layer.cues : null;
  const pairs =
    layer === null || typeof layer === 'string'
      ? null
      : 'cues' in layer
        ? (layer.pairs ?? null)
        : layer;
  const clauseWeight =
    layer !== null && typeof layer !== 'string' && 'cues' in layer ? layer.clauseWeight : undefined;
  const shape: ModelShape = {
    heads: 1,
    headDim: width,
    vocab,
    ...(cues !== null ? { scope: true } : {}),
    ...(cues !== null && leavesCuesOut(cues) ? { cuesLeftOut: true } : {}),
    ...(pairs !== null ? { pairs } : {}),
    ...(clauseWeight !== undefined ? { clauseWeight } : {}),
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
