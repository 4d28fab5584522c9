/**
 * The build tools (src/build) with the Node runtime handed in: onnxruntime-node for the
 * WASM-prepared graphs, the Node engine for the fidelity pass. These are what `clef-web/node`
 * exports and the CLIs run; the tools themselves import no runtime.
 */
import type { PackageManifest } from '../core/manifest.js';
import { convertRelease as convertWith, type ConvertOptions } from '../build/convert/package.js';
import type { ConvertRuntime } from '../build/convert/runtime.js';
import { addWasmGraphs as addWasmGraphsWith } from '../build/convert/wasm-graphs.js';
import {
  measureFidelity as measureWith,
  type FidelityBaseline,
  type FidelityOptions,
  type FidelityReport,
} from '../build/verify/fidelity.js';
import { loadNodePackage } from './engine.js';
import { loadOrtNode, ORT_NODE_VERSION } from './ort-node.js';

export const nodeBuildRuntime: ConvertRuntime = {
  loadOrt: (why) => loadOrtNode(why),
  ortVersion: ORT_NODE_VERSION,
  openPackage: (dir, options) => loadNodePackage(dir, options),
};

/** A Clef release directory converted to a browser package (src/build/convert/package.ts). */
export function convertRelease(
  releaseDir: string,
  outDir: string,
  options: ConvertOptions,
): Promise<PackageManifest> {
  return convertWith(releaseDir, outDir, options, nodeBuildRuntime);
}

/** How closely a package reproduces a release or another package (src/build/verify/fidelity.ts). */
export function measureFidelity(
  packageDir: string,
  against: FidelityBaseline,
  options: FidelityOptions,
): Promise<FidelityReport> {
  return measureWith(packageDir, against, options, nodeBuildRuntime.openPackage);
}

/** Adds the WASM-prepared graphs to a package converted without them, in place. */
export function addWasmGraphs(dir: string, log: (line: string) => void): Promise<number> {
  return addWasmGraphsWith(dir, log, nodeBuildRuntime);
}
