/**
 * Reference forward of the Qwen3.5 text model in float64, token by token. The oracle the
 * converted packages are checked against: simple and obviously right, not fast (tiny models).
 *
 * Follows `modeling_qwen3_5.py` (huggingface/transformers):
 * - RMSNorm is zero-centred: x / rms(x) * (1 + w); input, post-attention, q/k and final norms.
 * - Full attention: q_proj gives, per head, head_dim query values then head_dim gate values;
 *   q_norm/k_norm per head; RoPE (rotate_half) on the first head_dim * partial_rotary_factor
 *   dims; GQA; causal softmax(q.k / sqrt(head_dim)); output * sigmoid(gate); o_proj.
 *   Text-only input gives all three M-RoPE position rows the same value, so M-RoPE reduces to
 *   plain 1-D RoPE with position = token index.
 * - Gated DeltaNet: in_proj_qkv → causal depthwise conv (kernel K, no bias) → SiLU → split
 *   q | k | v; q, k L2-normalised per head (eps 1e-6 inside the rsqrt), q scaled 1/sqrt(dk);
 *   beta = sigmoid(in_proj_b x); g = -exp(A_log) * softplus(in_proj_a x + dt_bias); value head
 *   h reads key head floor(h / (nv / nk)); per step S ← exp(g) S; S ← S + k (β (v - Sᵀk))ᵀ;
 *   o = Sᵀq (S is dk × dv); then RMSNorm(o) * w * silu(z) per head (w not zero-centred); out_proj.
 * - MLP: down(silu(gate x) * up x). Final norm.
 */
import { layerTensorName, openRelease, TEXT_PREFIX, type Qwen35TextConfig } from '../release.js';
import {
  add,
  applyRope,
  causalConvStep,
  gatedDeltaStep,
  l2Normalize,
  matVec,
  rmsNorm,
  sigmoid,
  silu,
  softplus,
} from './math.js';

/** Running state of one full-attention layer: rotated keys and values of every past token. */
export interface FullAttentionState {
  kind: 'full_attention';
  keys: Float64Array[];
  values: Float64Array[];
}

/** Running state of one linear-attention layer. */
export interface LinearAttentionState {
  kind: 'linear_attention';
  /** The last K-1 conv inputs (in_proj_qkv outputs), oldest first; zeros before the start. */
  conv: Float64Array[];
  /** Per value head, S as dk × dv row-major: S[i * dv + j]. */
  recurrent: Float64Array[];
}

export interface BackboneState {
  /** Tokens consumed so far (the next token's position). */
  position: number;
  layers: Array<FullAttentionState | LinearAttentionState>;
}

type Weights = Map<string, Float64Array>;

export class ReferenceBackbone {
  readonly config: Qwen35TextConfig;
  private readonly w: Weights;

  private constructor(config: Qwen35TextConfig, weights: Weights) {
    this.config = config;
    this.w = weights;
  }

  /** Loads every text-model tensor (not the vision tower) of the release in `dir` as float64. */
  static async load(dir: string): Promise<ReferenceBackbone> {
    const release = openRelease(dir);
    try {
      const weights: Weights = new Map();
      for (const name of release.names()) {
        if (name.startsWith(TEXT_PREFIX) || name === 'lm_head.weight') {
          weights.set(name, release.read64(name));
        }
      }
      return new ReferenceBackbone(release.text, weights);
    } finally {
      release.close();
    }
  }

  /** A row of the untied lm_head (the head's lexical prior reads these). */
  lmHeadRow(tokenId: number): Float64Array {
    const H = this.config.hidden_size;
    const name = this.config.tie_word_embeddings
      ? `${TEXT_PREFIX}embed_tokens.weight`
      : 'lm_head.weight';
    return this.get(name).slice(tokenId * H, (tokenId + 1) * H);
  }

  emptyState(): BackboneState {
    const c = this.config;
    const convDim =
      2 * c.linear_num_key_heads * c.linear_key_head_dim +
      c.linear_num_value_heads * c.linear_value_head_dim;
    return {
      position: 0,
      layers: c.layer_types.map((type) =>
        type === 'full_attention'
          ? { kind: 'full_attention', keys: [], values: [] }
          : {
              kind: 'linear_attention',
              conv: Array.from(
                { length: c.linear_conv_kernel_dim - 1 },
                () => new Float64Array(convDim),
              ),
              recurrent: Array.from(
                { length: c.linear_num_value_heads },
                () => new Float64Array(c.linear_key_head_dim * c.linear_value_head_dim),
              ),
            },
      ),
    };
  }

