/**
 * WASM-prepared graphs: a graph the WASM back end runs, optimised once here by onnxruntime-node
 * at level 'extended' (the fusions and constant folding onnxruntime-web would otherwise redo in
 * wasm on every page load, a third to a half of a cold session creation: docs/benchmarks.md),
 * written beside the original as `<name>.wasm.onnx`. Its initializers point into the original's
 * data files, so the package gains a few hundred KB, not a second copy of the weights; the
 * engine creates it at graphOptimizationLevel 'disabled' on WASM only ('extended' is the CPU
 * execution provider's level, which WebGPU's kernels do not share).
 */
import {
  closeSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  tmpdir,
  writeFileSync,
} from '../host/files.js';
import { dirname, join } from '../host/paths.js';
import { readExactly } from '../safetensors.js';
import { readFields, wire, writeFields, type WireField } from '../onnx/wire.js';
import type { OrtOptimizer } from './runtime.js';
import { NODE_CPU } from '../../core/devices.js';

// Field numbers in onnx.proto.
const MODEL_GRAPH = 7;
const GRAPH_INITIALIZER = 5;
const TENSOR_NAME = 8;
const TENSOR_RAW_DATA = 9;
const TENSOR_EXTERNAL_DATA = 13;
const TENSOR_DATA_LOCATION = 14;
const ENTRY_KEY = 1;
const ENTRY_VALUE = 2;
const EXTERNAL = 1n;

/** A new or changed initializer up to this size goes inline; a bigger one stops preparing. */
export const PREPARED_INLINE_LIMIT_BYTES = 1024 * 1024;

export interface ExternalRef {
  location: string;
  offset: number;
  length: number;
}

export type PrepareResult =
  | { prepared: true; onnxPath: string; inlined: number; shared: number }
  | { prepared: false; reason: string };

/** A TensorProto's name and, when its data is external, where it is. */
function tensorRef(fields: WireField[]): { name: string; external: ExternalRef | null } {
  const name = wire.text(fields.find((f) => f.no === TENSOR_NAME)) ?? '';
  const location = fields.find((f) => f.no === TENSOR_DATA_LOCATION)?.int;
  if (location !== EXTERNAL) return { name, external: null };
  const entries = new Map<string, string>();
  for (const f of fields.filter((x) => x.no === TENSOR_EXTERNAL_DATA)) {
    const kv = readFields(f.bytes!);
    entries.set(
      wire.text(kv.find((x) => x.no === ENTRY_KEY)) ?? '',
      wire.text(kv.find((x) => x.no === ENTRY_VALUE)) ?? '',
    );
  }
  const length = entries.get('length');
  if (!entries.has('location') || length === undefined) {
    throw new Error(`initializer ${name}: external data without a location or length`);
  }
  return {
    name,
    external: {
      location: entries.get('location')!,
      offset: Number(entries.get('offset') ?? 0),
      length: Number(length),
    },
  };
}

/** Every initializer of a model file whose data is external, by name. */
export function externalInitializers(onnx: Uint8Array): Map<string, ExternalRef> {
  const graph = readFields(onnx).find((f) => f.no === MODEL_GRAPH);
  const out = new Map<string, ExternalRef>();
  for (const f of readFields(graph?.bytes ?? new Uint8Array(0))) {
    if (f.no !== GRAPH_INITIALIZER) continue;
    const { name, external } = tensorRef(readFields(f.bytes!));
    if (external) out.set(name, external);
  }
  return out;
}

function readRange(path: string, offset: number, length: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(length);
    readExactly(fd, buf, offset, `${path} (${length} bytes at ${offset})`);
    return buf;
  } finally {
    closeSync(fd);
  }
}

/** Whether two ranges of two files hold the same bytes (read 16 MiB at a time). */
function sameBytes(a: string, aOffset: number, b: string, bOffset: number, length: number) {
  const step = 16 * 2 ** 20;
  for (let at = 0; at < length; at += step) {
    const n = Math.min(step, length - at);
    if (!readRange(a, aOffset + at, n).equals(readRange(b, bOffset + at, n))) return false;
  }
  return true;
}

