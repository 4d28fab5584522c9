/**
 * Protobuf's wire format, field by field, without a schema: enough to read an ONNX file that
 * another tool wrote (onnxruntime's optimised graphs) and rewrite a few fields of it, keeping
 * every other byte as it was. proto.ts writes ONNX from our own structures; this reads any.
 */

/** One field as it sits on the wire: its number, wire type and encoded value. */
export interface WireField {
  no: number;
  /** 0 varint, 1 fixed 64-bit, 2 length-delimited, 5 fixed 32-bit. */
  type: 0 | 1 | 2 | 5;
  /** A varint's value (type 0). */
  int?: bigint;
  /** The payload: a length-delimited field's bytes, or a fixed field's 4 or 8 bytes. */
  bytes?: Uint8Array;
}

export class WireFormatError extends Error {
  readonly code = 'wire_format';
  override readonly name = 'WireFormatError';
}

function readVarint(buf: Uint8Array, at: number): [bigint, number] {
  let value = 0n;
  let shift = 0n;
  for (let i = at; i < buf.length; i++) {
    const b = buf[i]!;
    value |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return [value, i + 1];
    shift += 7n;
    if (shift > 63n) break;
  }
  throw new WireFormatError(`bad varint at byte ${at}`);
}

/** The fields of one message, in order (payloads are views into `buf`, not copies). */
export function readFields(buf: Uint8Array): WireField[] {
  const fields: WireField[] = [];
  let at = 0;
  while (at < buf.length) {
    const [tag, next] = readVarint(buf, at);
    const no = Number(tag >> 3n);
    const type = Number(tag & 7n);
    at = next;
    if (type === 0) {
      const [int, after] = readVarint(buf, at);
      fields.push({ no, type, int });
      at = after;
    } else if (type === 2) {
      const [len, after] = readVarint(buf, at);
      const end = after + Number(len);
      if (end > buf.length) throw new WireFormatError(`field ${no} runs past the end`);
      fields.push({ no, type, bytes: buf.subarray(after, end) });
      at = end;
    } else if (type === 1 || type === 5) {
      const end = at + (type === 1 ? 8 : 4);
      if (end > buf.length) throw new WireFormatError(`field ${no} runs past the end`);
      fields.push({ no, type, bytes: buf.subarray(at, end) });
      at = end;
    } else {
      throw new WireFormatError(`wire type ${type} (field ${no}) is not supported`);
    }
  }
  return fields;
}

function varintBytes(value: bigint): number[] {
  const out: number[] = [];
  let v = BigInt.asUintN(64, value);
  do {
    const b = Number(v & 0x7fn);
    v >>= 7n;
    out.push(v === 0n ? b : b | 0x80);
  } while (v !== 0n);
  return out;
}

/** Serialises fields in the order given (readFields' output round-trips byte for byte). */
export function writeFields(fields: readonly WireField[]): Uint8Array {
  const parts: Uint8Array[] = [];
  let total = 0;
  const push = (p: Uint8Array) => {
    parts.push(p);
    total += p.length;
  };
  for (const f of fields) {
    push(Uint8Array.from(varintBytes((BigInt(f.no) << 3n) | BigInt(f.type))));
    if (f.type === 0) {
      push(Uint8Array.from(varintBytes(f.int ?? 0n)));
    } else {
      const bytes = f.bytes ?? new Uint8Array(0);
      if (f.type === 2) push(Uint8Array.from(varintBytes(BigInt(bytes.length))));
      push(bytes);
    }
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

export const wire = {
  string: (no: number, value: string): WireField => ({ no, type: 2, bytes: encoder.encode(value) }),
  bytes: (no: number, bytes: Uint8Array): WireField => ({ no, type: 2, bytes }),
  int: (no: number, value: number | bigint): WireField => ({ no, type: 0, int: BigInt(value) }),
  message: (no: number, fields: readonly WireField[]): WireField => ({
    no,
    type: 2,
    bytes: writeFields(fields),
  }),
  /** A length-delimited field's payload as UTF-8 text. */
  text: (f: WireField | undefined): string | undefined =>
    f?.bytes ? decoder.decode(f.bytes) : undefined,
};
