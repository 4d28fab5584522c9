/**
 * A small, dependency-free protobuf encoder for the parts of ONNX's `onnx.proto` a converter
 * writes: ModelProto, GraphProto, NodeProto, AttributeProto, TensorProto (inline or external
 * data), ValueInfoProto/TypeProto and OperatorSetIdProto. Encode only: nothing here parses.
 *
 * Field numbers follow onnx.proto (proto2). Repeated scalars are written packed, which every
 * conforming protobuf parser (onnxruntime's included) accepts.
 */

/** TensorProto.DataType values used here. */
export const DataType = {
  FLOAT: 1,
  UINT8: 2,
  INT8: 3,
  INT32: 6,
  INT64: 7,
  BOOL: 9,
  FLOAT16: 10,
  DOUBLE: 11,
  UINT32: 12,
  BFLOAT16: 16,
} as const;
export type DataTypeCode = (typeof DataType)[keyof typeof DataType];

/** Bytes per element of each data type (all fixed-size). */
export const DATA_TYPE_BYTES: Record<DataTypeCode, number> = {
  1: 4, 2: 1, 3: 1, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4, 16: 2,
}; // prettier-ignore

/** One symbolic (string) or fixed (number) dimension. */
export type Dim = number | string;

export interface ValueInfo {
  name: string;
  elemType: DataTypeCode;
  /** Omit for a tensor of unknown rank. */
  shape?: Dim[];
}

/** Where a tensor's bytes live when they are not inline. */
export interface ExternalLocation {
  /** File name relative to the .onnx file. */
  location: string;
  offset: number;
  length: number;
}

export interface TensorData {
  name: string;
  dataType: DataTypeCode;
  dims: number[];
  /** Little-endian raw bytes (inline), or where they are in a side file. */
  raw?: Uint8Array;
  external?: ExternalLocation;
}

export type AttributeValue =
  | { kind: 'float'; value: number }
  | { kind: 'int'; value: number | bigint }
  | { kind: 'string'; value: string }
  | { kind: 'tensor'; value: TensorData }
  | { kind: 'graph'; value: GraphData }
  | { kind: 'floats'; value: number[] }
  | { kind: 'ints'; value: Array<number | bigint> }
  | { kind: 'strings'; value: string[] };

export interface NodeData {
  opType: string;
  inputs: string[];
  outputs: string[];
  name?: string;
  domain?: string;
  attributes?: Record<string, AttributeValue>;
}

export interface GraphData {
  name: string;
  nodes: NodeData[];
  inputs: ValueInfo[];
  outputs: ValueInfo[];
  initializers: TensorData[];
  valueInfo?: ValueInfo[];
}

export interface OpsetImport {
  domain: string;
  version: number;
}

export interface ModelData {
  irVersion: number;
  opsets: OpsetImport[];
  producerName?: string;
  producerVersion?: string;
  docString?: string;
  graph: GraphData;
  metadata?: Record<string, string>;
}

// AttributeProto.AttributeType
const ATTR_TYPE = {
  float: 1,
  int: 2,
  string: 3,
  tensor: 4,
  graph: 5,
  floats: 6,
  ints: 7,
  strings: 8,
};

const textEncoder = new TextEncoder();

/** Growable byte buffer with the protobuf wire primitives. */
class ProtoWriter {
  private buf = new Uint8Array(256);
  private len = 0;

  private reserve(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.len + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }

