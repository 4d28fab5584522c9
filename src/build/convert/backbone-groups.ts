/**
 * A backbone too big to hand onnxruntime in one piece, written as several graphs run in order:
 * the engine fetches one group, creates its session and lets its bytes go before it
 * fetches the next, so a page never holds much more than one group's bytes beside the runtime's
 * own copy. Group 0 is the embedding alone; then groups of consecutive layers, the residual
 * stream (float32 [1, T, hidden]) passing from `residual_out` to the next group's `residual_in`;
 * the last group applies the final norm and outputs `hidden`. Each group carries only its own
 * layers' state inputs and outputs, named as in the single graph (global layer index).
 *
 * Where a group ends, the single graph has `Add` (the residual) feeding the next layer's input
 * RMSNorm, written as plain ops (Mul, ReduceMean, Add, Sqrt, Reciprocal, Mul). onnxruntime's
 * fusions that could cross that edge (SkipSimplifiedLayerNormalization, SkipLayerNormalization)
 * match Pow/Div or LayerNormalization patterns the converter never writes, so each group
 * computes exactly what the same nodes compute inside the single graph; the tests hold every
 * runtime to that, byte for byte.
 */
import { basename, join } from '../host/paths.js';
import type { Qwen35TextConfig, Release } from '../release.js';
import type { WrittenModel } from '../onnx/graph.js';
import {
  buildBackboneOnnx,
  defaultEmbedding,
  layerEncodings,
  wholeBackbone,
  type BackboneIo,
  type BackboneOptions,
  type BackbonePart,
  type EmbeddingEncoding,
} from './backbone.js';
import type { LinearEncoding } from './backbone-ops.js';
import { QUANT_BLOCK_SIZE } from './backbone-ops.js';

/**
 * `auto` splits only a backbone whose weights pass AUTO_SPLIT_ABOVE_BYTES; a number is the most
 * bytes of weights one layer group may hold (0: never split); a list gives each layer group's
 * number of layers.
 */
export type BackboneGrouping = 'auto' | number | readonly number[];

/**
 * Above 1 GiB of backbone weights the page's copy of the fetched bytes (held until
 * InferenceSession.create returns) starts to matter beside the runtime's own copy: split.
 * Smaller backbones (clef-nano, the tiny fixtures) stay one graph.
 */
export const AUTO_SPLIT_ABOVE_BYTES = 2 ** 30;
/**
 * Layer groups of at most 512 MiB: Clef-flash q4 (≈ 115 MB a layer) becomes 8 groups of 4
 * layers beside the embedding's group, so the page holds at most ≈ 0.5 GB of package bytes on
 * top of the runtime's copy instead of the whole ≈ 5 GB. Smaller groups would cut that bound
 * further but add a session (a run per chunk, its creation, its state I/O) per group; 512 MiB
 * is a tenth of the weights at ≈ 10 sessions.
 */
export const AUTO_GROUP_BYTES = 512 * 2 ** 20;

export interface PlannedGroup extends BackbonePart {
  /** Estimated weight bytes (the plan's unit; the manifest lists the real file sizes). */
  bytes: number;
}

export interface BuiltGroup extends WrittenModel {
  part: BackbonePart;
  io: BackboneIo;
}

/** Stored bytes per weight for a linear encoding (q8/q4: data, fp32 scales, zero points). */
function bytesPerWeight(enc: LinearEncoding | EmbeddingEncoding): number {
  const perBlock = 4 / QUANT_BLOCK_SIZE;
  if (enc === 'fp32') return 4;
  if (enc === 'fp16') return 2;
  if (enc === 'q8') return 1 + perBlock + 1 / QUANT_BLOCK_SIZE;
  return 0.5 + perBlock + 0.5 / QUANT_BLOCK_SIZE;
}

