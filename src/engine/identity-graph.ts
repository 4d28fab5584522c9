/**
 * A one-node ONNX model (`y = Identity(x)`, float32 [1]), encoded here by hand: creating a
 * session on it makes onnxruntime-web fetch, compile and instantiate its wasm and start its back
 * end, before (and while) the package downloads. Pure bytes, no runtime import.
 */

function varint(n: number): number[] {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return out;
}

/** Field `no` as a varint (wire type 0). */
const int = (no: number, value: number): number[] => [...varint(no << 3), ...varint(value)];
/** Field `no` as length-delimited bytes (wire type 2): a string or a nested message. */
const bytes = (no: number, payload: number[]): number[] => [
  ...varint((no << 3) | 2),
  ...varint(payload.length),
  ...payload,
];
const str = (no: number, s: string): number[] => bytes(no, [...new TextEncoder().encode(s)]);

/** ValueInfoProto { name, type: TypeProto { tensor_type { elem_type FLOAT, shape [1] } } }. */
const floatVector = (name: string): number[] => [
  ...str(1, name),
  ...bytes(2, bytes(1, [...int(1, 1), ...bytes(2, bytes(1, int(1, 1)))])),
];

const graph: number[] = [
  // NodeProto { input "x", output "y", op_type "Identity" }
  ...bytes(1, [...str(1, 'x'), ...str(2, 'y'), ...str(4, 'Identity')]),
  ...str(2, 'clef-web-runtime-start'),
  ...bytes(11, floatVector('x')),
  ...bytes(12, floatVector('y')),
];

/** ModelProto { ir_version 8, graph, opset_import { domain "", version 13 } }. */
export const IDENTITY_GRAPH: Uint8Array = new Uint8Array([
  ...int(1, 8),
  ...bytes(7, graph),
  ...bytes(8, [...str(1, ''), ...int(2, 13)]),
]);
