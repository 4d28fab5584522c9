/**
 * Reads the converter's graph description from the manifest: which backbone inputs are running
 * state, which output feeds each, and the empty state's shape.
 */
import { PackageError } from '../wire/errors.js';
import {
  filesWithRole,
  type BackboneGroupEntry,
  type IoTensorEntry,
  type KvDtype,
  type ManifestFile,
  type PackageManifest,
} from './manifest.js';
import type { StateSpec } from './runner.js';

export type IoTensorSpec = IoTensorEntry;

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
const STREAM_NAMES: ReadonlySet<string> = new Set([
  'input_ids',
  'residual_in',
  'hidden',
  'residual_out',
]);

/** The KV cache's tensors: full-attention layers' past/present key and value. */
export function isKvName(name: string): boolean {
  return /^(past|present)_(key|value)\.\d+$/.test(name);
}

export function stateSpecs(spec: BackboneGraphSpec, kv: KvDtype = 'float32'): StateSpec[] {
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
        dtype: kv === 'float16' && isKvName(i.name) ? 'float16' : 'float32',
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
 * each backbone file with its group (parseManifest checked the tags). With `kv` float16 each
 * group with KV runs its kv16 graph (same data files); one without KV keeps its only graph.
 */
export function backboneGroups(
  manifest: PackageManifest,
  kv: KvDtype = 'float32',
): BackboneGroupSpec[] {
  const listed = (manifest.graphs as { backboneGroups?: BackboneGroupEntry[] }).backboneGroups;
  const plain = filesWithRole(manifest, 'backbone');
  const kv16 = kv === 'float16' ? filesWithRole(manifest, 'backbone-kv16') : [];
  if (kv === 'float16' && kv16.length === 0) {
    throw new PackageError(
      'The package has no float16-KV backbone graphs: convert it again with this version of clef-web',
    );
  }
  const data = filesWithRole(manifest, 'backbone-data');
  const make = (
    index: number,
    layers: [number, number],
    spec: BackboneGraphSpec,
    graphFile: ManifestFile | undefined,
    kvGraph: ManifestFile | undefined,
    files: ManifestFile[],
  ): BackboneGroupSpec => {
    if (!graphFile) throw new PackageError(`The package has no graph for backbone group ${index}`);
    const states = stateSpecs(spec, kv);
    if (kv === 'float16' && states.some((st) => st.dtype === 'float16') && !kvGraph) {
      throw new PackageError(`The package has no float16-KV graph for backbone group ${index}`);
    }
    const graph = kvGraph ?? graphFile;
    const input = spec.inputs.find((i) => STREAM_NAMES.has(i.name))?.name ?? 'input_ids';
    const output = spec.outputs.find((o) => STREAM_NAMES.has(o.name))?.name ?? 'hidden';
    const bytes = [graph, ...files].reduce((n, f) => n + f.bytes, 0);
    return { index, layers, graph, data: files, states, input, output, bytes };
  };
  if (!listed) {
    const spec = backboneSpec(manifest);
    return [make(0, [0, manifest.architecture.numLayers], spec, plain[0], kv16[0], data)];
  }
  return listed.map((g, k) =>
    make(
      k,
      g.layers,
      g,
      plain.find((f) => f.group === k),
      kv16.find((f) => f.group === k),
      data.filter((f) => f.group === k),
    ),
  );
}