/** Estimated stored bytes of each layer and of the embedding table, from the release's shapes. */
export function estimateBackboneBytes(
  release: Release,
  options: BackboneOptions,
): { embedding: number; layers: number[] } {
  const c = release.text;
  const prefix = release.has('model.language_model.embed_tokens.weight')
    ? 'model.language_model.'
    : 'model.';
  const encodings = layerEncodings(options.dtype, c.num_hidden_layers, options.q8Layers);
  const count = (name: string) => release.info(name).shape.reduce((a, b) => a * b, 1);
  const layers = encodings.map((enc, i) => {
    let bytes = 0;
    for (const name of release.names()) {
      if (!name.startsWith(`${prefix}layers.${i}.`)) continue;
      // Matrices take the layer's encoding; norms, conv taps and gates stay fp32.
      const matrix = release.info(name).shape.length === 2;
      bytes += count(name) * (matrix ? bytesPerWeight(enc) : 4);
    }
    return Math.ceil(bytes);
  });
  const table = count(`${prefix}embed_tokens.weight`);
  const embedding = Math.ceil(
    table * bytesPerWeight(options.embedding ?? defaultEmbedding(options.dtype)),
  );
  return { embedding, layers };
}

/** The groups a backbone is written as: one whole graph, or the embedding then layer groups. */
export function planBackboneGroups(
  text: Qwen35TextConfig,
  estimate: { embedding: number; layers: number[] },
  grouping: BackboneGrouping = 'auto',
): PlannedGroup[] {
  const n = text.num_hidden_layers;
  const total = estimate.embedding + estimate.layers.reduce((a, b) => a + b, 0);
  const whole: PlannedGroup[] = [{ ...wholeBackbone(text), bytes: total }];
  let sizes: number[];
  if (Array.isArray(grouping)) {
    sizes = [...(grouping as readonly number[])];
    if (
      sizes.some((k) => !Number.isInteger(k) || k < 1) ||
      sizes.reduce((a, b) => a + b, 0) !== n
    ) {
      throw new Error(
        `backbone groups [${sizes.join(', ')}] must be positive and sum to ${n} layers`,
      );
    }
  } else {
    const limit =
      grouping === 'auto' ? (total > AUTO_SPLIT_ABOVE_BYTES ? AUTO_GROUP_BYTES : 0) : grouping;
    if (typeof limit !== 'number' || !(limit >= 0)) {
      throw new Error(`backbone group bytes must be 0 or more, not ${String(grouping)}`);
    }
    if (limit === 0) return whole;
    // Greedy: consecutive layers while they fit (a layer above the limit gets a group alone).
    sizes = [];
    let bytes = 0;
    estimate.layers.forEach((b, i) => {
      if (i > 0 && bytes + b <= limit) {
        sizes[sizes.length - 1]! += 1;
        bytes += b;
      } else {
        sizes.push(1);
        bytes = b;
      }
    });
  }
  const groups: PlannedGroup[] = [
    { embed: true, layers: [0, 0], finalNorm: false, bytes: estimate.embedding },
  ];
  let start = 0;
  sizes.forEach((k, g) => {
    const bytes = estimate.layers.slice(start, start + k).reduce((a, b) => a + b, 0);
    const finalNorm = g === sizes.length - 1;
    groups.push({ embed: false, layers: [start, start + k], finalNorm, bytes });
    start += k;
  });
  return groups;
}

/** The file a group's graph goes to: `backbone.onnx` when whole, else `backbone-g<k>.onnx`. */
function groupFileName(groups: number, k: number): string {
  return groups === 1 ? 'backbone.onnx' : `backbone-g${k}.onnx`;
}

/** Writes each planned group's graph (and external data) into `outDir`, in order. */
export function buildBackboneGroups(
  release: Release,
  outDir: string,
  options: BackboneOptions,
  plan: readonly PlannedGroup[],
): { groups: BuiltGroup[]; layerEncodings: LinearEncoding[] } {
  const groups: BuiltGroup[] = [];
  let encodings: LinearEncoding[] = [];
  plan.forEach((planned, k) => {
    const part: BackbonePart = {
      embed: planned.embed,
      layers: planned.layers,
      finalNorm: planned.finalNorm,
    };
    const built = buildBackboneOnnx(
      release,
      join(outDir, groupFileName(plan.length, k)),
      options,
      part,
    );
    encodings = built.layerEncodings;
    groups.push({
      onnxPath: built.onnxPath,
      dataPaths: built.dataPaths.map((p) => join(outDir, basename(p))),
      onnxBytes: built.onnxBytes,
      dataBytes: built.dataBytes,
      largestTensor: built.largestTensor,
      variants: built.variants,
      part,
      io: built.io,
    });
  });
  return { groups, layerEncodings: encodings };
}
