/**
 * The Qwen3.5 text backbone of a Clef release as one ONNX model with explicit running state,
 * so a long input can be fed in chunks with the same result as fed whole.
 *
 * Graph I/O (batch is always 1; `i` is the layer's index in `layer_types`):
 *   inputs   input_ids              int64   [1, T]
 *            past_key.i, past_value.i   float32 [1, kvHeads, P, headDim]      (full attention)
 *            conv_state.i           float32 [1, convDim, kernel − 1]          (linear attention)
 *            recurrent_state.i      float32 [1, vHeads, keyDim, valueDim]     (linear attention)
 *   outputs  hidden                 float32 [1, T, hidden]  final RMS-normed hidden states
 *            present_key.i, present_value.i  [1, kvHeads, P + T, headDim]
 *            present_conv_state.i   [1, convDim, kernel − 1]
 *            present_recurrent_state.i [1, vHeads, keyDim, valueDim]
 *   convDim = 2·linear_num_key_heads·linear_key_head_dim + linear_num_value_heads·linear_value_head_dim.
 *   A split backbone (backbone-groups.ts, `BackbonePart`) writes several such graphs: only the
 *   first has input_ids (and the embedding), only the last the final norm and `hidden`; the
 *   others read `residual_in` / write `residual_out` (float32 [1, T, hidden]), and each has the
 *   state I/O of its own layers only.
 *   The first call passes P = 0 (empty past_*) and zero conv/recurrent states; each later call
 *   passes the previous call's present_* outputs. Rotary positions start at P, read from the
 *   shape of the graph's first full-attention layer's past_key (so every layer's P must agree).
 *   conv_state holds the last kernel−1 inputs of the causal conv (channels first, as in
 *   transformers' cache); recurrent_state is the Gated DeltaNet state S[key, value] per value
 *   head, LinearAttention's (B, H_kv, d_k, d_v) layout.
 *
 * Ops, and where onnxruntime 1.30 runs them (measured; details in docs/onnx-ops.md). "All" =
 * onnxruntime-node CPU, onnxruntime-web WASM, and the native WebGPU EP of
 * `onnxruntime-web/webgpu` (the engine's import; the default JSEP build lacks some, see doc):
 *   com.microsoft.LinearAttention (gated_delta)         all (JSEP: CPU fallback)
 *   com.microsoft.MatMulNBits bits 4/8, block 32         all (JSEP: 4 bits only)
 *   com.microsoft.GatherBlockQuantized uint8 bits 8/4    all (JSEP: 8 bits on CPU)
 *   MatMul / Gather / Cast in float16 (fp16 variant)     all; WebGPU needs shader-f16
 *   Concat / Cast in float16 (the kv16 graphs' KV)       all; WebGPU needs shader-f16
 *   plain opset 17: MatMul, Gather, Softmax, Reshape, Transpose, Slice, Concat, Shape, Range,
 *   Cos, Sin, LessOrEqual, Where, Add, Sub, Mul, Neg, Abs, Exp, Log, Relu, Sigmoid, Sqrt,
 *   Reciprocal, ReduceMean, ReduceSum, Cast              all
 * Linear layers: MatMul on float32 [in, out] (fp32), float16 MatMul between Casts (fp16),
 * MatMulNBits (q8/q4/mixed). fp32 weights with zero rows or columns (a trained model's, never
 * real ones) multiply only the rest (backbone-ops.ts, sparseLinear and addLinear). Norms,
 * rotary, the causal conv and attention are plain ops; q and k are L2-normalised before
 * LinearAttention (which does not), scale 1/√keyDim.
 */
import type { Qwen35TextConfig, Release } from '../release.js';
import { GraphBuilder, attr, type WrittenModel } from '../onnx/graph.js';
import { DataType } from '../onnx/proto.js';
import { BackboneOps, QUANT_BLOCK_SIZE, type LinearEncoding } from './backbone-ops.js';
import { quantizeBlocks, toFloat16Array } from './quantize.js';
import { isKvName, presentName } from '../../core/graph-spec.js';
import { withFloat16Kv } from './kv-float16.js';
import {
  fullAttentionLayer,
  linearAttentionLayer,
  linearConvDim,
  type LayerContext,
} from './backbone-layers.js';

