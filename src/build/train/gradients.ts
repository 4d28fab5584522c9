/**
 * The gradient of the model's cross-entropy (model.ts), written by hand: back through the option
 * read-out, the head's LayerNorm and the final RMSNorm at each head position, the pooling, the
 * layer-1 RMSNorm and, when the model has one, the order layer (pair-backward.ts).
 * train-gradient.test.ts checks it against central differences.
 */
import {
  ARENA,
  bagScale,
  FINAL_SCALE,
  forwardBag,
  forwardPosition,
  hiddenLayout,
  MAX_SCALE,
  pairContext,
  priorScale,
  WEIGHT_RANGE,
  type BagForward,
  type ModelExample,
  type ModelParams,
  type Position,
} from './model.js';
import { anchorOf, optionSlots, optionTable, scoreInto } from './readout.js';
import { pairBackward } from './pair-backward.js';
import { zeroPairParams, type PairContext, type PairParams } from './pairs.js';
import type { Arena } from './arena.js';
import { exp, log, tanh } from './portable-math.js';

export interface Gradients {
  theta: Float64Array;
  rho: Float64Array;
  rows: Float64Array;
  scaleLogit: number;
  logBias: number;
  pairs?: PairParams;
  emb?: Float64Array;
}

export function zeroGradients(params: ModelParams): Gradients {
  return {
    theta: new Float64Array(params.theta.length),
    rho: new Float64Array(params.rho.length),
    rows: new Float64Array(params.rows.length),
    scaleLogit: 0,
    logBias: 0,
    ...(params.pairs !== undefined && params.emb !== undefined
      ? {
          pairs: zeroPairParams(params.pairs.shape, params.pairs.outDims),
          emb: new Float64Array(params.emb.length),
        }
      : {}),
  };
}

/** Sets every gradient back to zero, in place (a fit reuses one set per evaluation). */
export function clearGradients(grads: Gradients): void {
  grads.theta.fill(0);
  grads.rho.fill(0);
  grads.rows.fill(0);
  grads.scaleLogit = 0;
  grads.logBias = 0;
  grads.emb?.fill(0);
  if (grads.pairs !== undefined)
    for (const a of [
      grads.pairs.u,
      grads.pairs.z,
      grads.pairs.zBias,
      grads.pairs.b,
      grads.pairs.bBias,
      grads.pairs.wo,
    ])
      a.fill(0);
}

/** The gradient's arrays in a fixed order (the same as paramArrays' for the parameters). */
export function gradientArrays(grads: Gradients): Float64Array[] {
  const out = [grads.theta, grads.rho, grads.rows];
  if (grads.emb !== undefined) out.push(grads.emb);
  const p = grads.pairs;
  if (p !== undefined) out.push(p.u, p.z, p.zBias, p.b, p.bBias, p.wo);
  return out;
}

/**
 * Adds `part` into `total`, entry by entry. A sharded objective (shards.ts) adds its shards'
 * gradients with this, in shard order, wherever they were computed.
 */
export function addGradients(total: Gradients, part: Gradients): void {
  const to = gradientArrays(total);
  const from = gradientArrays(part);
  to.forEach((a, k) => {
    const b = from[k] as Float64Array;
    for (let i = 0; i < a.length; i++) a[i] = (a[i] as number) + (b[i] as number);
  });
  total.scaleLogit += part.scaleLogit;
  total.logBias += part.logBias;
}

/**
 * Adds the gradient of the summed cross-entropy of the batch's labelled questions, each question
 * weighted by `weight` (e.g. 1 / the number of questions in the whole objective); returns the
 * summed loss and the number of labelled questions.
 */
