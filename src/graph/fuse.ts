/**
 * Rewrites, at load, of the op chains the converter writes for a norm and a SiLU into one kernel
 * each (kernels/fused.ts): one pass over the values instead of six, and no intermediate arrays.
 * A chain is fused only when its intermediate values are read by nothing else.
 *
 *   Mul(x, x) → ReduceMean(axes −1) | ReduceSum(−1) → Add(ε) → Sqrt → Reciprocal → Mul(x, ·)
 *     [→ Mul(·, w), w a constant vector]            = Normalize(x[, w]) {mean|sum, ε}
 *   Mul(x, Sigmoid(x))                              = Silu(x)
 *   Softmax(Add(scores, mask), axis −1)              = AddSoftmax(scores, mask)
 *     (attention's scores and its additive mask: the sum is never stored)
 *   MatMul(AddSoftmax(MatMul(q, kᵀ), mask), v)        = Attention(q, kᵀ, mask, v)
 *     (kernels/attention.ts: only the keys the mask lets through are multiplied)
 */
import { Attributes, type OpNode } from './op-types.js';
import { intsOf, type Tensor } from './tensor.js';

/** The domain of the fused kernels: produced here only, never read from a file. */
export const FUSED = 'clef.fused';

interface Graph {
  nodes: OpNode[];
  constants: ReadonlyMap<string, Tensor>;
  /** Values read from outside the nodes (the graph's outputs): never fused away. */
  keep: ReadonlySet<string>;
}

function fusedNode(
  opType: string,
  inputs: string[],
  output: string,
  attrs: Record<string, { kind: 'int'; value: number } | { kind: 'float'; value: number }>,
): OpNode {
  return {
    opType,
    domain: FUSED,
    name: `${opType}(${output})`,
    inputs,
    outputs: [output],
    attrs: new Attributes(new Map(Object.entries(attrs)), `${FUSED}.${opType}`),
  };
}