/** The TensorProto with its external data moved: to the original's place, or inline. */
function relocated(fields: WireField[], target: ExternalRef | Uint8Array): WireField[] {
  const kept = fields.filter(
    (f) =>
      f.no !== TENSOR_EXTERNAL_DATA && f.no !== TENSOR_DATA_LOCATION && f.no !== TENSOR_RAW_DATA,
  );
  if (target instanceof Uint8Array) return [...kept, wire.bytes(TENSOR_RAW_DATA, target)];
  const entry = (key: string, value: string) =>
    wire.message(TENSOR_EXTERNAL_DATA, [
      wire.string(ENTRY_KEY, key),
      wire.string(ENTRY_VALUE, value),
    ]);
  return [
    ...kept,
    entry('location', target.location),
    entry('offset', String(target.offset)),
    entry('length', String(target.length)),
    wire.int(TENSOR_DATA_LOCATION, EXTERNAL),
  ];
}

/**
 * Optimises `onnxPath` with onnxruntime-node and writes the result to `outPath` (same folder),
 * its initializers pointing at the original's bytes wherever they are unchanged. Returns
 * `prepared: false` with the reason when the optimiser produced a large new initializer (which
 * would need a data file of its own); nothing is written then.
 */
export async function prepareGraphForWasm(
  ort: OrtOptimizer,
  onnxPath: string,
  outPath: string,
): Promise<PrepareResult> {
  const work = mkdtempSync(join(tmpdir(), 'clef-prepare-'));
  try {
    const optimised = join(work, 'optimised.onnx');
    const session = await ort.InferenceSession.create(onnxPath, {
      executionProviders: [NODE_CPU.executionProvider],
      graphOptimizationLevel: 'extended',
      optimizedModelFilePath: optimised,
      intraOpNumThreads: 1,
      extra: {
        session: {
          optimized_model_external_initializers_file_name: 'optimised.data',
          optimized_model_external_initializers_min_size_in_bytes: '1024',
        },
      },
    });
    await session.release();
    const original = externalInitializers(readFileSync(onnxPath));
    const sourceDir = dirname(onnxPath);
    const model = readFields(readFileSync(optimised));
    let inlined = 0;
    let shared = 0;
    const rewritten: WireField[] = [];
    for (const field of model) {
      if (field.no !== MODEL_GRAPH) {
        rewritten.push(field);
        continue;
      }
      const graph: WireField[] = [];
      for (const g of readFields(field.bytes!)) {
        if (g.no !== GRAPH_INITIALIZER) {
          graph.push(g);
          continue;
        }
        const tensor = readFields(g.bytes!);
        const { name, external } = tensorRef(tensor);
        if (!external) {
          graph.push(g);
          continue;
        }
        const own = join(work, external.location);
        const was = original.get(name);
        if (
          was &&
          was.length === external.length &&
          sameBytes(join(sourceDir, was.location), was.offset, own, external.offset, was.length)
        ) {
          graph.push(wire.message(GRAPH_INITIALIZER, relocated(tensor, was)));
          shared++;
        } else if (external.length <= PREPARED_INLINE_LIMIT_BYTES) {
          const bytes = readRange(own, external.offset, external.length);
          graph.push(wire.message(GRAPH_INITIALIZER, relocated(tensor, bytes)));
          inlined++;
        } else {
          return {
            prepared: false,
            reason: `the optimiser made a new ${external.length}-byte initializer ${name}`,
          };
        }
      }
      rewritten.push(wire.message(MODEL_GRAPH, graph));
    }
    writeFileSync(outPath, writeFields(rewritten));
    return { prepared: true, onnxPath: outPath, inlined, shared };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** `backbone.onnx` → `backbone.wasm.onnx`. */
export function preparedPath(onnxPath: string): string {
  return onnxPath.replace(/\.onnx$/, '.wasm.onnx');
}
