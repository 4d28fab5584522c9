// The float64 reference (src/build/reference): backbone state handling and causality, the Gated
// DeltaNet recurrence against a closed form, hand-computed pieces, the head on hand-checkable
// inputs, and the tiny fixture's answer spread.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ValidRequest } from '../../../../src/protocol/types.js';
import { writeTinyFixture } from '../../../../tools/fixture/cli.js';
import { Rng } from '../../../../tools/fixture/weights.js';
import { referenceDecide } from '../../../../src/build/reference/decide.js';
import {
  erf,
  gelu,
  loadHeadWeights,
  multiheadAttention,
  referenceHeadLogits,
  type HeadWeights,
} from '../../../../src/build/reference/head.js';
import { ReferenceBackbone } from '../../../../src/build/reference/qwen35.js';
import { applyRope, causalConvStep, gatedDeltaStep } from '../../../../src/build/reference/math.js';

let work: string;
let fp32Dir: string;
let bf16Dir: string;
let backbone: ReferenceBackbone;
beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'clef-reference-test-'));
  fp32Dir = join(work, 'fp32');
  bf16Dir = join(work, 'bf16');
  writeTinyFixture(fp32Dir, { dtype: 'fp32' });
  writeTinyFixture(bf16Dir); // the default seed, as `npm run fixture:tiny` writes it
  backbone = await ReferenceBackbone.load(fp32Dir);
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

function maxAbsDiff(a: readonly Float64Array[], b: readonly Float64Array[]): number {
  expect(a.length).toBe(b.length);
  let max = 0;
  a.forEach((row, t) =>
    row.forEach((v, i) => (max = Math.max(max, Math.abs(v - (b[t] as Float64Array)[i]!)))),
  );
  return max;
}

function randomIds(rng: Rng, n: number, vocab: number): number[] {
  return Array.from({ length: n }, () => rng.int(vocab));
}

describe('reference backbone', () => {
  it('gives the same hidden states fed whole or in chunks (1e-10), leaving states untouched', () => {
    const ids = randomIds(new Rng(11), 48, backbone.config.vocab_size);
    const whole = backbone.forward(ids);
    const chunked: Float64Array[] = [];
    let state = backbone.emptyState();
    let start = 0;
    for (const size of [5, 1, 17, 25]) {
      const before = JSON.stringify(state, (_k, v) =>
        v instanceof Float64Array ? Array.from(v) : v,
      );
      const out = backbone.forwardChunk(ids.slice(start, start + size), state);
      const after = JSON.stringify(state, (_k, v) =>
        v instanceof Float64Array ? Array.from(v) : v,
      );
      expect(after).toBe(before); // the input state is not mutated
      chunked.push(...out.hidden);
      state = out.state;
      start += size;
    }
    expect(state.position).toBe(48);
    expect(maxAbsDiff(chunked, whole)).toBeLessThan(1e-10);
  });

  it('is causal: appending tokens leaves earlier hidden states unchanged', () => {
    const rng = new Rng(12);
    const ids = randomIds(rng, 20, backbone.config.vocab_size);
    const longer = [...ids, ...randomIds(rng, 10, backbone.config.vocab_size)];
    const a = backbone.forward(ids);
    const b = backbone.forward(longer).slice(0, 20);
    expect(maxAbsDiff(a, b)).toBeLessThan(1e-12);
    // ... while a changed earlier token does change later states (the layers do mix tokens).
    const changed = [...ids];
    changed[0] = (ids[0]! + 1) % backbone.config.vocab_size;
    const c = backbone.forward(changed);
    expect(maxAbsDiff([c[19]!], [a[19]!])).toBeGreaterThan(1e-3);
  });

  it('reads the bf16 release as the rounded fp32 one: hidden states close, not equal', async () => {
    const bf16 = await ReferenceBackbone.load(bf16Dir);
    const ids = randomIds(new Rng(13), 24, backbone.config.vocab_size);
    const diff = maxAbsDiff(bf16.forward(ids), backbone.forward(ids));
    expect(diff).toBeGreaterThan(0);
    expect(diff).toBeLessThan(0.1); // final-normed states are O(1); bf16 weights move them ~1e-2
  });
});