  /** Final-normed hidden state of every position of `ids`, from an empty state. */
  forward(ids: readonly number[]): Float64Array[] {
    return this.forwardChunk(ids, this.emptyState()).hidden;
  }

  /** Feeds `ids` after `state` (left untouched); returns their hidden states and the new state. */
  forwardChunk(
    ids: readonly number[],
    state: BackboneState,
  ): { hidden: Float64Array[]; state: BackboneState } {
    const next = cloneState(state);
    const hidden = ids.map((id) => this.step(id, next));
    return { hidden, state: next };
  }

  /** One token through every layer; advances `state`. */
  private step(tokenId: number, state: BackboneState): Float64Array {
    const c = this.config;
    const H = c.hidden_size;
    if (!Number.isInteger(tokenId) || tokenId < 0 || tokenId >= c.vocab_size) {
      throw new Error(`token id ${tokenId} outside the vocabulary`);
    }
    let x: Float64Array = this.get(`${TEXT_PREFIX}embed_tokens.weight`).slice(
      tokenId * H,
      (tokenId + 1) * H,
    );
    c.layer_types.forEach((type, i) => {
      const name = (suffix: string): string => layerTensorName(i, suffix);
      const layerState = state.layers[i] as FullAttentionState | LinearAttentionState;
      const normed = rmsNorm(x, this.get(name('input_layernorm.weight')), c.rms_norm_eps);
      const mixed =
        type === 'full_attention'
          ? this.fullAttention(i, normed, layerState as FullAttentionState, state.position)
          : this.linearAttention(i, normed, layerState as LinearAttentionState);
      x = add(x, mixed);
      const normed2 = rmsNorm(x, this.get(name('post_attention_layernorm.weight')), c.rms_norm_eps);
      x = add(x, this.mlp(i, normed2));
    });
    state.position += 1;
    return rmsNorm(x, this.get(`${TEXT_PREFIX}norm.weight`), c.rms_norm_eps);
  }

  private fullAttention(
    layer: number,
    x: Float64Array,
    st: FullAttentionState,
    position: number,
  ): Float64Array {
    const c = this.config;
    const name = (suffix: string): string => layerTensorName(layer, `self_attn.${suffix}`);
    const hd = c.head_dim;
    const nh = c.num_attention_heads;
    const nkv = c.num_key_value_heads;
    const rotary = Math.floor(hd * c.partial_rotary_factor);
    const qg = matVec(this.get(name('q_proj.weight')), x, 2 * nh * hd);
    const kAll = matVec(this.get(name('k_proj.weight')), x, nkv * hd);
    const vAll = matVec(this.get(name('v_proj.weight')), x, nkv * hd);
    const qNorm = this.get(name('q_norm.weight'));
    const kNorm = this.get(name('k_norm.weight'));

    const keys = new Float64Array(nkv * hd);
    for (let h = 0; h < nkv; h++) {
      const k = rmsNorm(kAll.slice(h * hd, (h + 1) * hd), kNorm, c.rms_norm_eps);
      applyRope(k, position, rotary, c.rope_theta);
      keys.set(k, h * hd);
    }
    st.keys.push(keys);
    st.values.push(vAll);

    const out = new Float64Array(nh * hd);
    const group = nh / nkv;
    for (let h = 0; h < nh; h++) {
      const q = rmsNorm(qg.slice(2 * h * hd, 2 * h * hd + hd), qNorm, c.rms_norm_eps);
      applyRope(q, position, rotary, c.rope_theta);
      const kvHead = Math.floor(h / group);
      // softmax(q·k / sqrt(hd)) over every key so far, then the weighted values: the same
      // arithmetic as dot() and softmax(), written with offsets (a long context makes
      // millions of key reads, and a subarray per read dominated the time).
      const T = st.keys.length;
      const weights = new Float64Array(T);
      let max = -Infinity;
      for (let t = 0; t < T; t++) {
        const k = st.keys[t] as Float64Array;
        let sum = 0;
        for (let i = 0; i < hd; i++) sum += (q[i] as number) * (k[kvHead * hd + i] as number);
        weights[t] = sum / Math.sqrt(hd);
        max = Math.max(max, weights[t] as number);
      }
      let total = 0;
      for (let t = 0; t < T; t++) {
        weights[t] = Math.exp((weights[t] as number) - max);
        total += weights[t] as number;
      }
      for (let t = 0; t < T; t++) {
        const w = (weights[t] as number) / total;
        const v = st.values[t] as Float64Array;
        for (let d = 0; d < hd; d++)
          out[h * hd + d] = (out[h * hd + d] as number) + w * (v[kvHead * hd + d] as number);
      }
      // Output gate: the second head_dim values of this head's q_proj rows.
      for (let d = 0; d < hd; d++) {
        out[h * hd + d] = (out[h * hd + d] as number) * sigmoid(qg[2 * h * hd + hd + d] as number);
      }
    }
    return matVec(this.get(name('o_proj.weight')), out, c.hidden_size);
  }

