/**
 * The float64 steps of the reference forward (qwen35.ts) and of the reference head (head.ts):
 * matrix-vector products, the norms, RoPE, the causal conv and the gated delta rule, softmax.
 */

/** y = W x with W [out, in] row-major. */
export function matVec(w: Float64Array, x: Float64Array, out: number): Float64Array {
  const n = x.length;
  const y = new Float64Array(out);
  for (let o = 0; o < out; o++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += (w[o * n + i] as number) * (x[i] as number);
    y[o] = sum;
  }
  return y;
}

export const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));
export const silu = (x: number): number => x * sigmoid(x);
/** torch.nn.functional.softplus (beta 1, threshold 20: linear above 20). */
export const softplus = (x: number): number => (x > 20 ? x : Math.log1p(Math.exp(x)));

/** Zero-centred RMSNorm: x / sqrt(mean(x²) + eps) * (1 + w). */
export function rmsNorm(x: Float64Array, w: Float64Array, eps: number): Float64Array {
  let ms = 0;
  for (const v of x) ms += v * v;
  const scale = 1 / Math.sqrt(ms / x.length + eps);
  return x.map((v, i) => v * scale * (1 + (w[i] as number)));
}

/** x / sqrt(Σx² + eps) (transformers' l2norm, matching FLA). */
export function l2Normalize(x: Float64Array, eps = 1e-6): Float64Array {
  let ss = 0;
  for (const v of x) ss += v * v;
  const scale = 1 / Math.sqrt(ss + eps);
  return x.map((v) => v * scale);
}

/** RoPE in place on x[0, rotaryDim) (rotate_half layout: pairs (i, i + rotaryDim/2)). */
export function applyRope(
  x: Float64Array,
  position: number,
  rotaryDim: number,
  theta: number,
): void {
  const half = rotaryDim / 2;
  for (let i = 0; i < half; i++) {
    const angle = position * theta ** (-(2 * i) / rotaryDim);
    const c = Math.cos(angle);
    const s = Math.sin(angle);
    const a = x[i] as number;
    const b = x[i + half] as number;
    x[i] = a * c - b * s;
    x[i + half] = b * c + a * s;
  }
}

/**
 * Causal depthwise conv1d at the newest position (before the activation): `window` holds the
 * last K inputs, oldest first (zeros before the sequence start); weight is [C, 1, K] as torch
 * stores it, so out[c] = Σ_j w[c, j] · window[j][c] and w[c, K-1] multiplies the current token.
 */
export function causalConvStep(
  window: readonly Float64Array[],
  weight: Float64Array,
): Float64Array {
  const K = window.length;
  const channels = (window[0] as Float64Array).length;
  const out = new Float64Array(channels);
  for (let ch = 0; ch < channels; ch++) {
    let sum = 0;
    for (let j = 0; j < K; j++)
      sum += (weight[ch * K + j] as number) * ((window[j] as Float64Array)[ch] as number);
    out[ch] = sum;
  }
  return out;
}

/**
 * One gated delta-rule step for one value head, updating `state` (dk × dv) in place:
 * S ← exp(g) S; S ← S + k (β (v − Sᵀk))ᵀ; returns o = Sᵀq. q is expected L2-normalised and
 * scaled by 1/sqrt(dk), k L2-normalised, as the layer prepares them.
 */
export function gatedDeltaStep(
  state: Float64Array,
  q: Float64Array,
  k: Float64Array,
  v: Float64Array,
  g: number,
  beta: number,
): Float64Array {
  const dk = k.length;
  const dv = v.length;
  const decay = Math.exp(g);
  for (let i = 0; i < state.length; i++) state[i] = (state[i] as number) * decay;
  for (let j = 0; j < dv; j++) {
    let mem = 0;
    for (let i = 0; i < dk; i++) mem += (state[i * dv + j] as number) * (k[i] as number);
    const delta = beta * ((v[j] as number) - mem);
    for (let i = 0; i < dk; i++)
      state[i * dv + j] = (state[i * dv + j] as number) + (k[i] as number) * delta;
  }
  const o = new Float64Array(dv);
  for (let j = 0; j < dv; j++) {
    let sum = 0;
    for (let i = 0; i < dk; i++) sum += (state[i * dv + j] as number) * (q[i] as number);
    o[j] = sum;
  }
  return o;
}

export function add(a: Float64Array, b: Float64Array): Float64Array {
  return a.map((v, i) => v + (b[i] as number));
}

export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] as number) * (b[i] as number);
  return sum;
}

/** Numerically stable softmax in float64. */
export function softmax(x: readonly number[] | Float64Array): Float64Array {
  let max = -Infinity;
  for (const v of x) max = Math.max(max, v);
  const e = Float64Array.from(x, (v) => Math.exp(v - max));
  const sum = e.reduce((s, v) => s + v, 0);
  return e.map((v) => v / sum);
}
