/**
 * One ONNX graph made ready to run: parsed, checked op by op (an op, attribute or type the
 * interpreter lacks refuses the whole graph here, before any request), sorted, its constant
 * subgraphs computed once (the float16 head weights' Casts), its weights packed for their
 * kernels, and each intermediate value let go after its last use while it runs.
 *
 * One rewrite keeps the numbers onnxruntime gives: a float16 linear layer written as
 * Cast(x → float16) · MatMul(float16 weight) · Cast(→ float32) runs as a float32 MatMul on the
 * widened weight. onnxruntime's CPU removes that Cast pair too (so activations are never rounded
 * to float16; docs/onnx-ops.md); only the KV cache's float16 casts round.
 */
import { readOnnxModel, type OnnxModel, type OnnxNode, type OnnxTensorProto } from './onnx.js';
import { Attributes, type OpImpl, type OpNode } from './op-types.js';
import { DEFAULT_OPSETS, MICROSOFT, MICROSOFT_OPSET, kernelOf, opImpl, opName } from './ops.js';
import { fuse } from './fuse.js';
import { Tensor, widenFloat16, type DType, type TensorData } from './tensor.js';

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

/** Reads the bytes of an external data file by the location its initializers name. */
export type ExternalData = (location: string) => Uint8Array | Promise<Uint8Array>;

