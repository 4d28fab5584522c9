/**
 * The model's order layer: what a Gated DeltaNet layer (Qwen3.5's linear attention) computes
 * when construct.ts sets it up as a bank of small memories over the state's tokens, written out
 * so the trainer can differentiate it by hand. It gives each state token a feature that depends
 * on the tokens before it: "down" after "vpn" is not "down" after "email", "not" before "prod" is
 * not "prod". The bag then pools these beside the tokens' own features.
 *
 * Per head h (dv channels, channel 0 a constant that steadies the RMSNorm) and state position t,
 * with ê_t = r_t e_t the token's pair embedding after the layer's RMSNorm (r_t its scale):
 *
 *   v_h(t)  = silu(U_h · ê_t)            memory heads: the token itself
 *           = silu(U_h · r_{t−1} θ_{t−1})   pointer heads (pointer.ts): the token before's class
 *                                        content, zero where that token is a break
 *   β_h(t)  = σ(B_h · ê_t + b_h ĉ_t + F f̂_t)   memory heads: how much token t is worth keeping
 *           = σ(100 r_t) or 0            pointer heads: where the token before is a content word
 *                                        or a break, else nothing is written
 *   m_h(t)  = (1 − β_h(t)) m_h(t − 1) + β_h(t) v_h(t)   (the delta rule with a constant key)
 *   z_h(t)  = Z_h · ê_t + ζ_h ĉ_t + F f̂_t   (the output gate, read from the token itself)
 *   p(t)    = W_o · [ m_h(t) / rms(m_h(t)) ⊙ silu(z_h(t)) ]_h
 *
 * F = FLAG_GATE on the flag (+1 in the state, 0 before it, −1 after) shuts gates and memory
 * writes outside the state (σ and silu of about −F r ≈ −100), so p is zero there to float precision and
 * the trainer need only run the state and the three template tokens before it. A memory head
 * remembers the last tokens its β found worth keeping, however far back: "the VPN is down but
 * email works" and "email is down but the VPN works" differ in what each status word sees.
 */
import { exp } from './portable-math.js';

/**
 * A head of the order layer: a memory of the tokens its writes keep, or a pointer (pointer.ts) to
 * the last content word before the token.
 */
export type PairHead = { kind: 'memory' } | { kind: 'pointer' };

export interface PairShape {
  heads: readonly PairHead[];
  /** Channels per head (the layer's value head dim), channel 0 the constant one. */
  dv: number;
  /** Pair embedding dims in the residual stream. */
  m: number;
}

/**
 * The default bank: four memories. A memory whose writes keep every token is the word before, so
 * the bank needs no fixed-lag heads. With two of them (the previous word and the one before) in
 * place of two memories, the fit learned word-and-filler pairs that did not carry over: the planted
 * order task fell to 96.5% on fresh draws at seed 994832, where four memories get ≥ 99% on every
 * one of 53 seeds tried (docs/benchmarks.md, "Four memories in the order layer").
 */
export const DEFAULT_PAIR_SHAPE: PairShape = Object.freeze({
  heads: Object.freeze([
    { kind: 'memory' },
    { kind: 'memory' },
    { kind: 'memory' },
    { kind: 'memory' },
  ]) as readonly PairHead[],
  dv: 8,
  m: 16,
});

/** The most the causal conv looks back (its kernel is 4 wide: taps at lags 0-3). */
export const MAX_LAG = 3;
/** Gain on the flag in the gates and memory writes: outside the state they see about −F·r. */
export const FLAG_GATE = 60;
/** Channel 0 of every head: silu(CONSTANT_CHANNEL · ĉ / CONST_VALUE). */
export const CONSTANT_CHANNEL = 4;
/** The key head dim the construction writes (keys and queries are a constant direction). */
export const KEY_DIM = 4;

export interface PairParams {
  shape: PairShape;
  /** [heads · dv, m] (the pointer: [heads · dv, outDims]): value projections (channel 0 rows unused). */
  u: Float64Array;
  /** [heads · dv, m]: gate projections. */
  z: Float64Array;
  /** [heads · dv]: the gates' bias inside the state (ζ). */
  zBias: Float64Array;
  /** [heads, m]: memory heads' write strength from the token (pointer heads: unused). */
  b: Float64Array;
  /** [heads]: memory heads' write bias inside the state. */
  bBias: Float64Array;
  /** [outDims, heads · dv]: out_proj into the first outDims content dims (the class dims). */
  wo: Float64Array;
  outDims: number;
}

/**
 * Whether the layer is the pointer (pointer.ts): its heads' values read the token's class content,
 * r · θ[0, outDims), not a pair embedding, so a memory carries the evidence of the thing it holds.
 */
