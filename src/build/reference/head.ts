/**
 * Reference joint schema head in float64, mirroring `JointSchemaHead.forward` in the release's
 * `joint_schema_model.py` (vendored at unslothai/unsloth `unsloth/_vendor/clef/`):
 *
 *   N = hidden_norm(H); memory = memory_projection(N); global = N[last]
 *   q_k = mean N over the question span; ctx = mean N over an option span;
 *   lex = mean of lm_head rows of the option span's tokens
 *   options = option_context_projection(ctx) + option_lexical_projection(lex)
 *           + option_question_projection(q_k) → evidence (routing) layers over memory
 *   fields = question_projection(q_k) + option_summary_norm(Σ softmax(o·f/√W) o)
 *          + global_projection(global) + type_embedding(type) → decoder layers → field_norm
 *   logit = e^min(prior_scale, ln100) cos(lex, q_k + global)
 *         + σ(gate) (e^min(joint_scale, ln100) cos(f, option_norm(o)) + residual_scorer([f,o,f*o,|f-o|]))
 *
 * torch defaults reproduced: LayerNorm eps 1e-5; GELU exact (erf); nn.MultiheadAttention
 * (in_proj rows q | k | v, heads split the width in order, scores / √(W/heads), out_proj);
 * TransformerDecoderLayer norm_first: x += SA(norm1 x); x += MHA(norm2 x, memory);
 * x += FF(norm3 x), memory not normed there, no masks.
 */
import { join } from '../host/paths.js';
import { SafetensorsFile } from '../safetensors.js';
import { type JointHeadConfig } from '../release.js';
import { readFileSync } from '../host/files.js';
import { dot, matVec, sigmoid, softmax } from './math.js';

export interface HeadWeights {
  config: JointHeadConfig;
  tensors: Map<string, Float64Array>;
}

export interface HeadQuestion {
  /** 0 noul, 1 choice, 2 score. */
  typeId: number;
  /** Token range [start, end) of the instructions. */
  span: readonly [number, number];
  /** Token range of each option's semantics, in option order. */
  optionSpans: ReadonlyArray<readonly [number, number]>;
}

const LN_EPS = 1e-5;
const LOG_100 = Math.log(100);

/** Reads joint_head_config.json and joint_head.safetensors from a release directory. */
export function loadHeadWeights(dir: string): HeadWeights {
  const config = JSON.parse(
    readFileSync(join(dir, 'joint_head_config.json'), 'utf8'),
  ) as JointHeadConfig;
  const file = SafetensorsFile.open(join(dir, 'joint_head.safetensors'));
  try {
    const tensors = new Map(file.names().map((name) => [name, file.read64(name)] as const));
    return { config, tensors };
  } finally {
    file.close();
  }
}

/** Exact GELU: x Φ(x) with Φ through erf. */
export function gelu(x: number): number {
  return 0.5 * x * (1 + erf(x / Math.SQRT2));
}

/**
 * erf to full double precision: Maclaurin series for |x| < 2, continued fraction of erfc beyond
 * (both converge far past 1e-15 in these ranges).
 */
export function erf(x: number): number {
  const ax = Math.abs(x);
  if (ax < 2) {
    let term = ax;
    let sum = ax;
    for (let n = 1; n < 200; n++) {
      term *= (-ax * ax) / n;
      const add = term / (2 * n + 1);
      sum += add;
      if (Math.abs(add) < 1e-17 * Math.abs(sum)) break;
    }
    return Math.sign(x) * (2 / Math.sqrt(Math.PI)) * sum;
  }
  // erfc(x) = exp(-x²)/√π · 1/(x + 1/2/(x + 1/(x + 3/2/(x + ...)))) evaluated bottom-up.
  let f = ax;
  for (let n = 60; n >= 1; n--) f = ax + n / 2 / f;
  const erfc = Math.exp(-ax * ax) / Math.sqrt(Math.PI) / f;
  return Math.sign(x) * (1 - erfc);
}

export interface AttentionWeights {
  /** [3W, W]: rows q, then k, then v. */
  inProjWeight: Float64Array;
  inProjBias: Float64Array;
  outProjWeight: Float64Array;
  outProjBias: Float64Array;
}

/**
 * nn.MultiheadAttention(query, key = value = memory) without masks: per head h, dims
 * [h·d, (h+1)·d) with d = W / heads, softmax(q·k / √d) over memory, then out_proj.
 */
