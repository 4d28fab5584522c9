/**
 * The constructed release's flag layer, always layer 0: a Gated DeltaNet (linear attention) layer
 * that marks where the state is (construct-linear.ts has the layers after it and what every
 * linear layer shares), and each embedding row's pad it reads.
 *
 * Why the flag is a linear layer: as a full-attention layer it carried the content width as its
 * head dim (every full-attention layer shares one), so marking the state cost as much as pooling
 * it, a second (tokens × keys × head dim) product per chunk. The delta rule's memory does the same
 * work in a few channels per token.
 *
 * The flag layer's heads, each one value head whose memory is a vector (keys and queries are one
 * constant direction, l2-normalised, so the recurrent state is k̂ mᵀ):
 * - STATE (head 0) writes with β = 1 at the STATE token (marker dim +1) and never forgets;
 * - SCHEMA (head 1) the same at the SCHEMA token (marker dim −1);
 * - erase (head 2) holds a constant at every token (β = 1, decay 0);
 * - CUE (head 3, where the scope layer's cues leave the bag: scope.ts SCOPE_LEFT_OUT) holds the
 *   token's own cue mark, as erase holds its constant, and takes 2 from the flag of a cue: −1 in
 *   the state, where the pooling leaves it out with the words in its scope (its |x|, so its r,
 *   unchanged), −3 after it (model.ts CUE_FLAG_NORM).
 * - CLAUSE (the next head, where the model has a clause weight: model.ts clauseWeight) writes
 *   CLAUSE_MARK into its own dim from the state's first clause break on, but at the breaks: what
 *   the pooling's fourth query and key component reads.
 * Every head's output is RMS-normalised per head, so a set memory reads the same at every later
 * token whatever was written: flag = [STATE seen] − 2 [SCHEMA seen], that is 0 before the state,
 * +1 in it, −1 after it. The gate silu(z) multiplying that output is read from the token itself,
 * so it is constant only if every token's RMSNorm scale r is: each embedding row carries a pad dim
 * that brings its norm to one value N, and the gate sits at silu's minimum, where what float32
 * rounding leaves of r's differences does not move it. The erase head's gate reads that pad
 * (silu(z) = z where z ≥ 40) and its out_proj subtracts it, so from layer 1 on the residual is
 * what the model (model.ts) describes, the pad gone to float rounding.
 */
import type { TensorToWrite } from '../safetensors.js';
import { CONST_VALUE, hiddenLayout, RMS_EPS, type ModelShape } from './model.js';
import { KEY_DIM, MAX_LAG } from './pairs.js';
import { SCOPE_MARK } from './scope.js';
import {
  emptyLinear,
  linearShape,
  linearTensors,
  SCOPE_BREAK_DIM,
  SCOPE_CUE_DIM,
} from './construct-linear.js';
import { exp } from './portable-math.js';

/**
 * The clause head's mark in the residual (model.ts hiddenLayout laterClause): small, so that its
 * square (1e-6) beside a token's |x|² (over 256, the constant dim alone) leaves every later
 * RMSNorm as the trainer computes it, to a few parts in 1e9.
 */
export const CLAUSE_MARK = 1e-3;
/** The clause head's gate argument at a break, below GATE: silu(−200) is 0 in float32. */
const CLAUSE_SHUT = 200;
/**
 * The clause head's decay at the STATE token, exp(−softplus(gain − bias)) = e^−120, 0 in float32
 * (as the scope layer's at a break, scope.ts SCOPE_CLEAR); elsewhere exp(−softplus(−120)) = 1.
 * Overwriting the memory with a zero value instead left a float32 trace of the template's breaks
 * (β = 1 against a key normalised to 1 ± 6e-8): up to 9e-4 in a logit on a trained package.
 */