describe('Gated DeltaNet recurrence', () => {
  it('matches a hand-computed one-dimensional case', () => {
    // dk = dv = 1. Step 1: S = 0; δ = 0.5·(2 − 0) = 1; S = 1; o = 3·1 = 3.
    // Step 2: S = 0.5·1; δ = 0.5·(2 − 0.5) = 0.75; S = 0.5 + 0.75 = 1.25; o = 3.75.
    const S = new Float64Array(1);
    const q = Float64Array.of(3);
    const k = Float64Array.of(1);
    const v = Float64Array.of(2);
    expect(gatedDeltaStep(S, q, k, v, 0, 0.5)[0]).toBeCloseTo(3, 14);
    expect(gatedDeltaStep(S, q, k, v, Math.log(0.5), 0.5)[0]).toBeCloseTo(3.75, 14);
    expect(S[0]).toBeCloseTo(1.25, 14);
  });

  it('matches the closed (non-recurrent) form over a sequence, with an initial state', () => {
    // Unrolling S_t = γ_t S_{t-1} + k_t δ_tᵀ with δ_t = β_t (v_t − γ_t S_{t-1}ᵀ k_t) gives, with
    // Γ(s, t) = Π_{r=s+1..t} γ_r:  δ_t = β_t (v_t − Γ(0,t) S_0ᵀ k_t − Σ_{s<t} Γ(s,t) (k_s·k_t) δ_s)
    // and o_t = Γ(0,t) S_0ᵀ q_t + Σ_{s≤t} Γ(s,t) (k_s·q_t) δ_s: no state matrix is updated.
    const rng = new Rng(21);
    const dk = 3;
    const dv = 2;
    const T = 9;
    const vec = (n: number): Float64Array => Float64Array.from({ length: n }, () => rng.normal());
    const unit = (x: Float64Array): Float64Array => x.map((v) => v / Math.hypot(...x));
    const qs = Array.from({ length: T }, () => unit(vec(dk)).map((v) => v / Math.sqrt(dk)));
    const ks = Array.from({ length: T }, () => unit(vec(dk)));
    const vs = Array.from({ length: T }, () => vec(dv));
    const gs = Array.from({ length: T }, () => -2 * rng.uniform());
    const betas = Array.from({ length: T }, () => rng.uniform());
    const S0 = vec(dk * dv);

    const S = S0.slice();
    const recurrent = qs.map((q, t) => gatedDeltaStep(S, q, ks[t]!, vs[t]!, gs[t]!, betas[t]!));

    const Gamma = (s: number, t: number): number => {
      let sum = 0;
      for (let r = s + 1; r <= t; r++) sum += gs[r]!;
      return Math.exp(sum);
    };
    const S0T = (x: Float64Array): number[] =>
      Array.from({ length: dv }, (_, j) => x.reduce((acc, xi, i) => acc + S0[i * dv + j]! * xi, 0));
    const dotv = (a: Float64Array, b: Float64Array): number =>
      a.reduce((acc, x, i) => acc + x * b[i]!, 0);
    // Positions are 0-based here; the initial state decays by Γ(-1, t) = exp(g_0 + ... + g_t).
    const deltas: number[][] = [];
    const closed: number[][] = [];
    for (let t = 0; t < T; t++) {
      const fromS0 = S0T(ks[t]!);
      const delta = Array.from({ length: dv }, (_, j) => {
        let pred = Gamma(-1, t) * fromS0[j]!;
        for (let s = 0; s < t; s++) pred += Gamma(s, t) * dotv(ks[s]!, ks[t]!) * deltas[s]![j]!;
        return betas[t]! * (vs[t]![j]! - pred);
      });
      deltas.push(delta);
      const qFromS0 = S0T(qs[t]!);
      closed.push(
        Array.from({ length: dv }, (_, j) => {
          let o = Gamma(-1, t) * qFromS0[j]!;
          for (let s = 0; s <= t; s++) o += Gamma(s, t) * dotv(ks[s]!, qs[t]!) * deltas[s]![j]!;
          return o;
        }),
      );
    }
    expect(
      maxAbsDiff(
        recurrent,
        closed.map((row) => Float64Array.from(row)),
      ),
    ).toBeLessThan(1e-12);
  });

  it('runs the causal conv with the last kernel tap on the current token', () => {
    // One channel, weight [1, 2, 3, 4], inputs 1, 10, 100 after zeros (as torch's conv1d with
    // padding K-1, cut to the sequence): 4·1 = 4; 3·1 + 4·10 = 43; 2·1 + 3·10 + 4·100 = 432.
    const w = Float64Array.of(1, 2, 3, 4);
    const x = (v: number): Float64Array => Float64Array.of(v);
    expect(causalConvStep([x(0), x(0), x(0), x(1)], w)[0]).toBe(4);
    expect(causalConvStep([x(0), x(0), x(1), x(10)], w)[0]).toBe(43);
    expect(causalConvStep([x(0), x(1), x(10), x(100)], w)[0]).toBe(432);
  });

  it('rotates pairs (i, i + rotary/2) and leaves the rest of the head alone', () => {
    // rotary dim 4, θ = 10000: frequencies 1 and 10000^(-1/2) = 0.01 rad per position.
    const x = Float64Array.of(1, 0, 0, 2, 5);
    applyRope(x, 1, 4, 10000);
    expect(x[0]).toBeCloseTo(Math.cos(1), 14);
    expect(x[2]).toBeCloseTo(Math.sin(1), 14);
    expect(x[1]).toBeCloseTo(-2 * Math.sin(0.01), 14);
    expect(x[3]).toBeCloseTo(2 * Math.cos(0.01), 14);
    expect(x[4]).toBe(5);
  });
});

