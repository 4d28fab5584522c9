/**
 * How long a device takes to a package's first answer, estimated from the manifest and the
 * device's measured speeds (its descriptor's `cost`, in devices.ts): what `auto` orders the CPU
 * devices by. The figures come from `npm run bench:js` (tools/bench/js-device.ts) and are written
 * down in docs/benchmarks.md with the machine they were measured on.
 *
 *   first answer ≈ start + load + one decision of `tokens` tokens
 *   start        the runtime's download, compile and start (0 for the js device)
 *   load         session creation: a fixed part, and a part per MiB of graph files
 *   decision     fixed part
 *                + tokens × linear weights × per-weight cost                (the products)
 *                + Σ over the chunks of (chunk tokens × keys) × hidden × full-attention layers
 *                + tokens × hidden × layers × per-unit cost       (norms, gates, the small ops)
 *                + tokens × hidden × linear-attention layers × per-unit cost (the recurrence)
 * An onnxruntime CPU device's per-token terms are divided by its threads (as if it scaled
 * perfectly: the estimate never flatters the js device, which runs on one).
 */

export interface DeviceCost {
  /** The runtime's download, compile and start before any session (ms, fresh profile). */
  readonly startMs: number;
  /** Session creation: its fixed part (ms), and per MiB of graph files (ms). */
  readonly loadFixedMs: number;
  readonly loadMsPerMiB: number;
  /** A decision's fixed part: the head graph, the runs' overheads (ms). */
  readonly decisionMs: number;
  /** The backbone's linear layers: ms per token per million weights. */
  readonly tokenMsPerMWeight: number;
  /** Full attention: ns per query × key × hidden unit, per full-attention layer. */
  readonly attentionNsPerUnit: number;
  /** Every layer's small ops: ns per token × hidden unit, per layer. */
  readonly layerNsPerUnit: number;
  /** The Gated DeltaNet recurrence: ns per token × hidden unit, per linear-attention layer. */
  readonly recurrenceNsPerUnit: number;
  /** Its per-token terms shrink with threads (onnxruntime's WASM); the js device has one. */
  readonly threaded: boolean;
}

/** The part of a manifest the estimate reads (structural: a PackageManifest fits). */
export interface CostManifest {
  architecture: { vocabSize: number; hiddenSize: number; layerTypes: readonly string[] };
  variant: { dtype: string; largestTensor?: { name: string; bytes: number } };
  files: ReadonlyArray<{ role: string; bytes: number }>;
}

export interface CostFacts {
  /** Bytes of graph files a session is created from (backbone, head). */
  graphBytes: number;
  /** Linear weights a token multiplies in the backbone (the embedding excluded). */
  weights: number;
  layers: number;
  attentionLayers: number;
  linearLayers: number;
  hidden: number;
}

/** Stored bytes per linear weight of each dtype (q8/q4: data, float32 scale, zero point). */
const BYTES_PER_WEIGHT: Record<string, number> = {
  fp32: 4,
  fp16: 2,
  q8: 1 + 5 / 32,
  q4: 0.5 + 4.5 / 32,
  mixed: 0.5 + 4.5 / 32,
};

/**
 * A request of this many tokens is what `auto` estimates the first answer for: the prompts the
 * issue that introduced the js device measured on a trained helpdesk model were 270 to 440.
 */
export const ESTIMATE_TOKENS = 400;

export function costFacts(m: CostManifest): CostFacts {
  const bytesOf = (roles: readonly string[]) =>
    m.files.filter((f) => roles.includes(f.role)).reduce((n, f) => n + f.bytes, 0);
  const backbone = bytesOf(['backbone-data']);
  const { vocabSize, hiddenSize } = m.architecture;
  // The embedding table is the largest tensor of a Clef package; without the manifest's word on
  // it, a float32 table is assumed (the most a converter writes).
  const largest = m.variant.largestTensor;
  const embedding = largest?.name.startsWith('embed_tokens')
    ? largest.bytes
    : vocabSize * hiddenSize * 4;
  const perWeight = BYTES_PER_WEIGHT[m.variant.dtype] ?? 4;
  return {
    graphBytes: bytesOf(['backbone', 'backbone-data', 'head-memory', 'head-decide', 'head-data']),
    weights: Math.max(0, backbone - embedding) / perWeight,
    layers: m.architecture.layerTypes.length,
    attentionLayers: m.architecture.layerTypes.filter((t) => t === 'full_attention').length,
    linearLayers: m.architecture.layerTypes.filter((t) => t === 'linear_attention').length,
    hidden: hiddenSize,
  };
}