  private linearAttention(layer: number, x: Float64Array, st: LinearAttentionState): Float64Array {
    const c = this.config;
    const name = (suffix: string): string => layerTensorName(layer, `linear_attn.${suffix}`);
    const nk = c.linear_num_key_heads;
    const nv = c.linear_num_value_heads;
    const dk = c.linear_key_head_dim;
    const dv = c.linear_value_head_dim;
    const keyDim = nk * dk;
    const convDim = 2 * keyDim + nv * dv;

    const mixed = matVec(this.get(name('in_proj_qkv.weight')), x, convDim);
    const z = matVec(this.get(name('in_proj_z.weight')), x, nv * dv);
    const b = matVec(this.get(name('in_proj_b.weight')), x, nv);
    const a = matVec(this.get(name('in_proj_a.weight')), x, nv);

    const window = [...st.conv, mixed];
    const conv = causalConvStep(window, this.get(name('conv1d.weight'))).map(silu);
    st.conv = window.slice(1);

    const aLog = this.get(name('A_log'));
    const dtBias = this.get(name('dt_bias'));
    const normW = this.get(name('norm.weight'));
    const core = new Float64Array(nv * dv);
    for (let h = 0; h < nv; h++) {
      const kh = Math.floor(h / (nv / nk));
      const q = l2Normalize(conv.slice(kh * dk, (kh + 1) * dk)).map((v) => v / Math.sqrt(dk));
      const k = l2Normalize(conv.slice(keyDim + kh * dk, keyDim + (kh + 1) * dk));
      const v = conv.slice(2 * keyDim + h * dv, 2 * keyDim + (h + 1) * dv);
      const beta = sigmoid(b[h] as number);
      const g = -Math.exp(aLog[h] as number) * softplus((a[h] as number) + (dtBias[h] as number));
      const o = gatedDeltaStep(st.recurrent[h] as Float64Array, q, k, v, g, beta);
      // Gated RMSNorm: plain weight (initialised to ones), gate silu(z).
      let ms = 0;
      for (const value of o) ms += value * value;
      const scale = 1 / Math.sqrt(ms / dv + c.rms_norm_eps);
      for (let d = 0; d < dv; d++) {
        core[h * dv + d] =
          (o[d] as number) * scale * (normW[d] as number) * silu(z[h * dv + d] as number);
      }
    }
    return matVec(this.get(name('out_proj.weight')), core, c.hidden_size);
  }

  private mlp(layer: number, x: Float64Array): Float64Array {
    const c = this.config;
    const name = (suffix: string): string => layerTensorName(layer, `mlp.${suffix}`);
    const gate = matVec(this.get(name('gate_proj.weight')), x, c.intermediate_size);
    const up = matVec(this.get(name('up_proj.weight')), x, c.intermediate_size);
    const act = gate.map((g, i) => silu(g) * (up[i] as number));
    return matVec(this.get(name('down_proj.weight')), act, c.hidden_size);
  }

  private get(name: string): Float64Array {
    const w = this.w.get(name);
    if (w === undefined) throw new Error(`release has no tensor ${name}`);
    return w;
  }
}

function cloneState(state: BackboneState): BackboneState {
  return {
    position: state.position,
    layers: state.layers.map((layer) =>
      layer.kind === 'full_attention'
        ? {
            kind: layer.kind,
            keys: layer.keys.map((k) => k.slice()),
            values: layer.values.map((v) => v.slice()),
          }
        : {
            kind: layer.kind,
            conv: layer.conv.map((r) => r.slice()),
            recurrent: layer.recurrent.map((s) => s.slice()),
          },
    ),
  };
}
