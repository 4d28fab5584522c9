/**
 * Reads the converter's graph description from the manifest: which backbone inputs are running
 * state, which output feeds each, and the empty state's shape.
 */
import { PackageError } from '../wire/errors.js';
import {
  filesWithRole,
  type BackboneGroupEntry,
  type ManifestFile,
  type PackageManifest,
} from './manifest.js';
import type { StateSpec } from './runner.js';

export interface IoTensorSpec {
  name: string;
  dtype: 'int64' | 'float32';
  shape: Array<number | string>;
}

export interface BackboneGraphSpec {
  inputs: IoTensorSpec[];
  outputs: IoTensorSpec[];
}

export function backboneSpec(manifest: PackageManifest): BackboneGraphSpec {
  const spec = (manifest.graphs as { backbone?: BackboneGraphSpec }).backbone;
  if (!spec || !Array.isArray(spec.inputs) || !Array.isArray(spec.outputs)) {
    throw new PackageError('The manifest does not describe the backbone graph (graphs.backbone)');
  }
  return spec;
}

/** `past_key.3` → `present_key.3`; `conv_state.0` → `present_conv_state.0`. */
export function presentName(input: string): string {
  return input.startsWith('past_') ? `present_${input.slice(5)}` : `present_${input}`;
}

/** The inputs and outputs a backbone group passes along that are not running state. */
export const STREAM_NAMES: ReadonlySet<string> = new Set([
  'input_ids',
  'residual_in',
  'hidden',
  'residual_out',
]);

export function stateSpecs(spec: BackboneGraphSpec): StateSpec[] {
  const outputs = new Set(spec.outputs.map((o) => o.name));
  return spec.inputs
    .filter((i) => !STREAM_NAMES.has(i.name))
    .map((i) => {
      const output = presentName(i.name);
      if (!outputs.has(output)) {
        throw new PackageError(`The backbone has state input ${i.name} but no output ${output}`);
      }
      // Symbolic axes (the past sequence length) start empty.
      return {
        input: i.name,
        output,
        emptyDims: i.shape.map((d) => (typeof d === 'number' ? d : 0)),
      };
    });
}

/** One backbone graph to create and run, in order: its files, its state, its stream names. */
export interface BackboneGroupSpec {
  index: number;
  /** Layers [start, end) it runs (the whole backbone for a format-1 package). */
  layers: [number, number];
  graph: ManifestFile;
  data: ManifestFile[];
  states: StateSpec[];
  /** `input_ids` (the first group) or `residual_in`. */
  input: string;
  /** `hidden` (the last group) or `residual_out`. */
  output: string;
  /** Bytes of its graph and data files: what the engine holds while it creates the session. */
  bytes: number;
}

/**
 * The backbone's groups in run order: a format-1 package is one group (its single graph and
 * every backbone-data file); a format-2 package lists them in graphs.backboneGroups and tags
 * each backbone file with its group (parseManifest checked the tags).
 */
export function backboneGroups(manifest: PackageManifest): BackboneGroupSpec[] {
  const listed = (manifest.graphs as { backboneGroups?: BackboneGroupEntry[] }).backboneGroups;
  const graphs = filesWithRole(manifest, 'backbone');
  const data = filesWithRole(manifest, 'backbone-data');
  const make = (
    index: number,
    layers: [number, number],
    spec: BackboneGraphSpec,
    graph: ManifestFile | undefined,
    files: ManifestFile[],
  ): BackboneGroupSpec => {
    if (!graph) throw new PackageError(`The package has no graph for backbone group ${index}`);
    const input = spec.inputs.find((i) => STREAM_NAMES.has(i.name))?.name ?? 'input_ids';
    const output = spec.outputs.find((o) => STREAM_NAMES.has(o.name))?.name ?? 'hidden';
    const bytes = [graph, ...files].reduce((n, f) => n + f.bytes, 0);
    return { index, layers, graph, data: files, states: stateSpecs(spec), input, output, bytes };
  };
  if (!listed) {
    const spec = backboneSpec(manifest);
    return [make(0, [0, manifest.architecture.numLayers], spec, graphs[0], data)];
  }
  return listed.map((g, k) =>
    make(
      k,
      g.layers,
      g,
      graphs.find((f) => f.group === k),
      data.filter((f) => f.group === k),
    ),
  );
}