/** Σ over 256-token chunks of chunk length × keys so far (the runner's chunking). */
export function attentionPairs(tokens: number, chunk = 256): number {
  let pairs = 0;
  for (let start = 0; start < tokens; start += chunk) {
    const end = Math.min(start + chunk, tokens);
    pairs += (end - start) * end;
  }
  return pairs;
}

/**
 * The per-token features a decision's time is linear in (the bench fits the costs to them):
 * [1, tokens·weights/1e6, pairs·hidden·attention layers/1e6, tokens·hidden·layers/1e6,
 * tokens·hidden·linear layers/1e6].
 */
export function decisionFeatures(facts: CostFacts, tokens: number): number[] {
  return [
    1,
    (tokens * facts.weights) / 1e6,
    (attentionPairs(tokens) * facts.hidden * facts.attentionLayers) / 1e6,
    (tokens * facts.hidden * facts.layers) / 1e6,
    (tokens * facts.hidden * facts.linearLayers) / 1e6,
  ];
}

/** The estimated decision of `tokens` tokens (ms), the prefix cache cold, on `threads` threads. */
export function decisionMs(
  cost: DeviceCost,
  facts: CostFacts,
  tokens: number,
  threads = 1,
): number {
  const [, products, attention, layers, recurrence] = decisionFeatures(facts, tokens) as [
    number,
    number,
    number,
    number,
    number,
  ];
  const perToken =
    products * cost.tokenMsPerMWeight +
    attention * cost.attentionNsPerUnit +
    layers * cost.layerNsPerUnit +
    recurrence * cost.recurrenceNsPerUnit;
  return cost.decisionMs + (cost.threaded ? perToken / Math.max(1, threads) : perToken);
}

/** The estimated first answer (ms): start, load and one decision of `tokens` tokens. */
export function firstAnswerMs(
  cost: DeviceCost,
  facts: CostFacts,
  tokens = ESTIMATE_TOKENS,
  threads = 1,
): number {
  const load = cost.loadFixedMs + (facts.graphBytes / 2 ** 20) * cost.loadMsPerMiB;
  return cost.startMs + load + decisionMs(cost, facts, tokens, threads);
}

// Measured: placeholders until `npx tsx tools/bench/js-device.ts` fills them in
// (docs/benchmarks.md).
export const WASM_COST: DeviceCost = {
  startMs: 850,
  loadFixedMs: 0,
  loadMsPerMiB: 117,
  decisionMs: 14,
  tokenMsPerMWeight: 0.15,
  attentionNsPerUnit: 0.68,
  layerNsPerUnit: 0,
  recurrenceNsPerUnit: 0,
  threaded: true,
};

export const JS_COST: DeviceCost = {
  startMs: 0,
  loadFixedMs: 0,
  loadMsPerMiB: 15,
  decisionMs: 20,
  tokenMsPerMWeight: 0.21,
  attentionNsPerUnit: 1.8,
  layerNsPerUnit: 0,
  recurrenceNsPerUnit: 0,
  threaded: false,
};

/**
 * WebGPU: its runtime start (the asyncify wasm) is measured; its speed on a real GPU is not (this
 * machine has only SwiftShader), so its per-token costs are 0: `auto` prefers another device to
 * a hardware GPU only when that device answers before the GPU's runtime has even started.
 */
export const WEBGPU_COST: DeviceCost = {
  startMs: 1000,
  loadFixedMs: 0,
  loadMsPerMiB: 0,
  decisionMs: 0,
  tokenMsPerMWeight: 0,
  attentionNsPerUnit: 0,
  layerNsPerUnit: 0,
  recurrenceNsPerUnit: 0,
  threaded: true,
};
