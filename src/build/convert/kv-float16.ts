/**
 * The backbone graph with its KV cache in float16: each full-attention layer's past key/value
 * come in as float16, the chunk's new keys/values are rounded to float16 and appended there
 * (Concat in float16), the result is the float16 present output, and attention reads it cast
 * back to float32. Everything else stays float32. The state a long context holds between runs
 * (and in the prefix cache) halves, and so does the live KV while a run appends to it, since no
 * float32 copy of the past is ever made. Rounding is IEEE round-to-nearest-even (onnxruntime's
 * Cast), applied once to every key and value.
 */
import { DataType, type GraphData, type NodeData } from '../onnx/proto.js';

const cast = (name: string, from: string, to: string, type: number): NodeData => ({
  opType: 'Cast',
  inputs: [from],
  outputs: [to],
  name,
  attributes: { to: { kind: 'int', value: type } },
});

/** `kv.inputs[k]` is the past whose Concat makes `kv.outputs[k]` (past_key.3 → present_key.3). */
export function withFloat16Kv(
  graph: GraphData,
  kv: { inputs: readonly string[]; outputs: readonly string[] },
): GraphData {
  if (kv.inputs.length !== kv.outputs.length) throw new Error('KV inputs and outputs differ');
  const taken = new Set(graph.nodes.flatMap((n) => [...n.outputs, n.name ?? '']));
  const fresh = (hint: string): string => {
    let name = hint;
    for (let k = 1; taken.has(name); k++) name = `${hint}_${k}`;
    taken.add(name);
    return name;
  };
  const wide = new Map<string, string>(); // present_key.3 → its float32 copy, for attention
  const nodes: NodeData[] = [];
  for (const node of graph.nodes) {
    const k = kv.outputs.indexOf(node.outputs[0] ?? '');
    if (k < 0) {
      nodes.push({ ...node, inputs: node.inputs.map((i) => wide.get(i) ?? i) });
      continue;
    }
    const present = kv.outputs[k] as string;
    const past = kv.inputs[k] as string;
    if (node.opType !== 'Concat' || node.inputs.length !== 2 || node.inputs[0] !== past) {
      throw new Error(`${present} is not Concat(${past}, new): cannot move it to float16`);
    }
    const added = node.inputs[1] as string;
    const narrow = fresh(`${added}/f16`);
    nodes.push(cast(fresh(`${narrow}_cast`), added, narrow, DataType.FLOAT16));
    nodes.push({ ...node, inputs: [past, narrow] });
    const copy = fresh(`${present}/f32`);
    nodes.push(cast(fresh(`${copy}_cast`), present, copy, DataType.FLOAT));
    wide.set(present, copy);
  }
  for (const name of kv.outputs) {
    if (!wide.has(name)) throw new Error(`the graph does not compute ${name}`);
  }
  const half = (names: readonly string[]) => (v: GraphData['inputs'][number]) => {
    if (!names.includes(v.name)) return v;
    if (v.elemType !== DataType.FLOAT) throw new Error(`${v.name} is not float32`);
    return { ...v, elemType: DataType.FLOAT16 };
  };
  return {
    ...graph,
    nodes,
    inputs: graph.inputs.map(half(kv.inputs)),
    outputs: graph.outputs.map(half(kv.outputs)),
  };
}