export function fuse(graph: Graph): OpNode[] {
  const { constants, keep } = graph;
  const producer = new Map<string, OpNode>();
  const readers = new Map<string, OpNode[]>();
  for (const n of graph.nodes) {
    for (const o of n.outputs) producer.set(o, n);
    for (const i of n.inputs) readers.set(i, [...(readers.get(i) ?? []), n]);
  }
  /** The node that makes `value`, if it is `op` and `value` is read once (by the chain). */
  const only = (value: string, op: string): OpNode | null => {
    const n = producer.get(value);
    if (!n || n.opType !== op || n.domain !== '' || keep.has(value)) return null;
    return readers.get(value)?.length === 1 ? n : null;
  };
  const soleReader = (value: string): OpNode | null => {
    const r = readers.get(value);
    return !keep.has(value) && r?.length === 1 ? r[0]! : null;
  };
  const scalar = (name: string): number | null => {
    const t = constants.get(name);
    return t && t.size === 1 && t.type === 'float32' ? (t.data as Float32Array)[0]! : null;
  };
  const removed = new Set<OpNode>();
  const replaced = new Map<OpNode, OpNode>();

  for (const inv of graph.nodes) {
    // The norm: found from its Reciprocal, walked back to x, then forward to the scale.
    if (inv.opType !== 'Reciprocal' || inv.domain !== '') continue;
    const sqrt = only(inv.inputs[0]!, 'Sqrt');
    const add = sqrt && only(sqrt.inputs[0]!, 'Add');
    if (!add) continue;
    const epsAt = add.inputs.findIndex((i) => scalar(i) !== null);
    if (epsAt < 0) continue;
    const eps = scalar(add.inputs[epsAt]!)!;
    const red = producer.get(add.inputs[1 - epsAt]!);
    if (!red || red.domain !== '' || readers.get(red.outputs[0]!)?.length !== 1) continue;
    let mean: boolean;
    if (red.opType === 'ReduceMean') {
      if (red.attrs.ints('axes', []).join() !== '-1') continue;
      mean = true;
    } else if (red.opType === 'ReduceSum') {
      const axes = constants.get(red.inputs[1] ?? '');
      if (!axes || intsOf(axes).join() !== '-1') continue;
      mean = false;
    } else continue;
    if (red.attrs.int('keepdims', 1) !== 1) continue;
    const sq = only(red.inputs[0]!, 'Mul');
    if (!sq || sq.inputs[0] !== sq.inputs[1]) continue;
    const x = sq.inputs[0]!;
    const scale = soleReader(inv.outputs[0]!);
    if (!scale || scale.opType !== 'Mul' || scale.domain !== '') continue;
    if (!scale.inputs.includes(x) || !scale.inputs.includes(inv.outputs[0]!)) continue;
    const chain = [sq, red, add, sqrt, inv, scale];
    // A constant weight vector after it joins the kernel.
    let last = scale;
    const inputs = [x];
    const next = soleReader(scale.outputs[0]!);
    if (next && next.opType === 'Mul' && next.domain === '') {
      const w = next.inputs.find((i) => i !== scale.outputs[0]);
      const t = w === undefined ? undefined : constants.get(w);
      if (t && t.type === 'float32' && t.dims.length === 1) {
        inputs.push(w!);
        chain.push(next);
        last = next;
      }
    }
    if (chain.some((n) => removed.has(n) || replaced.has(n))) continue;
    for (const n of chain) removed.add(n);
    removed.delete(last);
    replaced.set(
      last,
      fusedNode('Normalize', inputs, last.outputs[0]!, {
        mean: { kind: 'int', value: mean ? 1 : 0 },
        epsilon: { kind: 'float', value: eps },
      }),
    );
  }

  for (const sig of graph.nodes) {
    if (sig.opType !== 'Sigmoid' || sig.domain !== '' || removed.has(sig)) continue;
    const mul = soleReader(sig.outputs[0]!);
    const x = sig.inputs[0]!;
    if (
      !mul ||
      mul.opType !== 'Mul' ||
      mul.domain !== '' ||
      removed.has(mul) ||
      replaced.has(mul)
    ) {
      continue;
    }
    if (!mul.inputs.includes(x) || !mul.inputs.includes(sig.outputs[0]!)) continue;
    removed.add(sig);
    replaced.set(mul, fusedNode('Silu', [x], mul.outputs[0]!, {}));
  }

  for (const softmax of graph.nodes) {
    if (softmax.opType !== 'Softmax' || softmax.domain !== '') continue;
    if (softmax.attrs.int('axis', -1) !== -1) continue;
    const add = only(softmax.inputs[0]!, 'Add');
    if (!add || removed.has(add) || replaced.has(add)) continue;
    removed.add(add);
    replaced.set(softmax, fusedNode('AddSoftmax', add.inputs, softmax.outputs[0]!, {}));
  }

  const fused = graph.nodes.filter((n) => !removed.has(n)).map((n) => replaced.get(n) ?? n);
  return fuseAttention(fused, graph);
}

/** MatMul(AddSoftmax(MatMul(q, kᵀ), mask), v) → Attention(q, kᵀ, mask, v). */
function fuseAttention(nodes: OpNode[], graph: Graph): OpNode[] {
  const producer = new Map<string, OpNode>();
  const readers = new Map<string, number>();
  for (const n of nodes) {
    for (const o of n.outputs) producer.set(o, n);
    for (const i of n.inputs) readers.set(i, (readers.get(i) ?? 0) + 1);
  }
  const single = (value: string) => readers.get(value) === 1 && !graph.keep.has(value);
  const runtime = (value: string) => !graph.constants.has(value);
  const removed = new Set<OpNode>();
  const replaced = new Map<OpNode, OpNode>();
  for (const pv of nodes) {
    if (pv.opType !== 'MatMul' || pv.domain !== '' || !runtime(pv.inputs[1]!)) continue;
    const softmax = producer.get(pv.inputs[0]!);
    if (softmax?.domain !== FUSED || softmax.opType !== 'AddSoftmax') continue;
    if (!single(softmax.outputs[0]!)) continue;
    const qk = producer.get(softmax.inputs[0]!);
    if (!qk || qk.opType !== 'MatMul' || qk.domain !== '' || !single(qk.outputs[0]!)) continue;
    if (!runtime(qk.inputs[1]!)) continue;
    removed.add(qk);
    removed.add(softmax);
    replaced.set(
      pv,
      fusedNode(
        'Attention',
        [qk.inputs[0]!, qk.inputs[1]!, softmax.inputs[1]!, pv.inputs[1]!],
        pv.outputs[0]!,
        {},
      ),
    );
  }
  return nodes.filter((n) => !removed.has(n)).map((n) => replaced.get(n) ?? n);
}