export function accumulate(
  params: ModelParams,
  batch: readonly ModelExample[],
  grads: Gradients,
  weight: number,
  /**
   * Whether the option rows' content dims get their gradient. The fit keeps them at their
   * least-squares directions and trains only their constant dim (the option bias), so it leaves
   * them out: their gradient costs a pass over every option of every example.
   */
  rowContent = true,
): { loss: number; questions: number } {
  const width = params.shape.heads * params.shape.headDim;
  const stride = 1 + width;
  const D = hiddenLayout(params.shape).hidden;
  const scale = priorScale(params);
  const arena = ARENA;
  const table = optionTable();
  /** Per slot, Σ over the batch of dL/d lex's anchor part (ga · a) and of its cosine part (cl). */
  const anchorPart: Float64Array[] = [];
  const lexPart: number[] = [];
  const ctx = pairContext(params);
  const zeros = D - width - 1;
  let cosines = new Float64Array(0);
  let shifted = new Float64Array(0);
  let loss = 0;
  let count = 0;
  for (const example of batch) {
    if (!example.questions.some((q) => q.label >= 0)) continue;
    arena.reset();
    const f = forwardBag(params, example.bag, example.before, ctx, arena);
    const last = forwardPosition(params, example.last, f.bag, arena);
    const dPositions = new Map<Position, Float64Array>(); // dN per position: [n0, nc..., nzTotal]
    for (const q of example.questions) {
      if (q.label < 0) continue;
      const anchor = anchorOf(params, q, last, f.bag, arena);
      const slots = optionSlots(params, table, q.options);
      while (anchorPart.length < table.lex.length) {
        anchorPart.push(new Float64Array(stride));
        lexPart.push(0);
      }
      if (cosines.length < slots.length) {
        cosines = new Float64Array(slots.length);
        shifted = new Float64Array(slots.length);
      }
      scoreInto(table, slots, anchor, cosines);
      let max = -Infinity;
      for (let i = 0; i < slots.length; i++) max = Math.max(max, scale * (cosines[i] as number));
      let sum = 0;
      for (let i = 0; i < slots.length; i++)
        sum += shifted[i] = exp(scale * (cosines[i] as number) - max);
      loss += -(scale * (cosines[q.label] as number) - max - log(sum));
      count++;
      // dL/d anchor (unnormalised parts), accumulated over options:
      // cos = (l·a)/(|l||a|): d/da = l/(|l||a|) − cos a/|a|², d/dl = a/(|l||a|) − cos l/|l|².
      // The −cos a/|a|² terms share a, so their coefficients are summed and applied once;
      // likewise each slot's −cos l/|l|² terms (lexPart), after the batch. (Kept inline: as a
      // function of its own this loop ran 1.7× slower, measured.)
      const dA = arena.take(stride + 1); // [a0, ac..., az(total over zero dims)]
      const { a0, ac, az } = anchor;
      let towardA = 0;
      for (let i = 0; i < slots.length; i++) {
        const logit = scale * (cosines[i] as number);
        const g = weight * ((shifted[i] as number) / sum - (i === q.label ? 1 : 0));
        const slot = slots[i] as number;
        const norm = table.norm[slot] as number;
        if (g === 0 || norm === 0 || anchor.norm === 0) continue;
        grads.scaleLogit += g * logit * (1 - scale / MAX_SCALE);
        const c = cosines[i] as number;
        const ga = (g * scale) / (norm * anchor.norm);
        towardA += (g * scale * c) / (anchor.norm * anchor.norm);
        const lex = table.lex[slot] as Float64Array;
        const og = anchorPart[slot] as Float64Array;
        og[0] = (og[0] as number) + ga * a0;
        if (rowContent)
          for (let j = 1; j < stride; j++) og[j] = (og[j] as number) + ga * (ac[j - 1] as number);
        const end = table.end[slot] as number;
        for (let j = 0; j < end; j++) dA[j] = (dA[j] as number) + ga * (lex[j] as number);
        lexPart[slot] = (lexPart[slot] as number) + (g * scale * c) / (norm * norm);
      }
      dA[0] = (dA[0] as number) - towardA * a0;
      for (let j = 0; j < width; j++)
        dA[1 + j] = (dA[1 + j] as number) - towardA * (ac[j] as number);
      dA[stride] = -towardA * az * zeros;
      anchor.positions.forEach((p, i) => {
        const share = anchor.shares[i] as number;
        let d = dPositions.get(p);
        if (d === undefined) dPositions.set(p, (d = arena.take(stride + 1)));
        for (let j = 0; j <= stride; j++) d[j] = (d[j] as number) + share * (dA[j] as number);
      });
    }
    const dBag = arena.take(width);
    for (const [p, dN] of dPositions) backwardPosition(params, p, dN, dBag, grads, arena);
    backwardBag(params, example.bag, f, dBag, grads, ctx, arena);
  }
  // d lex → the rows of the span's tokens (lex is their mean).
  for (const [tokens, slot] of table.slotOf) {
    const part = anchorPart[slot];
    if (part === undefined) continue;
    const lex = table.lex[slot] as Float64Array;
    const cl = lexPart[slot] as number;
    for (const t of tokens) {
      const r = params.rowOf.get(t);
      if (r === undefined) continue;
      for (let j = 0; j < (rowContent ? stride : 1); j++)
        grads.rows[r * stride + j] =
          (grads.rows[r * stride + j] as number) +
          ((part[j] as number) - cl * (lex[j] as number)) / tokens.length;
    }
  }
  return { loss, questions: count };
}

