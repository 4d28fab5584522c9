/**
 * How long a device takes to a package's first answer, estimated from the manifest and the
 * device's measured speeds (its descriptor's `cost`, in devices.ts): what `auto` orders the CPU
 * devices by. The figures come from `npm run bench:js` (tools/bench/js-device.ts) and are written
 * down in docs/benchmarks.md with the machine they were measured on.
 *
 *   first answer ≈ start + load + one decision of `tokens` tokens
 *   start        the runtime's download, compile and start (0 for the js device)
 *   load         session creation, per MiB of graph files
 *   decision     fixed part + tokens × linear weights × per-weight cost
 *                + attention: Σ over the chunks of (chunk tokens × keys) × hidden × layers
 */

export interface DeviceCost {
  /** The runtime's download, compile and start before any session (ms, fresh profile). */
  readonly startMs: number;
  /** Session creation per MiB of graph files (ms). */
  readonly loadMsPerMiB: number;
  /** A decision's fixed part: the head graph, the runs' overheads (ms). */
  readonly decisionMs: number;
  /** The backbone's linear layers: ms per token per million weights. */
  readonly tokenMsPerMWeight: number;
  /** Full attention: ns per query × key × hidden unit, per full-attention layer. */
  readonly attentionNsPerUnit: number;
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
  attentionLayers: number;
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
    attentionLayers: m.architecture.layerTypes.filter((t) => t === 'full_attention').length,
    hidden: hiddenSize,
  };
}

/** Σ over 256-token chunks of chunk length × keys so far (the runner's chunking). */
function attentionPairs(tokens: number, chunk = 256): number {
  let pairs = 0;
  for (let end = Math.min(chunk, tokens), start = 0; start < tokens;) {
    pairs += (end - start) * end;
    start = end;
    end = Math.min(end + chunk, tokens);
  }
  return pairs;
}

/** The estimated decision of `tokens` tokens (ms), the prefix cache cold. */
export function decisionMs(cost: DeviceCost, facts: CostFacts, tokens: number): number {
  const linear = tokens * (facts.weights / 1e6) * cost.tokenMsPerMWeight;
  const attention =
    (attentionPairs(tokens) * facts.hidden * facts.attentionLayers * cost.attentionNsPerUnit) / 1e6;
  return cost.decisionMs + linear + attention;
}

/** The estimated first answer (ms): start, load and one decision of `tokens` tokens. */
export function firstAnswerMs(
  cost: DeviceCost,
  facts: CostFacts,
  tokens = ESTIMATE_TOKENS,
): number {
  const load = (facts.graphBytes / 2 ** 20) * cost.loadMsPerMiB;
  return cost.startMs + load + decisionMs(cost, facts, tokens);
}

// Measured: placeholders until `npm run bench:js` fills them in (docs/benchmarks.md).
export const WASM_COST: DeviceCost = {
  startMs: 700,
  loadMsPerMiB: 60,
  decisionMs: 5,
  tokenMsPerMWeight: 0.5,
  attentionNsPerUnit: 0.5,
};

export const JS_COST: DeviceCost = {
  startMs: 0,
  loadMsPerMiB: 10,
  decisionMs: 5,
  tokenMsPerMWeight: 2,
  attentionNsPerUnit: 2,
};

/**
 * WebGPU: its runtime start (the asyncify wasm) is measured; its speed on a real GPU is not (this
 * machine has only SwiftShader), so its per-token costs are 0: `auto` prefers another device to
 * a hardware GPU only when that device answers before the GPU's runtime has even started.
 */
export const WEBGPU_COST: DeviceCost = {
  startMs: 1000,
  loadMsPerMiB: 60,
  decisionMs: 0,
  tokenMsPerMWeight: 0,
  attentionNsPerUnit: 0,
};
