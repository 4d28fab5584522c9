/**
 * Reads the converter's graph description from the manifest: which backbone inputs are running
 * state, which output feeds each, and the empty state's shape.
 */
import { PackageError } from '../wire/errors.js';
import type { PackageManifest } from './manifest.js';
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

export function stateSpecs(spec: BackboneGraphSpec): StateSpec[] {
  const outputs = new Set(spec.outputs.map((o) => o.name));
  return spec.inputs
    .filter((i) => i.name !== 'input_ids')
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