describe('reference head pieces', () => {
  it('computes erf / exact GELU to double precision (values from Python math.erf)', () => {
    const table: Array<[number, number]> = [
      [0.1, 0.1124629160182849],
      [0.5, 0.5204998778130465],
      [1, 0.8427007929497149],
      [1.5, 0.9661051464753108],
      [2, 0.9953222650189527],
      [2.4, 0.999311486103355],
      [2.6, 0.9997639655834707],
      [3, 0.9999779095030014],
      [3.5, 0.9999992569016276],
      [5, 0.9999999999984626],
      [-1.3, -0.9340079449406524],
    ];
    for (const [x, y] of table) expect(Math.abs(erf(x) - y), String(x)).toBeLessThan(2e-15);
    // GELU(x) = x/2 · (1 + erf(x/√2)): erf(1/√2) = 0.6826894921370859, erf(3/√2) = 0.9973002039367398.
    expect(gelu(1)).toBeCloseTo(0.5 * (1 + 0.6826894921370859), 15);
    expect(gelu(-3)).toBeCloseTo(-1.5 * (1 - 0.9973002039367398), 15);
  });

  it('splits multi-head attention by heads and scales by √(head dim)', () => {
    // W = 4, 2 heads of dim 2, identity projections, zero biases. Query (1,0 | 0,1); memory
    // m1 = (1,0 | 0,0), m2 = (0,0 | 0,1). Head 0 scores (1/√2, 0) → output σ(1/√2)·(1,0);
    // head 1 scores (0, 1/√2) → output σ(1/√2)·(0,1).
    const I = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];
    const out = multiheadAttention(
      {
        inProjWeight: Float64Array.from([...I, ...I, ...I]),
        inProjBias: new Float64Array(12),
        outProjWeight: Float64Array.from(I),
        outProjBias: new Float64Array(4),
      },
      2,
      [Float64Array.of(1, 0, 0, 1)],
      [Float64Array.of(1, 0, 0, 0), Float64Array.of(0, 0, 0, 1)],
    );
    const s = 1 / (1 + Math.exp(-1 / Math.SQRT2));
    expect(maxAbsDiff(out, [Float64Array.of(s, 0, 0, s)])).toBeLessThan(1e-15);
  });
});

