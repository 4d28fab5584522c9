/**
 * Which graph files a session creates on a device, and so which ones its load never fetches:
 * the KV precision picks a backbone graph per group (kv-choice.ts), and on WASM a graph with a
 * WASM-prepared twin (role `wasm-graph`) is created from the twin, without optimising it again.
 * Pure: the host asks it once the manifest is known, the session when it creates each graph.
 */
import { backboneGroups } from '../core/graph-spec.js';
import {
  PREPARABLE_ROLES,
  requireFile,
  wasmTwin,
  type KvDtype,
  type ManifestFile,
  type PackageManifest,
} from '../core/manifest.js';
import { deviceOf, type DeviceName } from '../core/devices.js';

/** onnxruntime's graph optimisation level for a session. */
export type OptimizationLevel = 'all' | 'disabled';

export interface GraphToCreate {
  file: ManifestFile;
  /** 'disabled' for a prepared graph: the converter ran onnxruntime's optimiser already. */
  optimization: OptimizationLevel;
  prepared: boolean;
}

/** The file to create for `graph` on `device`; `usePrepared` false keeps the package graph. */
export function graphFor(
  m: PackageManifest,
  graph: ManifestFile,
  device: DeviceName,
  usePrepared: boolean,
): GraphToCreate {
  const twin = deviceOf(device).preparedGraphs && usePrepared ? wasmTwin(m, graph) : undefined;
  return twin
    ? { file: twin, optimization: 'disabled', prepared: true }
    : { file: graph, optimization: 'all', prepared: false };
}

/** The package's graph files a session on `device` at `kv` never creates (so never fetches). */
export function unusedGraphs(
  m: PackageManifest,
  device: DeviceName,
  kv: KvDtype,
  usePrepared: boolean,
): string[] {
  const sources = [
    ...backboneGroups(m, kv).map((g) => g.graph),
    requireFile(m, 'head-memory'),
    requireFile(m, 'head-decide'),
  ];
  const used = new Set(sources.map((g) => graphFor(m, g, device, usePrepared).file.path));
  return m.files
    .filter((f) => (PREPARABLE_ROLES.has(f.role) || f.role === 'wasm-graph') && !used.has(f.path))
    .map((f) => f.path);
}