export function isPointer(shape: PairShape | undefined): boolean {
  return shape?.heads.some((h) => h.kind === 'pointer') === true;
}

/** The columns of U: the pair embedding's dims, or the pointer's class content's. */
function valueInputs(shape: PairShape, outDims: number): number {
  return isPointer(shape) ? outDims : shape.m;
}

/** The position a head's value comes from at position s. */
export function sourceOf(head: PairHead, s: number): number {
  return head.kind === 'pointer' ? s - 1 : s;
}

export function zeroPairParams(shape: PairShape, width: number): PairParams {
  const channels = shape.heads.length * shape.dv;
  return {
    shape,
    outDims: width,
    u: new Float64Array(channels * valueInputs(shape, width)),
    z: new Float64Array(channels * shape.m),
    zBias: new Float64Array(channels),
    b: new Float64Array(shape.heads.length * shape.m),
    bBias: new Float64Array(shape.heads.length),
    wo: new Float64Array(width * channels),
  };
}

export function clonePairParams(p: PairParams): PairParams {
  return {
    shape: p.shape,
    outDims: p.outDims,
    u: p.u.slice(),
    z: p.z.slice(),
    zBias: p.zBias.slice(),
    b: p.b.slice(),
    bBias: p.bBias.slice(),
    wo: p.wo.slice(),
  };
}

export const sigmoid = (x: number): number => 1 / (1 + exp(-x));

/**
 * The layer's input at each position, after its RMSNorm: r = √D / √(|x|² + D·eps), so
 * ê = r·e, ĉ = r·CONST, f̂ = r·flag. |x|² is the token's whole residual at that point.
 */
export interface PairInput {
  /** Token ids: the template tokens before the bag (MAX_LAG of them), then the bag. */
  tokens: Int32Array;
  /** Where the bag starts in `tokens`. */
  bagStart: number;
  /** Flag of each position: 0 before the state (the template), 1 in the bag. */
  flag: Float64Array;
}

export interface PairForward {
  r: Float64Array;
  /** [positions, m] ê. */
  eHat: Float64Array;
  /** [positions, channels] pre-activation of the values (u), before the conv's lag. */
  pre: Float64Array;
  /** σ of `pre` and of `zPre`, kept for the backward pass (portable exp is the layer's cost). */
  sPre: Float64Array;
  sZ: Float64Array;
  /** [bag, channels] v, m, gate pre-activation z; [bag, heads] β and the m rms. */
  v: Float64Array;
  mem: Float64Array;
  zPre: Float64Array;
  beta: Float64Array;
  rms: Float64Array;
  /** [bag, channels] the gated, normalised output before out_proj. */
  core: Float64Array;
  /** [bag, width] p. */
  p: Float64Array;
}

export interface PairContext {
  params: PairParams;
  /** [vocab, m] the tokens' pair embeddings. */
  emb: Float64Array;
  /** [vocab, width] the tokens' content (for the RMSNorm's |x|²). */
  theta: Float64Array;
  width: number;
  /** |x|² of a token beyond its content and pair embedding (constant, marker, angles; no flag). */
  baseNormNoFlag: Float64Array;
  hidden: number;
  rmsEps: number;
  constValue: number;
  /** [vocab] pointer.ts marks, for the pointer's heads. */
  pointerMarks?: Uint8Array;
}

/** A token's pointer mark (pointer.ts): nothing to point at, a content word, or a break. */
export const POINTER_NONE = 0;
export const POINTER_CONTENT = 1;
export const POINTER_BREAK = 2;
/** A pointer head's β = σ(r · POINTER_WRITE) ≥ σ(30) where it writes: a write replaces the memory. */
export const POINTER_WRITE = 100;

/** The pointer mark of the token before position s (what a pointer head writes there). */
export function markBefore(ctx: PairContext, input: PairInput, s: number): number {
  return s > 0 ? ((ctx.pointerMarks as Uint8Array)[input.tokens[s - 1] as number] ?? 0) : 0;
}