/** A head whose every tensor is random, then `set` overrides (width 4, 2 heads, 1 + 1 layers). */
function handHead(hidden: number, set: Record<string, number[]>): HeadWeights {
  const rng = new Rng(5);
  const W = 4;
  const F = 4;
  const shapes: Record<string, number> = {
    'hidden_norm.weight': hidden,
    'hidden_norm.bias': hidden,
    'type_embedding.weight': 3 * W,
    'residual_scorer.0.weight': 4 * W * W,
    'residual_scorer.0.bias': W,
    'residual_scorer.3.weight': W,
    'residual_scorer.3.bias': 1,
    prior_logit_scale: 1,
    joint_logit_scale: 1,
    residual_gate: 1,
  };
  for (const p of [
    'memory',
    'question',
    'option_question',
    'global',
    'option_context',
    'option_lexical',
  ]) {
    shapes[`${p}_projection.weight`] = W * hidden;
  }
  const ln = (p: string): void => {
    shapes[`${p}.weight`] = W;
    shapes[`${p}.bias`] = W;
  };
  const mha = (p: string): void => {
    shapes[`${p}.in_proj_weight`] = 3 * W * W;
    shapes[`${p}.in_proj_bias`] = 3 * W;
    shapes[`${p}.out_proj.weight`] = W * W;
    shapes[`${p}.out_proj.bias`] = W;
  };
  for (const p of ['option_summary_norm', 'field_norm', 'option_norm']) ln(p);
  ['query_norm', 'memory_norm', 'feedforward_norm'].forEach((n) => ln(`evidence_layers.0.${n}`));
  mha('evidence_layers.0.attention');
  shapes['evidence_layers.0.feedforward.0.weight'] = F * W;
  shapes['evidence_layers.0.feedforward.0.bias'] = F;
  shapes['evidence_layers.0.feedforward.3.weight'] = W * F;
  shapes['evidence_layers.0.feedforward.3.bias'] = W;
  mha('layers.0.self_attn');
  mha('layers.0.multihead_attn');
  shapes['layers.0.linear1.weight'] = F * W;
  shapes['layers.0.linear1.bias'] = F;
  shapes['layers.0.linear2.weight'] = W * F;
  shapes['layers.0.linear2.bias'] = W;
  ['norm1', 'norm2', 'norm3'].forEach((n) => ln(`layers.0.${n}`));

  const tensors = new Map<string, Float64Array>();
  for (const [name, size] of Object.entries(shapes)) {
    const values = set[name] ?? Array.from({ length: size }, () => rng.normal());
    expect(values.length, name).toBe(size);
    tensors.set(name, Float64Array.from(values));
  }
  for (const name of Object.keys(set)) expect(tensors.has(name), name).toBe(true);
  const config = {
    hidden_size: hidden,
    width: W,
    routing_layers: 1,
    layers: 1,
    heads: 2,
    feedforward: F,
    dropout: 0,
  };
  return { config, tensors };
}

const zeros = (n: number): number[] => new Array<number>(n).fill(0);
const ones = (n: number): number[] => new Array<number>(n).fill(1);
const identity4 = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];
/** LayerNorm's scale for a mean-0 input with variance v (torch eps 1e-5). */
const lnScale = (v: number): number => 1 / Math.sqrt(v + 1e-5);