export { linearConvDim };

export type BackboneDType = 'fp32' | 'fp16' | 'q8' | 'q4' | 'mixed';

export interface BackboneOptions {
  dtype: BackboneDType;
  /** mixed: layers [0, q8Layers) at 8 bits, the rest at 4. Default min(16, ⌊layers/2⌋). */
  q8Layers?: number;
  /** Embedding table storage (default: fp32 → fp32, fp16 → fp16, q8/q4/mixed → q8). */
  embedding?: EmbeddingEncoding;
  /** MatMulNBits accuracy_level (0 = unset: float activations; 4 = int8, faster on CPU). */
  accuracyLevel?: number;
  /** Split external data into files of at most this many bytes (default 1.5 GiB). */
  maxDataFileBytes?: number;
  /**
   * Also write the graph with its KV cache as float16 (`<name>.kv16.onnx`, same data files):
   * the engine's choice where shader-f16 exists, or when asked. Only graphs with KV (a
   * full-attention layer) get one.
   */
  kvFloat16?: boolean;
}

/** `backbone.onnx` → `backbone.kv16.onnx`: the float16-KV graph over the same data. */
function kvFloat16Path(onnxPath: string): string {
  return onnxPath.replace(/\.onnx$/, '') + '.kv16.onnx';
}

/** The KV inputs of a graph's I/O (full-attention layers' past key/value), each with its output. */
function kvNames(io: BackboneIo): { inputs: string[]; outputs: string[] } {
  const inputs = io.inputs.filter((t) => isKvName(t.name)).map((t) => t.name);
  return { inputs, outputs: inputs.map(presentName) };
}

export interface IoTensor {
  name: string;
  dtype: 'int64' | 'float32' | 'float16';
  shape: Array<number | string>;
}

export interface BackboneIo {
  inputs: IoTensor[];
  outputs: IoTensor[];
}

export interface BuiltBackbone extends WrittenModel {
  io: BackboneIo;
  /** The encoding of each layer's linear weights, by layer index. */
  layerEncodings: LinearEncoding[];
}

/**
 * Which part of the backbone one graph holds: the whole backbone (the default), or one group of
 * a split backbone (backbone-groups.ts). A graph that does not embed reads the residual stream
 * (`residual_in`); one that does not end with the final norm writes it (`residual_out`).
 */
export interface BackbonePart {
  /** Starts from input_ids with the embedding table (else from `residual_in`). */
  embed: boolean;
  /** Layers [start, end) of `layer_types`. */
  layers: readonly [number, number];
  /** Ends with the final norm and outputs `hidden` (else outputs `residual_out`). */
  finalNorm: boolean;
}

/** The residual stream between the groups of a split backbone: float32 [1, T, hidden]. */
const RESIDUAL_IN = 'residual_in';
const RESIDUAL_OUT = 'residual_out';

/** Names, dtypes and shapes of the backbone graph's inputs and outputs for a config. */
export function backboneIo(c: Qwen35TextConfig, part: BackbonePart = wholeBackbone(c)): BackboneIo {
  const convDim = linearConvDim(c);
  const stream = (name: string): IoTensor => ({
    name,
    dtype: 'float32',
    shape: [1, 'sequence_length', c.hidden_size],
  });
  const inputs: IoTensor[] = [
    part.embed
      ? { name: 'input_ids', dtype: 'int64', shape: [1, 'sequence_length'] }
      : stream(RESIDUAL_IN),
  ];
  const outputs: IoTensor[] = [stream(part.finalNorm ? 'hidden' : RESIDUAL_OUT)];
  c.layer_types.forEach((type, i) => {
    if (i < part.layers[0] || i >= part.layers[1]) return;
    const f = (name: string, shape: Array<number | string>): IoTensor => ({
      name,
      dtype: 'float32',
      shape,
    });
    if (type === 'full_attention') {
      const kv = (len: string) => [1, c.num_key_value_heads, len, c.head_dim];
      inputs.push(f(`past_key.${i}`, kv('past_sequence_length')));
      inputs.push(f(`past_value.${i}`, kv('past_sequence_length')));
      outputs.push(f(`present_key.${i}`, kv('total_sequence_length')));
      outputs.push(f(`present_value.${i}`, kv('total_sequence_length')));
    } else {
      const conv = [1, convDim, c.linear_conv_kernel_dim - 1];
      const rec = [1, c.linear_num_value_heads, c.linear_key_head_dim, c.linear_value_head_dim];
      inputs.push(f(`conv_state.${i}`, conv), f(`recurrent_state.${i}`, rec));
      outputs.push(f(`present_conv_state.${i}`, conv), f(`present_recurrent_state.${i}`, rec));
    }
  });
  return { inputs, outputs };
}

