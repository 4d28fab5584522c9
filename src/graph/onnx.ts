/**
 * Reads an ONNX ModelProto (protobuf, field numbers of onnx.proto) into plain structures
 * (onnx-types.ts): the parts a graph interpreter needs (nodes, attributes, initializers inline or
 * external, graph inputs and outputs, opset imports). Payloads stay views into the file's bytes;
 * nothing is decoded that the interpreter never reads (doc strings, value_info, functions).
 */

import type {
  OnnxAttribute,
  OnnxGraph,
  OnnxModel,
  OnnxNode,
  OnnxTensorProto,
  OnnxValueInfo,
} from './onnx-types.js';

export class OnnxFormatError extends Error {
  readonly code = 'onnx_format';
  override readonly name = 'OnnxFormatError';
}

const text = new TextDecoder();

/** A cursor over one message's bytes. */
class Reader {
  at = 0;
  constructor(readonly buf: Uint8Array) {}

  get done(): boolean {
    return this.at >= this.buf.length;
  }

  /**
   * A varint as a number (int64 semantics: a negative one is ten bytes of two's complement).
   * Values beyond 2^53 lose precision; they only ever stand for "to the end" in a Slice.
   */
  varint(): number {
    const start = this.at;
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 7; i++) {
      if (this.at >= this.buf.length) throw new OnnxFormatError('truncated varint');
      const b = this.buf[this.at++]!;
      result += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) return result;
      scale *= 128;
    }
    this.at = start;
    return Number(this.varintBig());
  }

  /** A varint as a signed 64-bit bigint (int64 data). */
  varintBig(): bigint {
    let result = 0n;
    let shift = 0n;
    for (let i = 0; i < 10; i++) {
      if (this.at >= this.buf.length) throw new OnnxFormatError('truncated varint');
      const b = this.buf[this.at++]!;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) break;
      shift += 7n;
    }
    return BigInt.asIntN(64, result);
  }

  /** The next field's number and wire type. */
  tag(): [number, number] {
    const t = this.varint();
    return [Math.floor(t / 8), t & 7];
  }

  bytes(): Uint8Array {
    const n = this.varint();
    const end = this.at + n;
    if (n < 0 || end > this.buf.length) throw new OnnxFormatError('field runs past its message');
    const out = this.buf.subarray(this.at, end);
    this.at = end;
    return out;
  }

  string(): string {
    return text.decode(this.bytes());
  }

  float32(): number {
    const end = this.at + 4;
    if (end > this.buf.length) throw new OnnxFormatError('truncated float');
    const v = new DataView(this.buf.buffer, this.buf.byteOffset + this.at, 4).getFloat32(0, true);
    this.at = end;
    return v;
  }

  skip(type: number): void {
    if (type === 0) this.varint();
    else if (type === 1) this.at += 8;
    else if (type === 2) this.bytes();
    else if (type === 5) this.at += 4;
    else throw new OnnxFormatError(`wire type ${type} is not supported`);
    if (this.at > this.buf.length) throw new OnnxFormatError('field runs past its message');
  }

  /** A repeated varint field, packed (type 2) or one element (type 0). */
  repeatedInts(type: number, into: number[]): void {
    if (type === 0) {
      into.push(this.varint());
      return;
    }
    const inner = new Reader(this.bytes());
    while (!inner.done) into.push(inner.varint());
  }
}

function readTensor(buf: Uint8Array): OnnxTensorProto {
  const r = new Reader(buf);
  const t: OnnxTensorProto = { name: '', dataType: 0, dims: [] };
  const external = new Map<string, string>();
  let externalLocation = false;
  while (!r.done) {
    const [no, type] = r.tag();
    switch (no) {
      case 1:
        r.repeatedInts(type, t.dims);
        break;
      case 2:
        t.dataType = r.varint();
        break;
      case 4: {
        t.floats ??= [];
        if (type === 5) t.floats.push(r.float32());
        else {
          const inner = new Reader(r.bytes());
          while (!inner.done) t.floats.push(inner.float32());
        }
        break;
      }
      case 5:
        t.int32s ??= [];
        r.repeatedInts(type, t.int32s);
        break;
      case 7: {
        t.int64s ??= [];
        if (type === 0) t.int64s.push(r.varintBig());
        else {
          const inner = new Reader(r.bytes());
          while (!inner.done) t.int64s.push(inner.varintBig());
        }
        break;
      }
      case 8:
        t.name = r.string();
        break;
      case 9:
        t.raw = r.bytes();
        break;
      case 13: {
        const entry = new Reader(r.bytes());
        let key = '';
        let value = '';
        while (!entry.done) {
          const [k, kt] = entry.tag();
          if (k === 1) key = entry.string();
          else if (k === 2) value = entry.string();
          else entry.skip(kt);
        }
        external.set(key, value);
        break;
      }
      case 14:
        externalLocation = r.varint() === 1;
        break;
      default:
        r.skip(type);
    }
  }
  if (externalLocation) {
    const location = external.get('location');
    if (location === undefined)
      throw new OnnxFormatError(`${t.name}: external data without a location`);
    const length = external.get('length');
    t.external = {
      location,
      offset: Number(external.get('offset') ?? 0),
      length: length === undefined ? null : Number(length),
    };
  }
  return t;
}