export function pairForward(
  ctx: PairContext,
  input: PairInput,
  take: (length: number) => Float64Array = (length) => new Float64Array(length),
): PairForward {
  const { params, emb, theta, width, hidden: D } = ctx;
  const { heads, dv, m } = params.shape;
  // Locals, not property loads, in the loops (measured faster in V8).
  const { u: U, z: Z, b: Bw, zBias, bBias, wo } = params;
  const H = heads.length;
  const C = H * dv;
  const pointer = isPointer(params.shape);
  const out = params.outDims;
  const n = input.tokens.length;
  const bag = n - input.bagStart;
  const r = take(n);
  const eHat = take(n * m);
  const pre = take(n * C);
  const sPre = take(n * C);
  for (let s = 0; s < n; s++) {
    const t = input.tokens[s] as number;
    const f = input.flag[s] as number;
    let sq = (ctx.baseNormNoFlag[t] as number) + f * f;
    // Products, not `** 2`: V8's pow may round otherwise, and differently once optimised, and a
    // trained package must be the same bytes in Node and in the page.
    for (let j = 0; j < width; j++) {
      const v = theta[t * width + j] as number;
      sq += v * v;
    }
    for (let j = 0; j < m; j++) {
      const v = emb[t * m + j] as number;
      sq += v * v;
    }
    const rs = Math.sqrt(D) / Math.sqrt(sq + D * ctx.rmsEps);
    r[s] = rs;
    for (let j = 0; j < m; j++) eHat[s * m + j] = rs * (emb[t * m + j] as number);
    for (let h = 0; h < H; h++) {
      pre[s * C + h * dv] = (CONSTANT_CHANNEL / ctx.constValue) * rs * ctx.constValue;
      for (let c = 1; c < dv; c++) {
        let u = 0;
        if (pointer) {
          const row = (h * dv + c) * out;
          for (let j = 0; j < out; j++)
            u += (U[row + j] as number) * rs * (theta[t * width + j] as number);
        } else {
          const row = (h * dv + c) * m;
          for (let j = 0; j < m; j++) u += (U[row + j] as number) * (eHat[s * m + j] as number);
        }
        pre[s * C + h * dv + c] = u;
      }
    }
    for (let k = 0; k < C; k++) sPre[s * C + k] = sigmoid(pre[s * C + k] as number);
  }
  const v = take(bag * C);
  const mem = take(bag * C);
  const zPre = take(bag * C);
  const sZ = take(bag * C);
  const beta = take(bag * H);
  const rms = take(bag * H);
  const core = take(bag * C);
  const p = take(bag * width);
  for (let i = 0; i < bag; i++) {
    const s = input.bagStart + i;
    const rs = r[s] as number;
    const shut = FLAG_GATE * ((input.flag[s] as number) - 1);
    // A pointer head writes the token before where it is a content word or a break (which
    // clears), with β = σ(r · POINTER_WRITE); the same for each of its heads.
    const mark = pointer ? markBefore(ctx, input, s) : POINTER_NONE;
    const pointerBeta = mark === POINTER_NONE ? 0 : sigmoid(rs * POINTER_WRITE);
    for (let h = 0; h < H; h++) {
      const head = heads[h] as PairHead;
      const from = sourceOf(head, s);
      let b = 1;
      const clears = head.kind === 'pointer' && mark === POINTER_BREAK;
      if (head.kind === 'pointer') b = pointerBeta;
      else if (head.kind === 'memory') {
        let x = rs * ((bBias[h] as number) + shut);
        for (let j = 0; j < m; j++) x += (Bw[h * m + j] as number) * (eHat[s * m + j] as number);
        b = sigmoid(x);
      }
      beta[i * H + h] = b;
      let ms = 0;
      for (let c = 0; c < dv; c++) {
        const k = h * dv + c;
        const value =
          from >= 0 && !clears ? (pre[from * C + k] as number) * (sPre[from * C + k] as number) : 0;
        v[i * C + k] = value;
        const previous = i > 0 ? (mem[(i - 1) * C + k] as number) : 0;
        const mk = (1 - b) * previous + b * value;
        mem[i * C + k] = mk;
        ms += mk * mk;
      }
      // o = m / √KEY_DIM; the gated RMSNorm divides by √(mean(o²) + eps).
      const scale = 1 / Math.sqrt(KEY_DIM);
      const rmsH = Math.sqrt((ms * scale * scale) / dv + ctx.rmsEps);
      rms[i * H + h] = rmsH;
      for (let c = 0; c < dv; c++) {
        const k = h * dv + c;
        let zx = rs * ((zBias[k] as number) + shut);
        for (let j = 0; j < m; j++) zx += (Z[k * m + j] as number) * (eHat[s * m + j] as number);
        const sz = sigmoid(zx);
        zPre[i * C + k] = zx;
        sZ[i * C + k] = sz;
        core[i * C + k] = (((mem[i * C + k] as number) * scale) / rmsH) * zx * sz;
      }
    }
    for (let j = 0; j < params.outDims; j++) {
      let sum = 0;
      for (let k = 0; k < C; k++) sum += (wo[j * C + k] as number) * (core[i * C + k] as number);
      p[i * width + j] = sum;
    }
  }
  return { r, eHat, pre, sPre, sZ, v, mem, zPre, beta, rms, core, p };
}