/** The single-graph backbone: embedding, every layer, final norm. */
export function wholeBackbone(c: Qwen35TextConfig): BackbonePart {
  return { embed: true, layers: [0, c.num_hidden_layers], finalNorm: true };
}

/** Per-layer linear encoding for a dtype variant. */
export function layerEncodings(dtype: BackboneDType, layers: number, q8Layers?: number) {
  const firstQ8 = q8Layers ?? Math.min(16, Math.floor(layers / 2));
  return Array.from({ length: layers }, (_, i): LinearEncoding => {
    if (dtype === 'mixed') return i < firstQ8 ? 'q8' : 'q4';
    return dtype;
  });
}

/** Streams the release's text backbone into `outPath` (+ `outPath.data*`), tensor by tensor. */
export function buildBackboneOnnx(
  release: Release,
  outPath: string,
  options: BackboneOptions,
  part: BackbonePart = wholeBackbone(release.text),
): BuiltBackbone {
  const c = release.text;
  if (c.hidden_act !== 'silu') throw new Error(`hidden_act ${c.hidden_act} is not supported`);
  if (c.attention_bias) throw new Error('attention_bias is not supported');
  if (!c.layer_types.includes('full_attention')) {
    throw new Error('the backbone needs at least one full-attention layer');
  }
  const [first, end] = part.layers;
  // Rotary positions come from this graph's own first full-attention layer (none: not needed).
  const firstFull = c.layer_types.findIndex(
    (t, i) => i >= first && i < end && t === 'full_attention',
  );
  const prefix = release.has('model.language_model.embed_tokens.weight')
    ? 'model.language_model.'
    : 'model.';
  const read = (name: string): Float32Array => release.read(prefix + name);
  const whole = part.embed && part.finalNorm && first === 0 && end === c.num_hidden_layers;

  const g = new GraphBuilder({
    name: 'clef_backbone',
    onnxPath: outPath,
    ...(options.maxDataFileBytes !== undefined
      ? { maxDataFileBytes: options.maxDataFileBytes }
      : {}),
  });
  try {
    const ops = new BackboneOps(g, options.accuracyLevel ?? 0);
    const io = backboneIo(c, part);
    for (const t of io.inputs) {
      g.input(t.name, t.dtype === 'int64' ? DataType.INT64 : DataType.FLOAT, t.shape);
    }
    const encodings = layerEncodings(options.dtype, c.num_hidden_layers, options.q8Layers);
    const embedding = options.embedding ?? defaultEmbedding(options.dtype);
    let h = part.embed
      ? embed(ops, release, prefix + 'embed_tokens.weight', embedding)
      : RESIDUAL_IN;
    const sequence = part.embed ? 'input_ids' : RESIDUAL_IN;
    const ctx = firstFull >= 0 ? positions(ops, c, `past_key.${firstFull}`, sequence) : null;
    for (let i = first; i < end; i++) {
      const enc = encodings[i] as LinearEncoding;
      const ln = (name: string) => onePlus(read(`layers.${i}.${name}.weight`));
      const x = ops.rmsNorm(h, ln('input_layernorm'), c.rms_norm_eps, `layers.${i}.input_norm`);
      h =
        c.layer_types[i] === 'full_attention'
          ? fullAttentionLayer(ops, c, i, h, x, ctx as LayerContext, enc, read)
          : linearAttentionLayer(ops, c, i, h, x, enc, read);
      // An MLP whose down_proj is all zeros (as `clef-web train` writes them) adds exact zeros.
      const down = read(`layers.${i}.mlp.down_proj.weight`);
      if (enc !== 'fp32' || down.some((v) => v !== 0)) {
        const y = ops.rmsNorm(
          h,
          ln('post_attention_layernorm'),
          c.rms_norm_eps,
          `layers.${i}.post_norm`,
        );
        h = mlp(ops, c, i, h, y, down, enc, read);
      }
    }
    const out = io.outputs[0] as IoTensor;
    const last = part.finalNorm
      ? ops.rmsNorm(h, onePlus(read('norm.weight')), c.rms_norm_eps, 'final_norm')
      : h;
    g.output(last, out.name, DataType.FLOAT, out.shape);
    const kv = kvNames(io);
    const kv16Io: BackboneIo = {
      inputs: io.inputs.map((t) => (kv.inputs.includes(t.name) ? { ...t, dtype: 'float16' } : t)),
      outputs: io.outputs.map((t) =>
        kv.outputs.includes(t.name) ? { ...t, dtype: 'float16' } : t,
      ),
    };
    const written = g.finish({
      variants:
        options.kvFloat16 && kv.inputs.length > 0
          ? [
              {
                onnxPath: kvFloat16Path(outPath),
                rewrite: (graph) => withFloat16Kv(graph, kv),
                metadata: {
                  'clef.backbone.io': JSON.stringify(kv16Io),
                  'clef.backbone.kv': 'float16',
                },
              },
            ]
          : [],
      outputOrder: io.outputs.map((t) => t.name),
      metadata: {
        'clef.backbone.io': JSON.stringify(io),
        'clef.backbone.dtype': options.dtype,
        'clef.backbone.layer_encodings': encodings.join(','),
        ...(whole ? {} : { 'clef.backbone.part': JSON.stringify(part) }),
      },
    });
    return { ...written, io, layerEncodings: encodings };
  } catch (error) {
    g.abort();
    throw error;
  }
}

