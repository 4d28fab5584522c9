/**
 * The joint schema head (clef-recipe.md §3; reference `JointSchemaHead` in joint_schema_model.py)
 * as two ONNX graphs with plain ONNX ops (opset 17) that onnxruntime-web 1.30 runs on WASM and
 * WebGPU, and onnxruntime-node on CPU:
 *
 * - head_memory: backbone hidden states of one chunk → the head's memory rows
 *   `memory_projection(hidden_norm(H))`. Per row, so chunks give exactly the whole-input rows;
 *   the engine caches the rows of the prefix + state per prefix.
 * - head_decide: the cached memory rows for positions [0, stateEnd) plus the hidden states of the
 *   schema + suffix (everything the spans and the global vector read lies there) → one logit
 *   and one probability per option of every question.
 *
 * The exact I/O contract is documented (and built, engine side) in src/clef/head-inputs.ts.
 * Why memory rows and not per-layer K/V: rows are W floats per token (K/V for every routing and
 * joint layer would be 2 × layers × W), and with `crossAttention: 'folded'` the decide graph
 * never projects the T memory rows at all: since softmax ignores a per-query constant,
 * q·(W_k m + b_k) ranks keys as (W_kᵀ q)·m, and P·(W_v m + b_v) = W_v (P·m) + b_v because each
 * row of P sums to 1. That costs heads × queries × T × W per layer instead of 2 × T × W².
 */
import { mkdirSync, readFileSync } from '../host/files.js';
import { join } from '../host/paths.js';
import { attr, GraphBuilder, type WrittenModel } from '../onnx/graph.js';
import { DataType } from '../onnx/proto.js';
import { SafetensorsFile, toF16Bits } from '../safetensors.js';
import { type JointHeadConfig } from '../release.js';
import { HeadOps, type HeadTensorSource } from './head-ops.js';

export const HEAD_MEMORY_FILE = 'head_memory.onnx';
export const HEAD_DECIDE_FILE = 'head_decide.onnx';

export interface HeadOnnxOptions {
  /** fp32: weights and compute fp32. fp16: weight matrices stored fp16 (half the download),
   * cast to fp32 when the session loads; compute, inputs and outputs stay fp32. */
  dtype?: 'fp32' | 'fp16';
  /** How cross-attention to memory is computed (same inputs and outputs either way). */
  crossAttention?: 'folded' | 'direct';
}

export interface HeadOnnxResult {
  config: JointHeadConfig;
  memory: WrittenModel;
  decide: WrittenModel;
}

export type { HeadTensorSource } from './head-ops.js';

function readHeadConfig(releaseDir: string): JointHeadConfig {
  const raw = JSON.parse(
    readFileSync(join(releaseDir, 'joint_head_config.json'), 'utf8'),
  ) as Record<string, unknown>;
  const keys = ['hidden_size', 'width', 'routing_layers', 'layers', 'heads', 'feedforward'];
  for (const key of keys) {
    if (typeof raw[key] !== 'number') throw new Error(`joint_head_config.json: ${key} missing`);
  }
  const config = raw as unknown as JointHeadConfig;
  if (config.width % config.heads !== 0) throw new Error('joint head: width % heads != 0');
  return config;
}

/** Writes head_memory.onnx and head_decide.onnx (+ .data files) from a release's joint head. */
export function buildHeadOnnx(
  releaseDir: string,
  outDir: string,
  options: HeadOnnxOptions = {},
): HeadOnnxResult {
  const config = readHeadConfig(releaseDir);
  const file = SafetensorsFile.open(join(releaseDir, 'joint_head.safetensors'));
  try {
    const weights: HeadTensorSource = {
      read: (name) => file.read(name),
      shape: (name) => file.info(name).shape,
    };
    mkdirSync(outDir, { recursive: true });
    return {
      config,
      memory: buildHeadMemory(weights, config, join(outDir, HEAD_MEMORY_FILE), options),
      decide: buildHeadDecide(weights, config, join(outDir, HEAD_DECIDE_FILE), options),
    };
  } finally {
    file.close();
  }
}

function newOps(
  name: string,
  onnxPath: string,
  weights: HeadTensorSource,
  config: JointHeadConfig,
  options: HeadOnnxOptions,
): HeadOps {
  const g = new GraphBuilder({ name, onnxPath });
  return new HeadOps(g, weights, config, options.dtype === 'fp16' ? toF16Bits : null);
}

const F = DataType.FLOAT;

function buildHeadMemory(
  weights: HeadTensorSource,
  config: JointHeadConfig,
  onnxPath: string,
  options: HeadOnnxOptions = {},
): WrittenModel {
  const o = newOps('clef_head_memory', onnxPath, weights, config, options);
  const hidden = o.g.input('hidden', F, [1, 'chunk', config.hidden_size]);
  // The rows so far ride along like a KV cache: the engine feeds `memory` back as
  // `past_memory`, so on WebGPU the rows never leave the GPU (start with 0 rows).
  const past = o.g.input('past_memory', F, [1, 'past', config.width]);
  const normed = o.layerNorm(hidden, 'hidden_norm');
  const rows = o.linear(normed, 'memory_projection', false);
  const memory = o.g.op('Concat', [past, rows], { axis: attr.int(1) });
  o.g.output(memory, 'memory', F, [1, 'total', config.width]);
  return o.finish('memory rows: past_memory followed by those of one chunk of hidden states');
}

