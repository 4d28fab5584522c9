/**
 * The order layer's backward pass (pairs.ts has the layer and its forward pass): dL/dp back
 * through out_proj, the gated RMSNorm, the delta rule's memories and the values to the layer's
 * weights, the tokens' pair embeddings and, through the layer's RMSNorm (and the pointer's
 * values), their content θ. train-gradient.test.ts checks it against central differences.
 */
import {
  CONSTANT_CHANNEL,
  FLAG_GATE,
  isPointer,
  KEY_DIM,
  markBefore,
  POINTER_BREAK,
  POINTER_WRITE,
  sourceOf,
  type PairContext,
  type PairForward,
  type PairHead,
  type PairInput,
  type PairParams,
} from './pairs.js';

/** silu′(x), given s = σ(x). */
const dSiluOf = (x: number, s: number): number => s * (1 + x * (1 - s));

export interface PairGradients {
  params: PairParams;
  /** [vocab, m] and [vocab, width]: added into. */
  emb: Float64Array;
  theta: Float64Array;
}

/** dL/dp (per bag position, width dims) back to the parameters, ê and the tokens' θ. */
export function pairBackward(
  ctx: PairContext,
  input: PairInput,
  f: PairForward,
  dp: Float64Array,
  grads: PairGradients,
  take: (length: number) => Float64Array = (length) => new Float64Array(length),
): void {
  const { params, emb, theta, width, hidden: D } = ctx;
  const { heads, dv, m } = params.shape;
  const H = heads.length;
  const C = H * dv;
  const n = input.tokens.length;
  const bag = n - input.bagStart;
  const g = grads.params;
  // Locals, not property loads, in the loops (measured faster in V8).
  const { u: U, z: Z, b: Bw, zBias, bBias, wo } = params;
  const { u: gU, z: gZ, b: gB, zBias: gZBias, bBias: gBBias, wo: gWo } = g;
  const { r: R, eHat, pre, sPre, sZ, mem, v: V, zPre, beta, rms, core } = f;
  const gEmb = grads.emb;
  const gTheta = grads.theta;
  const scale = 1 / Math.sqrt(KEY_DIM);
  const dPre = take(n * C);
  const dEHat = take(n * m);
  const dR = take(n);
  const dMemNext = take(C); // dL/dm(i) from step i + 1
  const scratchCore = take(C);
  const dO = take(dv);
  for (let i = bag - 1; i >= 0; i--) {
    const s = input.bagStart + i;
    const rs = R[s] as number;
    const shut = FLAG_GATE * ((input.flag[s] as number) - 1);
    // p = Wo · core
    const dCore = scratchCore.fill(0);
    for (let j = 0; j < params.outDims; j++) {
      const d = dp[i * width + j] as number;
      if (d === 0) continue;
      for (let k = 0; k < C; k++) {
        gWo[j * C + k] = (gWo[j * C + k] as number) + d * (core[i * C + k] as number);
        dCore[k] = (dCore[k] as number) + d * (wo[j * C + k] as number);
      }
    }
    for (let h = 0; h < H; h++) {
      const head = heads[h] as PairHead;
      const rmsH = rms[i * H + h] as number;
      // core_k = o_k / rms · silu(z_k), o = m · scale, rms = √(mean(o²) + eps)
      let dot = 0;
      for (let c = 0; c < dv; c++) {
        const k = h * dv + c;
        const zx = zPre[i * C + k] as number;
        const o = (mem[i * C + k] as number) * scale;
        const sz = sZ[i * C + k] as number;
        const dz = (dCore[k] as number) * (o / rmsH) * dSiluOf(zx, sz);
        gZBias[k] = (gZBias[k] as number) + dz * rs;
        for (let j = 0; j < m; j++) {
          gZ[k * m + j] = (gZ[k * m + j] as number) + dz * (eHat[s * m + j] as number);
          dEHat[s * m + j] = (dEHat[s * m + j] as number) + dz * (Z[k * m + j] as number);
        }
        dR[s] = (dR[s] as number) + dz * ((zBias[k] as number) + shut);
        const gate = zx * sz;
        dO[c] = ((dCore[k] as number) * gate) / rmsH;
        dot += (dCore[k] as number) * gate * o;
      }
      // d(o/rms): dO_c − o_c (Σ dCore·gate·o) / (dv · rms³)
      const b = beta[i * H + h] as number;
      const clears = head.kind === 'pointer' && markBefore(ctx, input, s) === POINTER_BREAK;
      let dBeta = 0;
      for (let c = 0; c < dv; c++) {
        const k = h * dv + c;
        const o = (mem[i * C + k] as number) * scale;
        const dOc = (dO[c] as number) - (o * dot) / (dv * rmsH * rmsH * rmsH);
        const dm = dOc * scale + (dMemNext[k] as number);
        const previous = i > 0 ? (mem[(i - 1) * C + k] as number) : 0;
        const value = V[i * C + k] as number;
        dBeta += dm * (value - previous);
        dMemNext[k] = (1 - b) * dm; // becomes dL/dm(i − 1)
        const dv_ = b * dm;
        const from = sourceOf(head, s);
        if (from >= 0 && !clears)
          dPre[from * C + k] =
            (dPre[from * C + k] as number) +
            dv_ * dSiluOf(pre[from * C + k] as number, sPre[from * C + k] as number);
      }
      if (head.kind === 'pointer') {
        // β = σ(r · POINTER_WRITE) where it writes: r's share of its gradient.
        dR[s] = (dR[s] as number) + dBeta * b * (1 - b) * POINTER_WRITE;
      } else if (head.kind === 'memory') {
        const dx = dBeta * b * (1 - b);
        gBBias[h] = (gBBias[h] as number) + dx * rs;
        for (let j = 0; j < m; j++) {
          gB[h * m + j] = (gB[h * m + j] as number) + dx * (eHat[s * m + j] as number);
          dEHat[s * m + j] = (dEHat[s * m + j] as number) + dx * (Bw[h * m + j] as number);
        }
        dR[s] = (dR[s] as number) + dx * ((bBias[h] as number) + shut);
      }
    }
  }
  // pre = U · ê (the pointer: U · r θ) (channels ≥ 1), CONSTANT_CHANNEL · r (channel 0)
  const pointer = isPointer(params.shape);
  const out = params.outDims;
  for (let s = 0; s < n; s++) {
    const t = input.tokens[s] as number;
    const rs0 = R[s] as number;
    for (let h = 0; h < H; h++) {
      dR[s] = (dR[s] as number) + (dPre[s * C + h * dv] as number) * CONSTANT_CHANNEL;
      for (let c = 1; c < dv; c++) {
        const k = h * dv + c;
        const d = dPre[s * C + k] as number;
        if (d === 0) continue;
        if (pointer) {
          for (let j = 0; j < out; j++) {
            const x = theta[t * width + j] as number;
            gU[k * out + j] = (gU[k * out + j] as number) + d * rs0 * x;
            dR[s] = (dR[s] as number) + d * (U[k * out + j] as number) * x;
            gTheta[t * width + j] =
              (gTheta[t * width + j] as number) + d * rs0 * (U[k * out + j] as number);
          }
          continue;
        }
        for (let j = 0; j < m; j++) {
          gU[k * m + j] = (gU[k * m + j] as number) + d * (eHat[s * m + j] as number);
          dEHat[s * m + j] = (dEHat[s * m + j] as number) + d * (U[k * m + j] as number);
        }
      }
    }
    // ê = r e, r = √D / √(|x|² + D eps): dr/dx = −r³ x / D for x = θ, e.
    let dr = dR[s] as number;
    for (let j = 0; j < m; j++) {
      const d = dEHat[s * m + j] as number;
      gEmb[t * m + j] = (gEmb[t * m + j] as number) + d * (R[s] as number);
      dr += d * (emb[t * m + j] as number);
    }
    const rs = R[s] as number;
    const k = (-rs * rs * rs * dr) / D;
    if (k === 0) continue;
    for (let j = 0; j < m; j++)
      gEmb[t * m + j] = (gEmb[t * m + j] as number) + k * (emb[t * m + j] as number);
    for (let j = 0; j < width; j++)
      gTheta[t * width + j] =
        (gTheta[t * width + j] as number) + k * (theta[t * width + j] as number);
  }
}