/** fp32 and fp16 keep their precision; quantised variants gather from an int8 table. */
export function defaultEmbedding(dtype: BackboneDType): EmbeddingEncoding {
  return dtype === 'fp32' || dtype === 'fp16' ? dtype : 'q8';
}

/** Qwen3.5's RMSNorm scales by (1 + weight). */
function onePlus(w: Float32Array): Float32Array {
  return Float32Array.from(w, (v) => 1 + v);
}

/** h + the SwiGLU MLP of x (down_proj already read). */
function mlp(
  ops: BackboneOps,
  c: Qwen35TextConfig,
  i: number,
  h: string,
  x: string,
  down: Float32Array,
  enc: LinearEncoding,
  read: (name: string) => Float32Array,
): string {
  const H = c.hidden_size;
  const I = c.intermediate_size;
  const p = `layers.${i}.mlp`;
  const gate = ops.linear(x, read(`${p}.gate_proj.weight`), I, H, enc, `${p}.gate_proj`);
  const up = ops.linear(x, read(`${p}.up_proj.weight`), I, H, enc, `${p}.up_proj`);
  return ops.addLinear(h, ops.mul(ops.silu(gate), up), down, H, I, enc, `${p}.down_proj`);
}

/** Embedding table storage. q8/q4: com.microsoft.GatherBlockQuantized, blocks of 32 along hidden. */
export type EmbeddingEncoding = 'fp32' | 'fp16' | 'q8' | 'q4';

