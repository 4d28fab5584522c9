/**
 * What converting needs from a runtime, handed in by the caller: the build tools import none.
 * In Node, src/node/build-runtime.ts hands in onnxruntime-node and the Node engine; the page's
 * train worker hands in nothing and asks for neither step (no WASM-prepared graphs, no fidelity
 * requests: it verifies through its own engine).
 */
import type { FidelityEngine } from '../verify/fidelity.js';

/** The part of onnxruntime-node the WASM-prepared graphs use: its optimiser, and its version. */
export interface OrtOptimizer {
  readonly env: { readonly versions?: { readonly node?: string } };
  readonly InferenceSession: {
    create(
      path: string,
      options: {
        executionProviders: string[];
        graphOptimizationLevel: 'extended';
        optimizedModelFilePath: string;
        intraOpNumThreads: number;
        extra: Record<string, unknown>;
      },
    ): Promise<{ release(): Promise<void> }>;
  };
}

export interface ConvertRuntime {
  /** onnxruntime-node, for the WASM-prepared graphs; `why` says what needs it if it is missing. */
  loadOrt(why: string): Promise<OrtOptimizer>;
  /** The onnxruntime-web version the engine runs: a graph fused by another may not run on it. */
  readonly ortVersion: string;
  /** A converted package, opened to measure its fidelity on. */
  openPackage(dir: string, options: { threads?: number }): Promise<FidelityEngine>;
}

/** The refusal when a step needs a runtime nobody handed in. */
export function noRuntime(step: string, skip: string): Error {
  return new Error(
    `${step} needs a runtime handed in (in Node, clef-web/node's convertRelease hands in onnxruntime-node); ${skip} skips it`,
  );
}
