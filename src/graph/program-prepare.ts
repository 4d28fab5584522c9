/**
 * The steps that make an ONNX graph ready to run (program.ts): its ops checked against the
 * interpreter's, its initializers read into tensors, its nodes sorted, its types inferred, and
 * the float16 linear layers widened. Each refuses what it cannot take with the errors below.
 */
import type { OnnxModel, OnnxNode, OnnxTensorProto } from './onnx-types.js';
import { Attributes, type OpNode } from './op-types.js';
import { DEFAULT_OPSETS, MICROSOFT, MICROSOFT_OPSET, opImpl, opName } from './ops.js';
import { allocate, Tensor, widenFloat16, type DType, type TensorData } from './tensor.js';

/** A graph the interpreter refuses: the ops (or attributes, or types) it lacks, by name. */
export class UnsupportedOpError extends Error {
  readonly code = 'unsupported_op';
  constructor(
    /** The graph (its file name). */
    readonly graph: string,
    /** What it lacks, one line each: `com.microsoft.GroupQueryAttention`, ... */
    readonly ops: readonly string[],
    readonly problems: readonly string[],
    /** What to do instead (the caller knows: another device, a package to install). */
    hint = 'it runs the ops docs/onnx-ops.md lists',
  ) {
    super(`${graph}: the js device cannot run ${problems.join('; ')} (${hint})`);
    this.name = 'UnsupportedOpError';
  }
}

/** A graph that does not hold together (a value nobody computes, a cycle, a bad input). */
export class GraphError extends Error {
  readonly code = 'graph_invalid';
  override readonly name = 'GraphError';
}

export const DTYPES: Record<number, DType> = {
  1: 'float32',
  2: 'uint8',
  3: 'int8',
  6: 'int32',
  7: 'int64',
  9: 'bool',
  10: 'float16',
};
const BYTES: Record<DType, number> = {
  float32: 4,
  float16: 2,
  int64: 8,
  int32: 4,
  uint8: 1,
  int8: 1,
  bool: 1,
};

export function checkSupported(model: OnnxModel, label: string): void {
  const problems: string[] = [];
  const ops = new Set<string>();
  const def = model.opsets.get('') ?? 0;
  if (def < DEFAULT_OPSETS.min || def > DEFAULT_OPSETS.max) {
    problems.push(
      `ONNX opset ${def} (${DEFAULT_OPSETS.min} to ${DEFAULT_OPSETS.max} are implemented)`,
    );
  }
  const ms = model.opsets.get(MICROSOFT);
  if (ms !== undefined && ms !== MICROSOFT_OPSET) problems.push(`${MICROSOFT} opset ${ms}`);
  for (const node of model.graph.nodes) {
    if (!opImpl(node.domain, node.opType)) ops.add(opName(node.domain, node.opType));
  }
  for (const op of ops) problems.push(`op ${op}`);
  if (problems.length) throw new UnsupportedOpError(label, [...ops], problems);
}

export function initializerTensor(
  t: OnnxTensorProto,
  files: ReadonlyMap<string, Uint8Array>,
  label: string,
): Tensor {
  const type = DTYPES[t.dataType];
  if (!type)
    throw new UnsupportedOpError(
      label,
      [],
      [`an initializer (${t.name}) of ONNX type ${t.dataType}`],
    );
  const n = t.dims.reduce((a, b) => a * b, 1);
  let bytes: Uint8Array | null = t.raw ?? null;
  if (t.external) {
    const file = files.get(t.external.location)!;
    const length = t.external.length ?? n * BYTES[type];
    const end = t.external.offset + length;
    if (end > file.length) {
      throw new GraphError(`${label}: ${t.name} lies past the end of ${t.external.location}`);
    }
    bytes = file.subarray(t.external.offset, end);
  }
  let data: TensorData;
  if (bytes) {
    if (bytes.length !== n * BYTES[type]) {
      throw new GraphError(`${label}: ${t.name} has ${bytes.length} bytes for ${n} ${type} values`);
    }
    // A copy: aligned for its type, and the file's bytes can be let go after load.
    const copy = bytes.slice().buffer;
    data = view(type, copy);
  } else if (t.floats) data = Float32Array.from(t.floats);
  else if (t.int64s) data = BigInt64Array.from(t.int64s);
  else if (t.int32s) {
    data =
      type === 'float16'
        ? Uint16Array.from(t.int32s)
        : type === 'int32'
          ? Int32Array.from(t.int32s)
          : Uint8Array.from(t.int32s);
  } else data = allocate(type, n);
  return new Tensor(type, t.dims, data);
}

