/**
 * One ONNX graph made ready to run: parsed, checked op by op (an op, attribute or type the
 * interpreter lacks refuses the whole graph here, before any request), sorted, its constant
 * subgraphs computed once (the float16 head weights' Casts), its weights packed for their
 * kernels, and each intermediate value let go after its last use while it runs. The checks and
 * rewrites before the first run are in program-prepare.ts.
 *
 * One rewrite keeps the numbers onnxruntime gives: a float16 linear layer written as
 * Cast(x → float16) · MatMul(float16 weight) · Cast(→ float32) runs as a float32 MatMul on the
 * widened weight. onnxruntime's CPU removes that Cast pair too (so activations are never rounded
 * to float16; docs/onnx-ops.md); only the KV cache's float16 casts round.
 */
import { readOnnxModel } from './onnx.js';
import type { OnnxModel } from './onnx-types.js';
import type { OpImpl, OpNode } from './op-types.js';
import { kernelOf, opImpl, opName } from './ops.js';
import { fuse } from './fuse.js';
import { Tensor, type DType } from './tensor.js';
import {
  checkSupported,
  DTYPES,
  GraphError,
  inferTypes,
  initializerTensor,
  sortNodes,
  UnsupportedOpError,
  widenFloat16Linears,
} from './program-prepare.js';

export { GraphError, UnsupportedOpError };

/** Reads the bytes of an external data file by the location its initializers name. */
export type ExternalData = (location: string) => Uint8Array | Promise<Uint8Array>;

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