function buildHeadDecide(
  weights: HeadTensorSource,
  config: JointHeadConfig,
  onnxPath: string,
  options: HeadOnnxOptions = {},
): WrittenModel {
  const { hidden_size: H, width: W } = config;
  const folded = (options.crossAttention ?? 'folded') === 'folded';
  const o = newOps('clef_head_decide', onnxPath, weights, config, options);
  const g = o.g;
  const memoryPrefix = g.input('memory', F, [1, 'prefix', W]);
  const hidden = g.input('hidden', F, [1, 'tail', H]);
  const questionWeights = g.input('question_weights', F, ['questions', 'tail']);
  const optionWeights = g.input('option_weights', F, ['options', 'tail']);
  const optionQuestion = g.input('option_question', F, ['options', 'questions']);
  const questionType = g.input('question_type', DataType.INT64, ['questions']);
  const lex = g.input('lex', F, ['options', H]);

  // N = hidden_norm(H) on the tail; its memory rows join the cached prefix rows.
  const normed3 = o.layerNorm(hidden, 'hidden_norm');
  const memory = o.reshape(
    g.op('Concat', [memoryPrefix, o.linear(normed3, 'memory_projection', false)], {
      axis: attr.int(1),
    }),
    [-1, W],
  );
  const normed = o.reshape(normed3, [-1, H]);
  const globalVec = g.op('Slice', [
    normed,
    o.i64([-1]),
    o.i64([Number.MAX_SAFE_INTEGER]),
    o.i64([0]),
  ]);
  const questions = g.op('MatMul', [questionWeights, normed]); // span means [Q, H]
  const contexts = g.op('MatMul', [optionWeights, normed]); // span means [O, H]
  const questionToOption = (x: string): string => g.op('MatMul', [optionQuestion, x]);

  // Option queries, then the routing layers (cross-attention to LayerNorm'd memory).
  let routed = o.add(
    o.add(
      o.linear(contexts, 'option_context_projection', false),
      o.linear(lex, 'option_lexical_projection', false),
    ),
    questionToOption(o.linear(questions, 'option_question_projection', false)),
  );
  for (let i = 0; i < config.routing_layers; i++) {
    const p = `evidence_layers.${i}`;
    const keys = o.layerNorm(memory, `${p}.memory_norm`);
    const attended = folded
      ? o.foldedCrossAttention(o.layerNorm(routed, `${p}.query_norm`), keys, `${p}.attention`)
      : o.attention(o.layerNorm(routed, `${p}.query_norm`), keys, `${p}.attention`);
    routed = o.add(routed, attended);
    routed = o.add(
      routed,
      o.feedForward(
        o.layerNorm(routed, `${p}.feedforward_norm`),
        `${p}.feedforward.0`,
        `${p}.feedforward.3`,
      ),
    );
  }

  // Field vectors: question + summary of its routed options + global + type.
  const base = o.linear(questions, 'question_projection', false);
  const routingScores = o.mul(o.rowDot(routed, questionToOption(base)), o.scalar(1 / Math.sqrt(W)));
  const routingWeights = o.segmentSoftmax(routingScores, optionQuestion);
  const summary = g.op('MatMul', [o.transpose(optionQuestion), o.mul(routingWeights, routed)]);
  let fields = o.add(
    o.add(base, o.layerNorm(summary, 'option_summary_norm')),
    o.add(
      o.linear(globalVec, 'global_projection', false),
      g.op('Gather', [o.weight('type_embedding.weight'), questionType], { axis: attr.int(0) }),
    ),
  );
  for (let i = 0; i < config.layers; i++) {
    const p = `layers.${i}`;
    const x = o.layerNorm(fields, `${p}.norm1`);
    fields = o.add(fields, o.attention(x, x, `${p}.self_attn`));
    const y = o.layerNorm(fields, `${p}.norm2`);
    const crossed = folded
      ? o.foldedCrossAttention(y, memory, `${p}.multihead_attn`)
      : o.attention(y, memory, `${p}.multihead_attn`);
    fields = o.add(fields, crossed);
    fields = o.add(
      fields,
      o.feedForward(o.layerNorm(fields, `${p}.norm3`), `${p}.linear1`, `${p}.linear2`),
    );
  }
  fields = o.layerNorm(fields, 'field_norm');

  // Scores (§3 step 7).
  const anchor = questionToOption(o.l2Normalize(o.add(questions, globalVec), 1e-12));
  const prior = o.mul(
    o.rowDot(o.l2Normalize(lex, 1e-12), anchor),
    o.scalar(o.clampedExp('prior_logit_scale')),
  );
  const optionVecs = o.layerNorm(routed, 'option_norm');
  const field = questionToOption(fields);
  const cosine = o.rowDot(o.l2Normalize(field, 1e-8), o.l2Normalize(optionVecs, 1e-8));
  const features = g.op(
    'Concat',
    [field, optionVecs, o.mul(field, optionVecs), g.op('Abs', [o.sub(field, optionVecs)])],
    { axis: attr.int(1) },
  );
  const residual = o.linear(o.gelu(o.linear(features, 'residual_scorer.0')), 'residual_scorer.3');
  const joint = o.add(o.mul(cosine, o.scalar(o.clampedExp('joint_logit_scale'))), residual);
  const gate = 1 / (1 + Math.exp(-o.parameter('residual_gate')));
  const logits = o.add(prior, o.mul(joint, o.scalar(gate))); // [O, 1]
  const probabilities = o.segmentSoftmax(logits, optionQuestion);
  g.output(o.reshape(logits, [-1]), 'logits', F, ['options']);
  g.output(o.reshape(probabilities, [-1]), 'probabilities', F, ['options']);
  return o.finish('per-option logits and per-question softmax of the Clef joint schema head');
}