export function multiheadAttention(
  w: AttentionWeights,
  heads: number,
  queries: readonly Float64Array[],
  memory: readonly Float64Array[],
): Float64Array[] {
  const W = w.outProjBias.length;
  const hd = W / heads;
  const project = (x: Float64Array, part: number): Float64Array => {
    const y = matVec(w.inProjWeight.subarray(part * W * W, (part + 1) * W * W), x, W);
    return y.map((v, i) => v + (w.inProjBias[part * W + i] as number));
  };
  const ks = memory.map((m) => project(m, 1));
  const vs = memory.map((m) => project(m, 2));
  return queries.map((x) => {
    const q = project(x, 0);
    const out = new Float64Array(W);
    for (let h = 0; h < heads; h++) {
      const qh = q.subarray(h * hd, (h + 1) * hd);
      const scores = ks.map((k) => dot(qh, k.subarray(h * hd, (h + 1) * hd)) / Math.sqrt(hd));
      const weights = softmax(scores);
      vs.forEach((v, t) => {
        for (let d = 0; d < hd; d++) {
          out[h * hd + d] =
            (out[h * hd + d] as number) + (weights[t] as number) * (v[h * hd + d] as number);
        }
      });
    }
    const y = matVec(w.outProjWeight, out, W);
    return y.map((v, i) => v + (w.outProjBias[i] as number));
  });
}

class Head {
  constructor(private readonly w: HeadWeights) {}

  get(name: string): Float64Array {
    const t = this.w.tensors.get(name);
    if (t === undefined) throw new Error(`joint head has no tensor ${name}`);
    return t;
  }

  layerNorm(prefix: string, x: Float64Array): Float64Array {
    const weight = this.get(`${prefix}.weight`);
    const bias = this.get(`${prefix}.bias`);
    const n = x.length;
    let mean = 0;
    for (const v of x) mean += v;
    mean /= n;
    let variance = 0;
    for (const v of x) variance += (v - mean) ** 2;
    variance /= n; // biased, as torch's LayerNorm
    const inv = 1 / Math.sqrt(variance + LN_EPS);
    return x.map((v, i) => (v - mean) * inv * (weight[i] as number) + (bias[i] as number));
  }

  /** Linear layer `prefix` (weight [out, in], bias when it has one). */
  linear(prefix: string, x: Float64Array, hasBias = true): Float64Array {
    const weight = this.get(`${prefix}.weight`);
    const y = matVec(weight, x, weight.length / x.length);
    if (hasBias) {
      const bias = this.get(`${prefix}.bias`);
      for (let i = 0; i < y.length; i++) y[i] = (y[i] as number) + (bias[i] as number);
    }
    return y;
  }

  attention(prefix: string, queries: Float64Array[], memory: Float64Array[]): Float64Array[] {
    const weights: AttentionWeights = {
      inProjWeight: this.get(`${prefix}.in_proj_weight`),
      inProjBias: this.get(`${prefix}.in_proj_bias`),
      outProjWeight: this.get(`${prefix}.out_proj.weight`),
      outProjBias: this.get(`${prefix}.out_proj.bias`),
    };
    return multiheadAttention(weights, this.w.config.heads, queries, memory);
  }

  feedForward(first: string, second: string, x: Float64Array): Float64Array {
    return this.linear(second, this.linear(first, x).map(gelu));
  }

  evidenceLayer(i: number, queries: Float64Array[], memory: Float64Array[]): Float64Array[] {
    const p = `evidence_layers.${i}`;
    const normedMemory = memory.map((m) => this.layerNorm(`${p}.memory_norm`, m));
    const routed = this.attention(
      `${p}.attention`,
      queries.map((q) => this.layerNorm(`${p}.query_norm`, q)),
      normedMemory,
    );
    const mid = queries.map((q, j) => add(q, routed[j] as Float64Array));
    return mid.map((q) =>
      add(
        q,
        this.feedForward(
          `${p}.feedforward.0`,
          `${p}.feedforward.3`,
          this.layerNorm(`${p}.feedforward_norm`, q),
        ),
      ),
    );
  }

  decoderLayer(i: number, fields: Float64Array[], memory: Float64Array[]): Float64Array[] {
    const p = `layers.${i}`;
    const sa = this.attention(
      `${p}.self_attn`,
      fields.map((f) => this.layerNorm(`${p}.norm1`, f)),
      fields.map((f) => this.layerNorm(`${p}.norm1`, f)),
    );
    let x = fields.map((f, j) => add(f, sa[j] as Float64Array));
    const ca = this.attention(
      `${p}.multihead_attn`,
      x.map((f) => this.layerNorm(`${p}.norm2`, f)),
      memory,
    );
    x = x.map((f, j) => add(f, ca[j] as Float64Array));
    return x.map((f) =>
      add(f, this.feedForward(`${p}.linear1`, `${p}.linear2`, this.layerNorm(`${p}.norm3`, f))),
    );
  }
}

/**
 * The head's logits: one Float64Array per question, in option order. `hidden` is the backbone's
 * final-normed output for every position of `inputIds`; `lmHeadRow(id)` gives lm_head.weight[id].
 */