/** Gather on the embedding table, written a few thousand rows at a time. */
function embed(ops: BackboneOps, release: Release, name: string, enc: EmbeddingEncoding): string {
  const g = ops.g;
  const [vocab, hidden] = release.info(name).shape as [number, number];
  const rowsPerChunk = Math.max(1, Math.floor(2 ** 22 / hidden));
  function* pieces<T extends ArrayBufferView>(encode: (rows: Float32Array, n: number) => T) {
    for (let start = 0; start < vocab; start += rowsPerChunk) {
      const n = Math.min(rowsPerChunk, vocab - start);
      yield encode(release.readRows(name, start, n), n);
    }
  }
  if (enc === 'fp32' || enc === 'fp16') {
    const fp16 = enc === 'fp16';
    const type = fp16 ? DataType.FLOAT16 : DataType.FLOAT;
    const chunks = pieces((rows) => (fp16 ? toFloat16Array(rows) : rows));
    const table = g.initializerFromChunks('embed_tokens', type, [vocab, hidden], chunks);
    const rows = g.op('Gather', [table, 'input_ids'], { axis: attr.int(0) });
    return fp16 ? g.op('Cast', [rows], { to: attr.int(DataType.FLOAT) }) : rows;
  }
  // Same block layout as MatMulNBits with N = vocab, K = hidden: row-major [vocab, hidden·bits/8].
  const bits = enc === 'q8' ? 8 : 4;
  if (hidden % QUANT_BLOCK_SIZE !== 0) throw new Error('q8/q4 embedding needs hidden % 32 == 0');
  const blocks = hidden / QUANT_BLOCK_SIZE;
  const zpCols = Math.ceil((blocks * bits) / 8);
  // Three passes over the table (data, scales, zero points), each streamed.
  const quantized = (part: 'data' | 'scales' | 'zeroPoints') =>
    pieces((rows, n) => quantizeBlocks(rows, n, hidden, bits, QUANT_BLOCK_SIZE)[part]);
  const data = g.initializerFromChunks(
    'embed_tokens.q',
    DataType.UINT8,
    [vocab, (hidden * bits) / 8],
    quantized('data'),
  );
  const scales = g.initializerFromChunks(
    'embed_tokens.scales',
    DataType.FLOAT,
    [vocab, blocks],
    quantized('scales'),
  );
  const zps = g.initializerFromChunks(
    'embed_tokens.zero_points',
    DataType.UINT8,
    [vocab, zpCols],
    quantized('zeroPoints'),
  );
  const attrs = {
    gather_axis: attr.int(0),
    quantize_axis: attr.int(1),
    block_size: attr.int(QUANT_BLOCK_SIZE),
    bits: attr.int(bits),
  };
  return g.op('GatherBlockQuantized', [data, 'input_ids', scales, zps], attrs, 'com.microsoft');
}

/**
 * Rotary cos/sin for positions P … P+T−1 and the additive causal mask [T, P+T] (0 where key
 * position ≤ query position, −1e30 elsewhere), shared by every full-attention layer of the graph.
 * P is `pastKey`'s sequence axis, T axis 1 of `sequence` (input_ids, or the residual stream).
 */
function positions(
  ops: BackboneOps,
  c: Qwen35TextConfig,
  pastKey: string,
  sequence: string,
): LayerContext {
  const g = ops.g;
  const dimAt = (x: string, axis: number) =>
    g.op('Cast', [g.op('Gather', [g.op('Shape', [x]), ops.i64([axis], [])])], {
      to: attr.int(DataType.FLOAT),
    });
  const past = dimAt(pastKey, 2);
  const total = ops.add(past, dimAt(sequence, 1));
  const one = ops.f32([1]);
  const queryPos = g.op('Range', [past, total, one]);
  const keyPos = g.op('Range', [ops.f32([0]), total, one]);
  const column = ops.reshape(queryPos, [-1, 1]);
  const rotaryDim = Math.floor(c.head_dim * c.partial_rotary_factor);
  const invFreq = Array.from(
    { length: rotaryDim / 2 },
    (_, j) => 1 / c.rope_theta ** ((2 * j) / rotaryDim),
  );
  const angles = ops.mul(column, ops.f32(invFreq));
  const allowed = g.op('LessOrEqual', [keyPos, column]);
  return {
    cos: g.op('Cos', [angles]),
    sin: g.op('Sin', [angles]),
    mask: g.op('Where', [allowed, ops.f32([0]), ops.f32([-1e30])]),
    rotaryDim,
  };
}