function view(type: DType, buffer: ArrayBuffer): TensorData {
  switch (type) {
    case 'float32':
      return new Float32Array(buffer);
    case 'float16':
      return new Uint16Array(buffer);
    case 'int64':
      return new BigInt64Array(buffer);
    case 'int32':
      return new Int32Array(buffer);
    case 'int8':
      return new Int8Array(buffer);
    default:
      return new Uint8Array(buffer);
  }
}

/** Nodes in an order where every input exists before it is read (Kahn's algorithm). */
export function sortNodes(nodes: readonly OnnxNode[], known: Set<string>, label: string): OpNode[] {
  const ops = nodes.map((n, i): OpNode => ({
    opType: n.opType,
    domain: n.domain,
    name: n.name || n.outputs[0] || `node ${i}`,
    inputs: n.inputs,
    outputs: n.outputs,
    attrs: new Attributes(n.attributes, `${label}: ${n.opType} (${n.name})`),
  }));
  const waiting = new Map<string, number[]>();
  const missing = ops.map((n, i) => {
    let count = 0;
    for (const name of new Set(n.inputs)) {
      if (name === '' || known.has(name)) continue;
      count++;
      waiting.set(name, [...(waiting.get(name) ?? []), i]);
    }
    return count;
  });
  const ready = ops.map((_, i) => i).filter((i) => missing[i] === 0);
  const order: OpNode[] = [];
  while (ready.length) {
    const i = ready.shift()!;
    order.push(ops[i]!);
    for (const out of ops[i]!.outputs) {
      for (const j of waiting.get(out) ?? []) if (--missing[j]! === 0) ready.push(j);
      waiting.delete(out);
    }
  }
  if (order.length !== ops.length) {
    const stuck = ops.filter((_, i) => missing[i]! > 0).map((n) => n.name);
    throw new GraphError(
      `${label}: nodes ${stuck.slice(0, 5).join(', ')} read values nothing computes`,
    );
  }
  return order;
}

export function inferTypes(
  nodes: readonly OpNode[],
  types: Map<string, DType>,
  label: string,
): void {
  const problems = new Set<string>();
  for (const node of nodes) {
    const impl = opImpl(node.domain, node.opType)!;
    let out: DType[] | string;
    try {
      out = impl.types(
        node.inputs.map((n) => (n === '' ? undefined : types.get(n))),
        node,
      );
    } catch (e) {
      out = (e as Error).message;
    }
    if (typeof out === 'string') {
      problems.add(out);
      continue;
    }
    node.outputs.forEach((name, k) => {
      if (name !== '' && out[k]) types.set(name, out[k] as DType);
    });
  }
  if (problems.size) throw new UnsupportedOpError(label, [], [...problems]);
}

/** Cast(x → float16) · MatMul(·, float16 weight) · Cast(→ float32) as one float32 MatMul. */
export function widenFloat16Linears(
  nodes: OpNode[],
  types: ReadonlyMap<string, DType>,
  constants: Map<string, Tensor>,
): OpNode[] {
  const readers = new Map<string, OpNode[]>();
  for (const n of nodes) for (const i of n.inputs) readers.set(i, [...(readers.get(i) ?? []), n]);
  const only = (value: string) => {
    const r = readers.get(value);
    return r && r.length === 1 ? r[0]! : null;
  };
  const drop = new Set<OpNode>();
  const replace = new Map<OpNode, OpNode>();
  for (const cast of nodes) {
    if (cast.opType !== 'Cast' || cast.domain !== '' || cast.attrs.int('to') !== 10) continue;
    if (types.get(cast.inputs[0]!) !== 'float32') continue;
    const matmul = only(cast.outputs[0]!);
    if (!matmul || matmul.opType !== 'MatMul' || matmul.inputs[0] !== cast.outputs[0]) continue;
    const weight = constants.get(matmul.inputs[1]!);
    if (!weight || weight.type !== 'float16') continue;
    const back = only(matmul.outputs[0]!);
    if (!back || back.opType !== 'Cast' || back.attrs.int('to') !== 1) continue;
    const wide = `${matmul.inputs[1]}/float32`;
    if (!constants.has(wide)) {
      constants.set(
        wide,
        new Tensor('float32', weight.dims, widenFloat16(weight.data as Uint16Array)),
      );
    }
    drop.add(cast);
    drop.add(back);
    replace.set(matmul, { ...matmul, inputs: [cast.inputs[0]!, wide], outputs: back.outputs });
  }
  return nodes.filter((n) => !drop.has(n)).map((n) => replace.get(n) ?? n);
}