export function referenceHeadLogits(
  weights: HeadWeights,
  hidden: readonly Float64Array[],
  inputIds: readonly number[],
  questions: readonly HeadQuestion[],
  lmHeadRow: (tokenId: number) => Float64Array,
): Float64Array[] {
  const head = new Head(weights);
  const W = weights.config.width;
  const N = hidden.map((h) => head.layerNorm('hidden_norm', h));
  const memory = N.map((n) => head.linear('memory_projection', n, false));
  const globalVector = N[N.length - 1] as Float64Array;
  const questionVectors = questions.map((q) => meanOf(N.slice(q.span[0], q.span[1])));

  const lexical = questions.map((q) =>
    q.optionSpans.map(([s, e]) => meanOf(inputIds.slice(s, e).map(lmHeadRow))),
  );
  let options: Float64Array[] = [];
  questions.forEach((q, k) => {
    const questionPart = head.linear(
      'option_question_projection',
      questionVectors[k] as Float64Array,
      false,
    );
    q.optionSpans.forEach(([s, e], j) => {
      const ctx = head.linear('option_context_projection', meanOf(N.slice(s, e)), false);
      const lex = head.linear(
        'option_lexical_projection',
        (lexical[k] as Float64Array[])[j] as Float64Array,
        false,
      );
      options.push(add(add(ctx, lex), questionPart));
    });
  });
  for (let i = 0; i < weights.config.routing_layers; i++)
    options = head.evidenceLayer(i, options, memory);
  const split: Float64Array[][] = [];
  let offset = 0;
  for (const q of questions) {
    split.push(options.slice(offset, offset + q.optionSpans.length));
    offset += q.optionSpans.length;
  }

  const globalPart = head.linear('global_projection', globalVector, false);
  const typeTable = head.get('type_embedding.weight');
  let fields = questions.map((q, k) => {
    const base = head.linear('question_projection', questionVectors[k] as Float64Array, false);
    const opts = split[k] as Float64Array[];
    const routing = softmax(opts.map((o) => dot(o, base) / Math.sqrt(W)));
    const summary = new Float64Array(W);
    opts.forEach((o, j) =>
      o.forEach((v, d) => (summary[d] = (summary[d] as number) + (routing[j] as number) * v)),
    );
    const typeRow = typeTable.subarray(q.typeId * W, (q.typeId + 1) * W);
    return add(add(add(base, head.layerNorm('option_summary_norm', summary)), globalPart), typeRow);
  });
  for (let i = 0; i < weights.config.layers; i++) fields = head.decoderLayer(i, fields, memory);
  fields = fields.map((f) => head.layerNorm('field_norm', f));

  const scale = (name: string): number => Math.exp(Math.min(head.get(name)[0] as number, LOG_100));
  const priorScale = scale('prior_logit_scale');
  const jointScale = scale('joint_logit_scale');
  const gate = sigmoid(head.get('residual_gate')[0] as number);
  return questions.map((_, k) => {
    const anchor = normalize(add(questionVectors[k] as Float64Array, globalVector));
    const f = fields[k] as Float64Array;
    return Float64Array.from(split[k] as Float64Array[], (routed, j) => {
      const prior =
        priorScale * dot(normalize((lexical[k] as Float64Array[])[j] as Float64Array), anchor);
      const o = head.layerNorm('option_norm', routed);
      const cosine = dot(f, o) / Math.max(norm(f) * norm(o), 1e-8);
      const features = new Float64Array(4 * W);
      for (let d = 0; d < W; d++) {
        const fd = f[d] as number;
        const od = o[d] as number;
        features[d] = fd;
        features[W + d] = od;
        features[2 * W + d] = fd * od;
        features[3 * W + d] = Math.abs(fd - od);
      }
      const hiddenScore = head.linear('residual_scorer.0', features).map(gelu);
      const residual = head.linear('residual_scorer.3', hiddenScore)[0] as number;
      return prior + gate * (jointScale * cosine + residual);
    });
  });
}

function add(a: Float64Array, b: Float64Array): Float64Array {
  return a.map((v, i) => v + (b[i] as number));
}

function meanOf(rows: readonly Float64Array[]): Float64Array {
  if (rows.length === 0) throw new Error('empty span');
  const out = new Float64Array((rows[0] as Float64Array).length);
  for (const r of rows) r.forEach((v, i) => (out[i] = (out[i] as number) + v));
  return out.map((v) => v / rows.length);
}

function norm(x: Float64Array): number {
  return Math.sqrt(dot(x, x));
}

/** F.normalize: x / max(‖x‖, 1e-12). */
function normalize(x: Float64Array): Float64Array {
  const n = Math.max(norm(x), 1e-12);
  return x.map((v) => v / n);
}