/** dN at one position (const, content, zero dims summed) back through LayerNorm and RMSNorm. */
function backwardPosition(
  params: ModelParams,
  p: Position,
  dN: Float64Array,
  dBag: Float64Array,
  grads: Gradients,
  arena: Arena,
): void {
  const width = p.h.length;
  const D = hiddenLayout(params.shape).hidden;
  const zeros = D - width - 1;
  const dn0 = dN[0] as number;
  const dnz = dN[width + 1] as number; // summed over the zero dims
  // LayerNorm: dH = (dN − mean(dN) − N · mean(dN ⊙ N)) / σ over all D dims.
  let m1 = dn0 + dnz;
  let m2 = dn0 * p.n0 + dnz * p.nz;
  for (let j = 0; j < width; j++) {
    m1 += dN[1 + j] as number;
    m2 += (dN[1 + j] as number) * (p.nc[j] as number);
  }
  m1 /= D;
  m2 /= D;
  const dh0 = (dn0 - m1 - p.n0 * m2) / p.sigma;
  const dhc = arena.take(width);
  let dot = dh0 * p.h0;
  for (let j = 0; j < width; j++) {
    const v = ((dN[1 + j] as number) - m1 - (p.nc[j] as number) * m2) / p.sigma;
    dhc[j] = v;
    dot += v * (p.hc[j] as number);
  }
  void zeros;
  // H = F [β, h] / rms, rms = sqrt((|h|² + |e|² + K)/D): dh = F dHc / rms − (H·dH) h / (rms² D),
  // and the token's pair embedding e, which only the rms sees: de = −(H·dH) e / (rms² D).
  const rms = p.rms;
  grads.logBias += dh0 * p.h0; // dH0/dlogβ = H0
  const scale = bagScale(params.shape);
  for (let j = 0; j < width; j++) {
    const d =
      (FINAL_SCALE * (dhc[j] as number)) / rms - (dot * (p.h[j] as number)) / (rms * rms * D);
    grads.theta[p.token * width + j] = (grads.theta[p.token * width + j] as number) + d;
    dBag[j] = (dBag[j] as number) + scale * d;
  }
  addEmbNormGradient(params, grads, p.token, -dot / (rms * rms * D));
}

/** Adds k · e_t to e_t's gradient (a norm that e_t enters as |e_t|²; k is dL/d(|e|²) · 2 / 2). */
function addEmbNormGradient(params: ModelParams, grads: Gradients, t: number, k: number): void {
  const m = params.shape.pairs?.m ?? 0;
  if (m === 0 || params.emb === undefined || grads.emb === undefined || k === 0) return;
  for (let j = 0; j < m; j++)
    grads.emb[t * m + j] = (grads.emb[t * m + j] as number) + k * (params.emb[t * m + j] as number);
}

/** dL/dbag back to ρ and θ of the bag's tokens. */
function backwardBag(
  params: ModelParams,
  bag: Int32Array,
  f: BagForward,
  dBag: Float64Array,
  grads: Gradients,
  ctx: PairContext | null,
  arena: Arena,
): void {
  const { heads: P, headDim: hd } = params.shape;
  const width = P * hd;
  const rootD = Math.sqrt(hiddenLayout(params.shape).hidden);
  const n = bag.length;
  const dValues = arena.take(n * width);
  for (let p = 0; p < P; p++) {
    const w = f.weights[p] as Float64Array;
    const dw = arena.take(n);
    let wdw = 0;
    for (let i = 0; i < n; i++) {
      let s = 0;
      for (let j = 0; j < hd; j++) {
        const k = p * hd + j;
        s += (f.values[i * width + k] as number) * (dBag[k] as number);
        dValues[i * width + k] = (w[i] as number) * (dBag[k] as number);
      }
      dw[i] = s;
      wdw += (w[i] as number) * s;
    }
    for (let i = 0; i < n; i++) {
      const t = bag[i] as number;
      const du = (w[i] as number) * ((dw[i] as number) - wdw);
      const th = tanh(params.rho[t * P + p] as number);
      grads.rho[t * P + p] = (grads.rho[t * P + p] as number) + du * WEIGHT_RANGE * (1 - th * th);
    }
  }
  // v = √D c / norm, norm = √(|c|² + |e|² + K): dc = √D (dv / norm − c (c·dv) / norm³),
  // de = −√D e (c·dv) / norm³; c = θ + p, so dc goes to θ and to the order layer's p.
  const dp = f.pairs === null ? null : arena.take(n * width);
  for (let i = 0; i < n; i++) {
    const t = bag[i] as number;
    const norm = f.norms[i] as number;
    let cdv = 0;
    for (let j = 0; j < width; j++)
      cdv += (f.content[i * width + j] as number) * (dValues[i * width + j] as number);
    for (let j = 0; j < width; j++) {
      const c = f.content[i * width + j] as number;
      const dc =
        rootD * ((dValues[i * width + j] as number) / norm - (c * cdv) / (norm * norm * norm));
      grads.theta[t * width + j] = (grads.theta[t * width + j] as number) + dc;
      if (dp !== null) dp[i * width + j] = dc;
    }
    addEmbNormGradient(params, grads, t, (-rootD * cdv) / (norm * norm * norm));
  }
  if (dp !== null && f.pairs !== null && ctx !== null && grads.pairs && grads.emb) {
    pairBackward(
      ctx,
      f.pairs.input,
      f.pairs.forward,
      dp,
      {
        params: grads.pairs,
        emb: grads.emb,
        theta: grads.theta,
      },
      (k) => arena.take(k),
    );
  }
}