const CLAUSE_CLEAR = Object.freeze({ gain: 240, bias: -120 });
/** The smallest pad: the longest embedding row gets this much, so its erase gate is z ≥ 40. */
export const PAD_MIN = 1;
/** β's argument at a marker (σ(±80)) and the value's before silu. */
const WRITE = 80;
const VALUE = 30;
/**
 * The flag heads' gate argument: where silu is least (silu′ = 0), so the gate, which reads the
 * token's RMSNorm scale r, does not move with it to first order. Each row's pad is rounded to
 * float32, which leaves r ~6e-8 apart between tokens; a gate in silu's linear part would pass
 * that to the flag, and the pooling score carries a flag error about 70 times over.
 */
const GATE = siluArgmin();
/** The erase gate's argument at the smallest pad: silu(z) = z to double precision from 37 on. */
const ERASE_Z = 40;
/** Gain on the constant dim for keys and queries: l2-normalisation's eps leaves no trace. */
const KEY_GAIN = 1000;

const silu = (x: number): number => x / (1 + exp(-x));

/** The root of silu′(z) = σ(z) (1 + z (1 − σ(z))), by Newton's method from −1.3 (z ≈ −1.2785). */
function siluArgmin(): number {
  let z = -1.3;
  for (let i = 0; i < 50; i++) {
    const s = 1 / (1 + exp(-z));
    const g = 1 + z * (1 - s); // silu′ / σ
    const dg = 1 - s - z * s * (1 - s);
    z -= g / dg;
  }
  return z;
}
const f32 = Math.fround;

/**
 * The flag layer (layer 0). `r` is every token's RMSNorm scale at its input, √D / √(N² + D eps),
 * the same for all rows once padded (padRows).
 */
