/**
 * The engine's defaults, one set for the browser and Node: how many backbone tokens one run
 * takes, and how much memory the prefix cache may hold.
 */
import type { PackageManifest } from './manifest.js';

/** Backbone tokens per run: bounds the activations' and attention scores' memory. */
export const DEFAULT_CHUNK_TOKENS = 256;

/** Memory the prefix cache may hold (createClef's cacheBudgetBytes, the Node engine's too). */
export const DEFAULT_CACHE_BUDGET_BYTES = 256 * 2 ** 20;

/** The chunk size a package asks for (`graphs.chunkTokens`), else the default. */
export function packageChunkTokens(manifest: PackageManifest): number {
  return Number((manifest.graphs as { chunkTokens?: number }).chunkTokens) || DEFAULT_CHUNK_TOKENS;
}