describe('reference head on hand-checkable inputs', () => {
  it('gives 100·cos(lex, q + global) when the gate is shut and the prior scale clamps', () => {
    // hidden 2: LayerNorm maps [a, b] to ±[1, -1]·scale, so q and global point along [1, -1]
    // (after the norm: the raw H0 + H3 = [5, 1] points elsewhere) and the anchor is [1,-1]/√2.
    const head = handHead(2, {
      'hidden_norm.weight': [1, 1],
      'hidden_norm.bias': [0, 0],
      prior_logit_scale: [10], // exp(min(10, ln 100)) = 100
      residual_gate: [-1e9], // σ = 0
    });
    const hidden = [
      [2, 0],
      [0, 2],
      [5, 1],
      [3, 1],
    ].map((r) => Float64Array.from(r));
    const inputIds = [5, 6, 8, 10];
    const rows: Record<number, number[]> = { 5: [1, 0], 6: [0, 2], 8: [-3, 4], 10: [2, 1] };
    const logits = referenceHeadLogits(
      head,
      hidden,
      inputIds,
      [
        {
          typeId: 1,
          span: [0, 1],
          optionSpans: [
            [0, 1],
            [1, 3],
          ],
        },
        { typeId: 2, span: [1, 3], optionSpans: [[3, 4]] },
      ],
      (id) => Float64Array.from(rows[id]!),
    );
    const anchor = [1 / Math.SQRT2, -1 / Math.SQRT2];
    const cos = (x: number[]): number =>
      (x[0]! * anchor[0]! + x[1]! * anchor[1]!) / Math.hypot(...x);
    expect(logits[0]![0]).toBeCloseTo(100 * cos([1, 0]), 10); // 70.71
    expect(logits[0]![1]).toBeCloseTo(100 * cos([-1.5, 3]), 10); // mean of rows 6 and 8: −94.87
    expect(logits[1]![0]).toBeCloseTo(100 * cos([2, 1]), 10); // 31.62
  });

  it('gives σ(0)·(2·cos(field, option) + bias) when the prior is off and the layers add nothing', () => {
    // Attention/feed-forward outputs, summary norm, global and lexical/question option parts are
    // zeroed, so option = ctx (mean N over its span), field = q + type row; cosine after the
    // field/option LayerNorms is the cosine of the centred vectors.
    const head = handHead(4, {
      'hidden_norm.weight': ones(4),
      'hidden_norm.bias': zeros(4),
      prior_logit_scale: [-1e9], // exp → 0
      joint_logit_scale: [Math.log(2)],
      residual_gate: [0], // σ = 0.5
      'option_context_projection.weight': identity4,
      'question_projection.weight': identity4,
      'option_lexical_projection.weight': zeros(16),
      'option_question_projection.weight': zeros(16),
      'global_projection.weight': zeros(16),
      'type_embedding.weight': [...zeros(4), 1, -1, 0, 0, ...zeros(4)],
      'option_summary_norm.weight': zeros(4),
      'option_summary_norm.bias': zeros(4),
      'field_norm.weight': ones(4),
      'field_norm.bias': zeros(4),
      'option_norm.weight': ones(4),
      'option_norm.bias': zeros(4),
      'evidence_layers.0.attention.out_proj.weight': zeros(16),
      'evidence_layers.0.attention.out_proj.bias': zeros(4),
      'evidence_layers.0.feedforward.3.weight': zeros(16),
      'evidence_layers.0.feedforward.3.bias': zeros(4),
      'layers.0.self_attn.out_proj.weight': zeros(16),
      'layers.0.self_attn.out_proj.bias': zeros(4),
      'layers.0.multihead_attn.out_proj.weight': zeros(16),
      'layers.0.multihead_attn.out_proj.bias': zeros(4),
      'layers.0.linear2.weight': zeros(16),
      'layers.0.linear2.bias': zeros(4),
      'residual_scorer.0.weight': zeros(64),
      'residual_scorer.0.bias': zeros(4),
      'residual_scorer.3.bias': [0.25], // GELU(0) = 0, so the scorer gives its bias
    });
    // Mean 0, variance 1 rows: N = H · c.
    const hidden = [
      [1, -1, 1, -1],
      [1, 1, -1, -1],
      [1, -1, -1, 1],
      [1, -1, 1, -1],
    ].map((r) => Float64Array.from(r));
    const c = lnScale(1);
    const logits = referenceHeadLogits(
      head,
      hidden,
      [0, 1, 2, 3],
      [
        {
          typeId: 0,
          span: [0, 1],
          optionSpans: [
            [1, 2],
            [3, 4],
          ],
        },
        {
          typeId: 1,
          span: [1, 2],
          optionSpans: [
            [0, 1],
            [1, 2],
          ],
        },
      ],
      () => Float64Array.of(1, 2, 3, 4),
    );
    // Question 1 (type row 0): field ∥ H0; options H1 (orthogonal) and H3 (= H0).
    expect(logits[0]![0]).toBeCloseTo(0.5 * (2 * 0 + 0.25), 12);
    expect(logits[0]![1]).toBeCloseTo(0.5 * (2 * 1 + 0.25), 12);
    // Question 2: field = c·H1 + [1, −1, 0, 0] = [c+1, c−1, −c, −c], |f| = √(4c² + 2);
    // cos with H0 = 2c / (2c·|f|) = 1/|f|; with H1 = 4c² / (2c·|f|) = 2c/|f|.
    const f = Math.sqrt(4 * c * c + 2);
    expect(logits[1]![0]).toBeCloseTo(0.5 * (2 / f + 0.25), 12);
    expect(logits[1]![1]).toBeCloseTo(0.5 * ((2 * 2 * c) / f + 0.25), 12);
  });
});