  /** Unsigned varint; negative int64 values go out as 10-byte two's complement. */
  varint(value: number | bigint): void {
    let v = BigInt.asUintN(64, BigInt(value));
    this.reserve(10);
    while (v >= 0x80n) {
      this.buf[this.len++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buf[this.len++] = Number(v);
  }

  tag(field: number, wireType: number): void {
    this.varint((field << 3) | wireType);
  }

  bytes(data: Uint8Array): void {
    this.reserve(data.length);
    this.buf.set(data, this.len);
    this.len += data.length;
  }

  float32(value: number): void {
    this.reserve(4);
    new DataView(this.buf.buffer, this.len, 4).setFloat32(0, value, true);
    this.len += 4;
  }

  /** Field of wire type 2 (length-delimited). */
  lengthDelimited(field: number, data: Uint8Array): void {
    this.tag(field, 2);
    this.varint(data.length);
    this.bytes(data);
  }

  string(field: number, value: string): void {
    this.lengthDelimited(field, textEncoder.encode(value));
  }

  int(field: number, value: number | bigint): void {
    this.tag(field, 0);
    this.varint(value);
  }

  packedInts(field: number, values: ReadonlyArray<number | bigint>): void {
    const inner = new ProtoWriter();
    for (const v of values) inner.varint(v);
    this.lengthDelimited(field, inner.finish());
  }

  message(field: number, encode: (w: ProtoWriter) => void): void {
    const inner = new ProtoWriter();
    encode(inner);
    this.lengthDelimited(field, inner.finish());
  }

  finish(): Uint8Array {
    return this.buf.slice(0, this.len);
  }
}

function writeTensor(w: ProtoWriter, t: TensorData): void {
  if (t.dims.length > 0) w.packedInts(1, t.dims);
  w.int(2, t.dataType);
  w.string(8, t.name);
  if (t.external !== undefined) {
    const ext = t.external;
    const entries: Array<[string, string]> = [
      ['location', ext.location],
      ['offset', String(ext.offset)],
      ['length', String(ext.length)],
    ];
    for (const [key, value] of entries) {
      w.message(13, (e) => {
        e.string(1, key);
        e.string(2, value);
      });
    }
    w.int(14, 1); // data_location = EXTERNAL
  } else {
    w.lengthDelimited(9, t.raw ?? new Uint8Array(0));
  }
}

function writeValueInfo(w: ProtoWriter, v: ValueInfo): void {
  w.string(1, v.name);
  w.message(2, (type) => {
    type.message(1, (tensor) => {
      tensor.int(1, v.elemType);
      if (v.shape !== undefined) {
        const shape = v.shape;
        tensor.message(2, (s) => {
          for (const d of shape) {
            s.message(1, (dim) => {
              if (typeof d === 'number') dim.int(1, d);
              else dim.string(2, d);
            });
          }
        });
      }
    });
  });
}

function writeAttribute(w: ProtoWriter, name: string, a: AttributeValue): void {
  w.string(1, name);
  switch (a.kind) {
    case 'float':
      w.tag(2, 5);
      w.float32(a.value);
      break;
    case 'int':
      w.int(3, a.value);
      break;
    case 'string':
      w.string(4, a.value);
      break;
    case 'tensor':
      w.message(5, (t) => writeTensor(t, a.value));
      break;
    case 'graph':
      w.message(6, (g) => writeGraph(g, a.value));
      break;
    case 'floats': {
      const inner = new ProtoWriter();
      for (const f of a.value) inner.float32(f);
      w.lengthDelimited(7, inner.finish());
      break;
    }
    case 'ints':
      w.packedInts(8, a.value);
      break;
    case 'strings':
      for (const s of a.value) w.string(9, s);
      break;
  }
  w.int(20, ATTR_TYPE[a.kind]);
}

function writeNode(w: ProtoWriter, n: NodeData): void {
  for (const i of n.inputs) w.string(1, i);
  for (const o of n.outputs) w.string(2, o);
  if (n.name !== undefined) w.string(3, n.name);
  w.string(4, n.opType);
  for (const [name, attr] of Object.entries(n.attributes ?? {})) {
    w.message(5, (a) => writeAttribute(a, name, attr));
  }
  if (n.domain !== undefined && n.domain !== '') w.string(7, n.domain);
}

function writeGraph(w: ProtoWriter, g: GraphData): void {
  for (const n of g.nodes) w.message(1, (m) => writeNode(m, n));
  w.string(2, g.name);
  for (const t of g.initializers) w.message(5, (m) => writeTensor(m, t));
  for (const v of g.inputs) w.message(11, (m) => writeValueInfo(m, v));
  for (const v of g.outputs) w.message(12, (m) => writeValueInfo(m, v));
  for (const v of g.valueInfo ?? []) w.message(13, (m) => writeValueInfo(m, v));
}

/** Serialises a ModelProto. */
export function encodeModel(model: ModelData): Uint8Array {
  const w = new ProtoWriter();
  w.int(1, model.irVersion);
  if (model.producerName !== undefined) w.string(2, model.producerName);
  if (model.producerVersion !== undefined) w.string(3, model.producerVersion);
  if (model.docString !== undefined) w.string(6, model.docString);
  w.message(7, (g) => writeGraph(g, model.graph));
  for (const op of model.opsets) {
    w.message(8, (o) => {
      if (op.domain !== '') o.string(1, op.domain);
      o.int(2, op.version);
    });
  }
  for (const [key, value] of Object.entries(model.metadata ?? {})) {
    w.message(14, (e) => {
      e.string(1, key);
      e.string(2, value);
    });
  }
  return w.finish();
}

/** Little-endian bytes of a typed array (a view, no copy; this platform is little-endian). */
export function typedBytes(data: ArrayBufferView): Uint8Array {
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}