function readAttribute(buf: Uint8Array): [string, OnnxAttribute] {
  const r = new Reader(buf);
  let name = '';
  let type = 0;
  let f = 0;
  let i = 0;
  let s = '';
  let t: OnnxTensorProto | null = null;
  const floats: number[] = [];
  const ints: number[] = [];
  const strings: string[] = [];
  while (!r.done) {
    const [no, wt] = r.tag();
    switch (no) {
      case 1:
        name = r.string();
        break;
      case 2:
        f = r.float32();
        break;
      case 3:
        i = r.varint();
        break;
      case 4:
        s = r.string();
        break;
      case 5:
        t = readTensor(r.bytes());
        break;
      case 7:
        if (wt === 5) floats.push(r.float32());
        else {
          const inner = new Reader(r.bytes());
          while (!inner.done) floats.push(inner.float32());
        }
        break;
      case 8:
        r.repeatedInts(wt, ints);
        break;
      case 9:
        strings.push(r.string());
        break;
      case 20:
        type = r.varint();
        break;
      default:
        r.skip(wt);
    }
  }
  switch (type) {
    case 1:
      return [name, { kind: 'float', value: f }];
    case 2:
      return [name, { kind: 'int', value: i }];
    case 3:
      return [name, { kind: 'string', value: s }];
    case 4:
      if (!t) throw new OnnxFormatError(`attribute ${name}: tensor missing`);
      return [name, { kind: 'tensor', value: t }];
    case 5:
      return [name, { kind: 'graph' }];
    case 6:
      return [name, { kind: 'floats', value: floats }];
    case 7:
      return [name, { kind: 'ints', value: ints }];
    case 8:
      return [name, { kind: 'strings', value: strings }];
    default:
      throw new OnnxFormatError(`attribute ${name}: type ${type} is not supported`);
  }
}

function readNode(buf: Uint8Array): OnnxNode {
  const r = new Reader(buf);
  const node: OnnxNode = {
    opType: '',
    domain: '',
    name: '',
    inputs: [],
    outputs: [],
    attributes: new Map(),
  };
  while (!r.done) {
    const [no, type] = r.tag();
    if (no === 1) node.inputs.push(r.string());
    else if (no === 2) node.outputs.push(r.string());
    else if (no === 3) node.name = r.string();
    else if (no === 4) node.opType = r.string();
    else if (no === 7) node.domain = r.string();
    else if (no === 5) {
      const [name, value] = readAttribute(r.bytes());
      node.attributes.set(name, value);
    } else r.skip(type);
  }
  if (node.domain === 'ai.onnx') node.domain = '';
  return node;
}

function readValueInfo(buf: Uint8Array): OnnxValueInfo {
  const r = new Reader(buf);
  const info: OnnxValueInfo = { name: '', elemType: 0, shape: null };
  while (!r.done) {
    const [no, type] = r.tag();
    if (no === 1) info.name = r.string();
    else if (no === 2) {
      const typeProto = new Reader(r.bytes());
      while (!typeProto.done) {
        const [tn, tt] = typeProto.tag();
        if (tn !== 1) {
          typeProto.skip(tt);
          continue;
        }
        const tensor = new Reader(typeProto.bytes());
        while (!tensor.done) {
          const [en, et] = tensor.tag();
          if (en === 1) info.elemType = tensor.varint();
          else if (en === 2) {
            info.shape = [];
            const shape = new Reader(tensor.bytes());
            while (!shape.done) {
              const [sn, st] = shape.tag();
              if (sn !== 1) {
                shape.skip(st);
                continue;
              }
              const dim = new Reader(shape.bytes());
              let d: number | string = '?';
              while (!dim.done) {
                const [dn, dt] = dim.tag();
                if (dn === 1) d = dim.varint();
                else if (dn === 2) d = dim.string();
                else dim.skip(dt);
              }
              info.shape.push(d);
            }
          } else tensor.skip(et);
        }
      }
    } else r.skip(type);
  }
  return info;
}

function readGraph(buf: Uint8Array): OnnxGraph {
  const r = new Reader(buf);
  const graph: OnnxGraph = { name: '', nodes: [], initializers: [], inputs: [], outputs: [] };
  while (!r.done) {
    const [no, type] = r.tag();
    if (no === 1) graph.nodes.push(readNode(r.bytes()));
    else if (no === 2) graph.name = r.string();
    else if (no === 5) graph.initializers.push(readTensor(r.bytes()));
    else if (no === 11) graph.inputs.push(readValueInfo(r.bytes()));
    else if (no === 12) graph.outputs.push(readValueInfo(r.bytes()));
    else if (no === 15) throw new OnnxFormatError('sparse initializers are not supported');
    else r.skip(type);
  }
  return graph;
}

/** Parses an .onnx file's bytes. */
export function readOnnxModel(bytes: Uint8Array): OnnxModel {
  const r = new Reader(bytes);
  let graph: OnnxGraph | null = null;
  let irVersion = 0;
  const opsets = new Map<string, number>();
  const metadata = new Map<string, string>();
  try {
    while (!r.done) {
      const [no, type] = r.tag();
      if (no === 1) irVersion = r.varint();
      else if (no === 7) graph = readGraph(r.bytes());
      else if (no === 8) {
        const op = new Reader(r.bytes());
        let domain = '';
        let version = 0;
        while (!op.done) {
          const [on, ot] = op.tag();
          if (on === 1) domain = op.string();
          else if (on === 2) version = op.varint();
          else op.skip(ot);
        }
        opsets.set(domain === 'ai.onnx' ? '' : domain, version);
      } else if (no === 14) {
        const entry = new Reader(r.bytes());
        let key = '';
        let value = '';
        while (!entry.done) {
          const [en, et] = entry.tag();
          if (en === 1) key = entry.string();
          else if (en === 2) value = entry.string();
          else entry.skip(et);
        }
        metadata.set(key, value);
      } else r.skip(type);
    }
  } catch (e) {
    if (e instanceof OnnxFormatError) throw e;
    throw new OnnxFormatError(`not an ONNX model: ${(e as Error).message}`);
  }
  if (!graph) throw new OnnxFormatError('not an ONNX model: no graph');
  return { irVersion, opsets, graph, metadata };
}
