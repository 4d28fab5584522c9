/**
 * com.microsoft.LinearAttention with update_rule = gated_delta: the Gated DeltaNet recurrence of
 * docs/onnx-ops.md, one token after another (a recurrence: each step reads the state the
 * previous one wrote), every value head at once.
 *
 * Inputs: query and key [B, T, qHeads·dk], value [B, T, kvHeads·dv], past state
 * [B, kvHeads, dk, dv], decay g (log space) and beta, each [B, T, kvHeads]. Value head h reads
 * key head ⌊h / (kvHeads / qHeads)⌋. Per step and head: S ← exp(g)·S; δ = β·(v − Sᵀk);
 * S ← S + k·δᵀ; out = scale·Sᵀq. Outputs: out [B, T, kvHeads·dv] and the new state.
 */
import { input, type OpImpl } from '../op-types.js';
import { Tensor } from '../tensor.js';

const linearAttention: OpImpl = {
  types(inputs, node) {
    const rule = node.attrs.string('update_rule', 'linear');
    if (rule !== 'gated_delta') return `LinearAttention with update_rule = ${rule}`;
    for (let i = 0; i < 6; i++) {
      if (inputs[i] !== 'float32') {
        return `LinearAttention needs six float32 inputs (input ${i} is ${inputs[i] ?? 'absent'})`;
      }
    }
    return ['float32', 'float32'];
  },
  run(inputs, node) {
    const qHeads = node.attrs.int('q_num_heads');
    const kvHeads = node.attrs.int('kv_num_heads');
    const [q, k, v, past, decay, beta] = [0, 1, 2, 3, 4, 5].map((i) => input(inputs, i)) as [
      Tensor,
      Tensor,
      Tensor,
      Tensor,
      Tensor,
      Tensor,
    ];
    const [B, H, dk, dv] = past.dims as [number, number, number, number];
    const T = q.dims[1]!;
    if (H !== kvHeads || q.dims.at(-1) !== qHeads * dk || v.dims.at(-1) !== kvHeads * dv) {
      throw new Error('LinearAttention: inputs do not match the heads and the state');
    }
    if (kvHeads % qHeads !== 0)
      throw new Error('LinearAttention: kv heads must be a multiple of q heads');
    const scale = node.attrs.float('scale', 1 / Math.sqrt(dk));
    const group = kvHeads / qHeads;
    const qd = q.data as Float32Array;
    const kd = k.data as Float32Array;
    const vd = v.data as Float32Array;
    const gd = decay.data as Float32Array;
    const bd = beta.data as Float32Array;
    const state = Float32Array.from(past.data as Float32Array);
    const out = new Float32Array(B * T * kvHeads * dv);
    const delta = new Float64Array(dv);
    const acc = new Float64Array(dv);
    for (let b = 0; b < B; b++) {
      for (let h = 0; h < kvHeads; h++) {
        const kh = Math.floor(h / group);
        const s0 = (b * kvHeads + h) * dk * dv;
        for (let t = 0; t < T; t++) {
          const row = b * T + t;
          const qo = row * qHeads * dk + kh * dk;
          const vo = row * kvHeads * dv + h * dv;
          const decayT = Math.exp(gd[row * kvHeads + h]!);
          const betaT = bd[row * kvHeads + h]!;
          // Decay, and Sᵀk on the decayed state, in one pass over S.
          delta.fill(0);
          for (let i = 0; i < dk; i++) {
            const ki = kd[qo + i]!;
            const r = s0 + i * dv;
            for (let j = 0; j < dv; j++) {
              const s = state[r + j]! * decayT;
              state[r + j] = s;
              delta[j] = delta[j]! + s * ki;
            }
          }
          for (let j = 0; j < dv; j++) delta[j] = betaT * (vd[vo + j]! - delta[j]!);
          // The write, and Sᵀq on the new state, in a second pass.
          acc.fill(0);
          for (let i = 0; i < dk; i++) {
            const ki = kd[qo + i]!;
            const qi = qd[qo + i]!;
            const r = s0 + i * dv;
            for (let j = 0; j < dv; j++) {
              const s = state[r + j]! + ki * delta[j]!;
              state[r + j] = s;
              acc[j] = acc[j]! + s * qi;
            }
          }
          for (let j = 0; j < dv; j++) out[vo + j] = scale * acc[j]!;
        }
      }
    }
    return [
      new Tensor('float32', [B, T, kvHeads * dv], out),
      new Tensor('float32', past.dims, state),
    ];
  },
};

export const LINEAR_ATTENTION_OPS: Record<string, OpImpl> = {
  LinearAttention: linearAttention,
};
