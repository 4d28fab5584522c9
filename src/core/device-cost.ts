/**
 * How long a device takes to a page's first answers on a package, estimated from the manifest
 * and the device's measured speeds (its descriptor's `cost`, in devices.ts): what `auto` weighs
 * the js device against onnxruntime's by. The figures are measured by tools/bench/js-device.ts
 * and written down in docs/benchmarks.md with the machine they were measured on.
 *
 *   first answers ≈ start + load + ESTIMATE_ANSWERS decisions of ESTIMATE_TOKENS tokens
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
 * `auto` estimates a page's first ESTIMATE_ANSWERS answers to requests of ESTIMATE_TOKENS tokens:
 * the prompts measured on a trained helpdesk model when the js device was introduced were 270
 * to 440 tokens. Five answers, not one: a device that starts at once but decides four times
 * slower (a mid-size model on the js device) loses from the second or third answer on, and a
 * page rarely asks one question.
 */
export const ESTIMATE_TOKENS = 400;
export const ESTIMATE_ANSWERS = 5;

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

/** The estimated time to the first `answers` answers (ms): start, load and the decisions. */
export function firstAnswersMs(
  cost: DeviceCost,
  facts: CostFacts,
  { tokens = ESTIMATE_TOKENS, answers = ESTIMATE_ANSWERS, threads = 1 } = {},
): number {
  const load = cost.loadFixedMs + (facts.graphBytes / 2 ** 20) * cost.loadMsPerMiB;
  return cost.startMs + load + answers * decisionMs(cost, facts, tokens, threads);
}

// Measured by tools/bench/js-device.ts on 2026-12-02 (docs/benchmarks.md, "The js device (issue
// 39)"): Chromium 156 on this 2-core machine (so WASM ran on one thread), the fastest of three
// visits each. Start: the runtime's import and init. Load: session creation over clef-nano, the
// tiny fixture and a 3.4 M-weight release. Decisions: fixed part and attention from clef-nano
// (full attention only) at 523 and 2,346 tokens; per-weight and recurrence from the tiny and
// 3.4 M-weight releases (linear attention) at 569 tokens; their 2,767-token decisions checked
// (js 1.3 s and 3.3 s measured, 1.0 s and 4.5 s estimated). Those packages cannot separate the js
// device's per-weight cost (fitted 0.051) from its small ops: it is held at WASM's, so bigger
// packages are never estimated in the js device's favour on that account.
export const WASM_COST: DeviceCost = {
  startMs: 700,
  loadFixedMs: 138,
  loadMsPerMiB: 2.1,
  decisionMs: 4.6,
  tokenMsPerMWeight: 0.09,
  attentionNsPerUnit: 0.4,
  layerNsPerUnit: 0,
  recurrenceNsPerUnit: 174,
  threaded: true,
};

export const JS_COST: DeviceCost = {
  startMs: 0,
  loadFixedMs: 33,
  loadMsPerMiB: 2,
  decisionMs: 5.8,
  tokenMsPerMWeight: 0.09,
  attentionNsPerUnit: 0.87,
  layerNsPerUnit: 0,
  recurrenceNsPerUnit: 1430,
  threaded: false,
};

/**
 * WebGPU: its runtime's start (the asyncify wasm, 27 MB, twice WASM's) is estimated as twice
 * WASM's; its speed on a real GPU is not measured (this machine has only SwiftShader), so its
 * session creation and per-token costs are 0: `auto` puts the js device before a hardware GPU
 * only when the js device's first answers come before the GPU's runtime has even started.
 */
export const WEBGPU_COST: DeviceCost = {
  startMs: 2 * WASM_COST.startMs,
  loadFixedMs: 0,
  loadMsPerMiB: 0,
  decisionMs: 0,
  tokenMsPerMWeight: 0,
  attentionNsPerUnit: 0,
  layerNsPerUnit: 0,
  recurrenceNsPerUnit: 0,
  threaded: true,
};