describe('reference head on the tiny fixture', () => {
  const spans = {
    a: {
      typeId: 1,
      span: [3, 7] as const,
      optionSpans: [
        [8, 10],
        [10, 13],
        [13, 14],
        [14, 18],
      ] as const,
    },
    b: {
      typeId: 0,
      span: [20, 24] as const,
      optionSpans: [
        [25, 27],
        [27, 30],
      ] as const,
    },
  };

  it('permutes logits with options, and with questions; questions influence each other', () => {
    const head = loadHeadWeights(fp32Dir);
    const ids = randomIds(new Rng(31), 34, backbone.config.vocab_size);
    const hidden = backbone.forward(ids);
    const row = (id: number): Float64Array => backbone.lmHeadRow(id);
    const [a, b] = referenceHeadLogits(head, hidden, ids, [spans.a, spans.b], row);
    const reordered = { ...spans.a, optionSpans: [3, 0, 2, 1].map((j) => spans.a.optionSpans[j]!) };
    const [a2] = referenceHeadLogits(head, hidden, ids, [reordered, spans.b], row);
    expect(maxAbsDiff([a2!], [Float64Array.from([3, 0, 2, 1], (j) => a![j]!)])).toBeLessThan(1e-12);
    const [b3, a3] = referenceHeadLogits(head, hidden, ids, [spans.b, spans.a], row);
    expect(maxAbsDiff([a3!, b3!], [a!, b!])).toBeLessThan(1e-12);
    const [alone] = referenceHeadLogits(head, hidden, ids, [spans.a], row);
    expect(maxAbsDiff([alone!], [a!])).toBeGreaterThan(1e-6);
  });

  it('answers neither near-uniformly nor one-hot (4-option choices, 16 random requests)', async () => {
    const words = ['cancel', 'refund', 'balance', 'card', 'yes', 'no', 'maybe', 'urgent', 'later'];
    const more = ['transfer', 'fraud', 'loan', 'open', 'close', 'help', 'red', 'blue', 'happy'];
    const vocabulary = [...words, ...more];
    const rng = new Rng(41);
    const pick = (): string => vocabulary[rng.int(vocabulary.length)]!;
    const maxima: number[] = [];
    for (let r = 0; r < 16; r++) {
      const names = new Set<string>();
      while (names.size < 4) names.add(pick());
      const request: ValidRequest = {
        model: 'clef-tiny',
        state: { text: Array.from({ length: 3 + rng.int(10) }, pick).join(' '), n: rng.int(100) },
        questions: [
          {
            id: 'q',
            type: 'choice',
            instructions: `Which ${pick()}?`,
            criteria: [...names].map((name) => [name, rng.int(2) ? `${pick()} ${pick()}` : null]),
          },
        ],
      };
      const { probabilities } = await referenceDecide(bf16Dir, request);
      const p = probabilities[0]!;
      expect(p.length).toBe(4);
      expect(p.reduce((s, v) => s + v, 0)).toBeCloseTo(1, 6);
      maxima.push(Math.max(...p));
    }
    const mean = maxima.reduce((s, v) => s + v, 0) / maxima.length;
    // Uniform would be 0.25 everywhere, one-hot 1.0; measured 0.52 with seed 0.
    expect(mean).toBeGreaterThan(0.3);
    expect(mean).toBeLessThan(0.97);
    expect(Math.max(...maxima) - Math.min(...maxima)).toBeGreaterThan(0.1);
  });
});