export function flagLayer(shape: ModelShape, D: number, r: number): TensorToWrite[] {
  const L = hiddenLayout(shape);
  const { heads, dv } = linearShape(shape);
  const C = heads * dv;
  const K = MAX_LAG + 1;
  const w = emptyLinear(D, heads, dv);
  const c = r * CONST_VALUE; // the constant dim after the RMSNorm
  w.qkv[0 * D + L.constant] = KEY_GAIN; // query channel 0
  w.qkv[KEY_DIM * D + L.constant] = KEY_GAIN; // key channel 0
  for (let ch = 0; ch < 2 * KEY_DIM + C; ch++) w.conv[ch * K + (K - 1)] = 1; // lag 0 only
  // What a head's channel 0 reads once its memory is set: o = m / √dk, then o / rms(o) over dv.
  const normed = (m: number): number => {
    const o = m / Math.sqrt(KEY_DIM);
    return o / Math.sqrt((o * o) / dv + RMS_EPS);
  };
  const [STATE, SCHEMA, ERASE] = [0, 1, 2];
  for (const h of [STATE, SCHEMA, ERASE]) {
    const valueRow = 2 * KEY_DIM + h * dv;
    w.qkv[valueRow * D + L.constant] = f32(VALUE / c);
  }
  // β = σ(±WRITE) at its marker, σ(−WRITE) or less elsewhere; the markers are ±1 in one dim.
  const kb = f32((2 * WRITE) / r);
  w.b[STATE * D + L.marker] = kb;
  w.b[SCHEMA * D + L.marker] = -kb;
  for (const h of [STATE, SCHEMA]) {
    w.b[h * D + L.constant] = f32((-0.5 * kb) / CONST_VALUE);
    // decay exp(−e^−60 · softplus(0)) = 1 to double precision: the memory never fades.
    w.aLog[h] = -60;
    w.z[h * dv * D + L.constant] = f32(GATE / c);
  }
  w.b[ERASE * D + L.constant] = f32(KEY_GAIN / CONST_VALUE); // β = σ(1000 r) = 1
  w.aLog[ERASE] = 20; // decay exp(−e^20 · softplus(20)) = 0: the memory is the current value
  w.dtBias[ERASE] = 20;
  const eraseGain = f32(ERASE_Z / (r * PAD_MIN)); // z = ERASE_Z · pad / PAD_MIN
  w.z[ERASE * dv * D + L.pad] = eraseGain;

  const value = (h: number): number =>
    silu((w.qkv[(2 * KEY_DIM + h * dv) * D + L.constant] as number) * c);
  const gate = (h: number): number => silu((w.z[h * dv * D + L.constant] as number) * c);
  w.out[L.flag * C + STATE * dv] = 1 / (normed(value(STATE)) * gate(STATE));
  w.out[L.flag * C + SCHEMA * dv] = -2 / (normed(value(SCHEMA)) * gate(SCHEMA));
  w.out[L.pad * C + ERASE * dv] = -1 / (normed(value(ERASE)) * eraseGain * r);
  if (shape.cuesLeftOut === true) {
    // The value is silu(VALUE) on a cue (its embedding's cue dim reads r · SCOPE_MARK), silu(0) = 0
    // elsewhere, where the RMSNorm of a zero memory is zero; β = 1 and decay 0 as erase's, so the
    // memory is the current token's; the gate at silu's minimum, as STATE's.
    const CUE = 3;
    w.qkv[(2 * KEY_DIM + CUE * dv) * D + L.emb + SCOPE_CUE_DIM] = f32(VALUE / (r * SCOPE_MARK));
    w.b[CUE * D + L.constant] = f32(KEY_GAIN / CONST_VALUE);
    w.aLog[CUE] = 20;
    w.dtBias[CUE] = 20;
    w.z[CUE * dv * D + L.constant] = f32(GATE / c);
    const cueValue = silu(
      (w.qkv[(2 * KEY_DIM + CUE * dv) * D + L.emb + SCOPE_CUE_DIM] as number) * r * SCOPE_MARK,
    );
    w.out[L.flag * C + CUE * dv] = -2 / (normed(cueValue) * gate(CUE));
  }
  if (shape.clauseWeight !== undefined) {
    // Written as STATE is, at a break (its break dim reads r · SCOPE_MARK there, 0 elsewhere),
    // and never fading but at the STATE token, whose decay empties it (CLAUSE_CLEAR), so that the
    // prompt's breaks before the state (a colon in the template) are forgotten there: set from
    // the state's first break on. Its gate, at silu's minimum as STATE's, is shut at every
    // break, so a break reads 0 and the words after it CLAUSE_MARK.
    const CLAUSE = shape.cuesLeftOut === true ? 4 : 3;
    w.qkv[(2 * KEY_DIM + CLAUSE * dv) * D + L.constant] = f32(VALUE / c);
    w.b[CLAUSE * D + L.emb + SCOPE_BREAK_DIM] = f32((2 * WRITE) / (r * SCOPE_MARK));
    w.b[CLAUSE * D + L.constant] = f32(-WRITE / c);
    w.a[CLAUSE * D + L.marker] = f32(CLAUSE_CLEAR.gain / r); // the STATE token's +1
    w.aLog[CLAUSE] = 0;
    w.dtBias[CLAUSE] = CLAUSE_CLEAR.bias;
    w.z[CLAUSE * dv * D + L.constant] = f32(GATE / c);
    w.z[CLAUSE * dv * D + L.emb + SCOPE_BREAK_DIM] = f32(-CLAUSE_SHUT / (r * SCOPE_MARK));
    w.out[L.laterClause * C + CLAUSE * dv] = CLAUSE_MARK / (normed(value(CLAUSE)) * gate(CLAUSE));
  }
  return linearTensors(0, D, heads, dv, w);
}

/**
 * Pads each embedding row (`embed`, [V, D], the pad dim still 0) to one norm N: N² is the
 * longest row's squared norm plus PAD_MIN². Returns N².
 */
export function padRows(embed: Float32Array, D: number, padDim: number): number {
  const V = embed.length / D;
  const sq = new Float64Array(V);
  let most = 0;
  for (let t = 0; t < V; t++) {
    let s = 0;
    for (let j = 0; j < D; j++) s += (embed[t * D + j] as number) ** 2;
    sq[t] = s;
    most = Math.max(most, s);
  }
  const n2 = most + PAD_MIN * PAD_MIN;
  for (let t = 0; t < V; t++) embed[t * D + padDim] = Math.sqrt(n2 - (sq[t] as number));
  return n2;
}