const DTYPES: Record<number, DType> = {
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

export interface ProgramOptions {
  /** Fuse the norm and SiLU chains into one kernel each (default true; tests compare both). */
  fuse?: boolean;
}

interface Step {
  node: OpNode;
  impl: OpImpl;
  prepared: unknown;
  /** Values whose last use is this step (freed after it). */
  frees: string[];
}

export interface GraphInput {
  name: string;
  type: DType;
  /** Fixed dims as numbers, symbolic ones as strings; null: any rank. */
  shape: Array<number | string> | null;
}

export class GraphProgram {
  readonly inputs: GraphInput[];
  readonly outputNames: string[];
  readonly metadata: ReadonlyMap<string, string>;
  private readonly constants = new Map<string, Tensor>();
  private readonly steps: Step[] = [];

  /**
   * Parses `bytes`, reads the external data files its initializers name (each once), and makes
   * the program; `label` is what errors call the graph (its file name).
   */
  static async load(
    bytes: Uint8Array,
    external: ExternalData,
    label: string,
    options: ProgramOptions = {},
  ): Promise<GraphProgram> {
    const model = readOnnxModel(bytes);
    checkSupported(model, label);
    const files = new Map<string, Uint8Array>();
    for (const t of model.graph.initializers) {
      const location = t.external?.location;
      if (location !== undefined && !files.has(location))
        files.set(location, await external(location));
    }
    return new GraphProgram(model, files, label, options);
  }

  private constructor(
    model: OnnxModel,
    files: ReadonlyMap<string, Uint8Array>,
    readonly label: string,
    options: ProgramOptions,
  ) {
    this.metadata = model.metadata;
    const g = model.graph;
    for (const t of g.initializers) this.constants.set(t.name, initializerTensor(t, files, label));
    const types = new Map<string, DType>();
    for (const [name, t] of this.constants) types.set(name, t.type);
    this.inputs = g.inputs
      .filter((v) => !this.constants.has(v.name))
      .map((v) => {
        const type = DTYPES[v.elemType];
        if (!type)
          throw new UnsupportedOpError(
            label,
            [],
            [`an input (${v.name}) of ONNX type ${v.elemType}`],
          );
        types.set(v.name, type);
        return { name: v.name, type, shape: v.shape };
      });
    this.outputNames = g.outputs.map((v) => v.name);

    let nodes = sortNodes(g.nodes, new Set(types.keys()), label);
    inferTypes(nodes, types, label);
    nodes = widenFloat16Linears(nodes, types, this.constants);
    nodes = this.fold(nodes, label);
    if (options.fuse !== false) {
      nodes = fuse({ nodes, constants: this.constants, keep: new Set(this.outputNames) });
    }
    this.plan(nodes);
  }

  /** The kernels it runs, in order, after the load's rewrites (`clef.fused.Attention` ...). */
  get kernels(): string[] {
    return this.steps.map((s) => opName(s.node.domain, s.node.opType));
  }

  /** Runs the graph; every input must be fed, with its declared type and rank. */
  run(feeds: ReadonlyMap<string, Tensor>): Map<string, Tensor> {
    const values = new Map<string, Tensor>();
    for (const i of this.inputs) {
      const t = feeds.get(i.name);
      if (!t) throw new GraphError(`${this.label}: input ${i.name} was not fed`);
      if (t.type !== i.type) {
        throw new GraphError(
          `${this.label}: input ${i.name} is ${t.type}, the graph wants ${i.type}`,
        );
      }
      if (
        i.shape &&
        (t.dims.length !== i.shape.length ||
          i.shape.some((d, k) => typeof d === 'number' && d !== t.dims[k]))
      ) {
        throw new GraphError(
          `${this.label}: input ${i.name} has dims [${t.dims.join(', ')}], the graph wants [${i.shape.join(', ')}]`,
        );
      }
      values.set(i.name, t);
    }
    const get = (name: string): Tensor | undefined =>
      name === '' ? undefined : (values.get(name) ?? this.constants.get(name));
    for (const step of this.steps) {
      const { node } = step;
      let outs: Tensor[];
      try {
        outs = step.impl.run(node.inputs.map(get), node, step.prepared);
      } catch (e) {
        throw new GraphError(
          `${this.label}: ${opName(node.domain, node.opType)} (${node.name}) failed: ${(e as Error).message}`,
        );
      }
      node.outputs.forEach((name, k) => {
        if (name !== '') values.set(name, outs[k]!);
      });
      for (const name of step.frees) values.delete(name);
    }
    const out = new Map<string, Tensor>();
    for (const name of this.outputNames) {
      const t = get(name);
      if (!t) throw new GraphError(`${this.label}: output ${name} was not computed`);
      out.set(name, t);
    }
    return out;
  }

  /** Computes once every node whose inputs are all constants; returns the others. */
  private fold(nodes: OpNode[], label: string): OpNode[] {
    const kept: OpNode[] = [];
    for (const node of nodes) {
      const ins = node.inputs.filter((n) => n !== '');
      if (ins.length === 0 || !ins.every((n) => this.constants.has(n))) {
        kept.push(node);
        continue;
      }
      const impl = opImpl(node.domain, node.opType)!;
      let outs: Tensor[];
      try {
        const inputs = node.inputs.map((n) => (n === '' ? undefined : this.constants.get(n)));
        outs = impl.run(inputs, node, impl.prepare?.(node, inputs));
      } catch (e) {
        throw new GraphError(
          `${label}: ${node.opType} (${node.name}) failed on constants: ${(e as Error).message}`,
        );
      }
      node.outputs.forEach((name, k) => {
        if (name !== '') this.constants.set(name, outs[k]!);
      });
    }
    // Constants only the folded nodes read are let go.
    const used = new Set([...kept.flatMap((n) => n.inputs), ...this.outputNames]);
    for (const name of [...this.constants.keys()]) if (!used.has(name)) this.constants.delete(name);
    return kept;
  }

  private plan(nodes: OpNode[]): void {
    const lastUse = new Map<string, number>();
    nodes.forEach((n, i) => n.inputs.forEach((name) => lastUse.set(name, i)));
    const keep = new Set([...this.outputNames, ...this.constants.keys()]);
    const frees: string[][] = nodes.map(() => []);
    for (const [name, i] of lastUse) if (!keep.has(name) && name !== '') frees[i]!.push(name);
    // A value no node reads (an unused output) is freed right after it is made.
    nodes.forEach((n, i) => {
      for (const o of n.outputs) if (o !== '' && !lastUse.has(o) && !keep.has(o)) frees[i]!.push(o);
    });
    nodes.forEach((node, i) => {
      const impl = kernelOf(node.domain, node.opType)!;
      const constants = node.inputs.map((n) => this.constants.get(n));
      const prepared =
        impl.prepare && constants.some(Boolean) ? impl.prepare(node, constants) : undefined;
      this.steps.push({ node, impl, prepared, frees: frees[i]! });
    });
    // A weight its kernel packed is kept only in its packed form, unless something else reads it.
    const readRaw = new Set<string>(this.outputNames);
    this.steps.forEach((s) =>
      s.node.inputs.forEach((n, k) => {
        if (s.prepared === undefined || !s.impl.packs?.includes(k)) readRaw.add(n);
      }),
    );
    for (const name of [...this.constants.keys()])
      if (!readRaw.has(name)) this.constants.delete(name);
  }
}

function checkSupported(model: OnnxModel, label: string): void {
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

function initializerTensor(
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
  } else data = view(type, new ArrayBuffer(n * BYTES[type]));
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
function sortNodes(nodes: readonly OnnxNode[], known: Set<string>, label: string): OpNode[] {
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

function inferTypes(nodes: readonly OpNode[], types: Map<string, DType>, label: string): void {
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
function widenFloat16Linears(
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
